import { baseEnvShape, int, loadConfig, ms, optionalUrl, unsetIfEmpty, csv, type Env, secretFilesEnvShape } from '@mcp-fleet/kit';
import { outboundEnvShape } from '@mcp-fleet/outbound';
import { sandboxEnvShape } from '@mcp-fleet/sandbox';
import { z } from 'zod';

export const SERVICE_ID = 'transcriber-mcp';

const MiB = 1024 * 1024;

/** The environment this service reads: the kit's base variables plus its own, each with `.describe()`. */
export const configSchema = z.object({
  ...baseEnvShape,
  ...secretFilesEnvShape,
  ...outboundEnvShape,
  ...sandboxEnvShape,
  BODY_LIMIT: baseEnvShape.BODY_LIMIT.default('40mb').describe(
    'Largest accepted JSON request body (PAYLOAD_TOO_LARGE above it); base64 audio travels in it (TRANSCRIBE_MAX_UPLOAD_BYTES decoded).',
  ),
  TOOL_TIMEOUT_MS: ms(600_000, 1000, 3_600_000).describe(
    'Time limit of one transcription (conversion and every chunk); its engine processes are killed after it.',
  ),
  WORKSPACE_ROOTS: csv([process.cwd()]).describe(
    'Directories transcribe_audio may read file_path from (comma-separated); nothing outside them is read.',
  ),
  TRANSCRIBE_MAX_UPLOAD_BYTES: int(25 * MiB, 1024, 1024 * MiB).describe(
    'Largest audio accepted as base64, multipart upload or workspace file (PAYLOAD_TOO_LARGE above it).',
  ),
  TRANSCRIBE_MAX_URL_BYTES: int(100 * MiB, 1024, 4096 * MiB).describe(
    'Largest body transcribe_url fetches through the outbound client (PAYLOAD_TOO_LARGE above it).',
  ),
  TRANSCRIBE_URL_TIMEOUT_MS: ms(60_000, 100, 600_000).describe('Time limit to fetch a URL, redirects and body included.'),
  TRANSCRIBE_MAX_SECONDS: int(4 * 3600, 1, 24 * 3600).describe('Longest audio transcribed, in seconds (VALIDATION_ERROR above it).'),
  TRANSCRIBE_CHUNK_SECONDS: int(30, 5, 600).describe(
    'Long audio is cut into chunks of about this many seconds (at the quietest point of the last 2 s), transcribed one by one with progress, and joined.',
  ),
  FFMPEG_PATH: z
    .string()
    .min(1)
    .default('ffmpeg')
    .describe('The ffmpeg program (Debian package ffmpeg) that converts any input to 16 kHz mono WAV; missing: NOT_CONFIGURED.'),
  POCKETSPHINX_PATH: z
    .string()
    .min(1)
    .default('pocketsphinx_continuous')
    .describe('The recognizer of the embedded engine (Debian package pocketsphinx); missing: NOT_CONFIGURED.'),
  POCKETSPHINX_MODEL_DIR: z
    .string()
    .min(1)
    .default('/usr/share/pocketsphinx/model/en-us')
    .describe(
      'Folder of the pocketsphinx model (Debian package pocketsphinx-en-us): en-us/ (acoustic), en-us.lm.bin (language model), cmudict-en-us.dict.',
    ),
  STT_URL: optionalUrl().describe(
    'OpenAI-compatible transcription server (whisper.cpp server, hosted APIs): base URL, POST {url}/v1/audio/transcriptions (or the full .../audio/transcriptions address); unset: the embedded ffmpeg + pocketsphinx engine.',
  ),
  STT_API_KEY: unsetIfEmpty(z.string()).describe('Bearer token for STT_URL, if it needs one (never logged).'),
  STT_MODEL: z.string().min(1).default('whisper-1').describe('Model name sent to STT_URL.'),
  STT_TIMEOUT_MS: ms(300_000, 1000, 3_600_000).describe('Time limit of one chunk sent to STT_URL.'),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
