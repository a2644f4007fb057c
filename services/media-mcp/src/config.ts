import { baseEnvShape, csv, int, loadConfig, type Env, secretFilesEnvShape } from '@mcp-fleet/kit';
import { outboundEnvShape } from '@mcp-fleet/outbound';
import { sandboxEnvShape } from '@mcp-fleet/sandbox';
import { z } from 'zod';

export const SERVICE_ID = 'media-mcp';

const MiB = 1024 * 1024;

/** The environment this service reads: the kit's base variables plus its own, each with `.describe()`. */
export const configSchema = z.object({
  ...baseEnvShape,
  ...secretFilesEnvShape,
  ...outboundEnvShape,
  ...sandboxEnvShape,
  BODY_LIMIT: baseEnvShape.BODY_LIMIT.default('16mb').describe(
    'Largest accepted request body (PAYLOAD_TOO_LARGE above it); base64 input travels in it (MEDIA_MAX_BASE64_BYTES decoded).',
  ),
  WORKSPACE_ROOTS: csv([process.cwd()]).describe(
    'Directories media may be read from and written to (comma-separated); nothing outside them is read or written.',
  ),
  MEDIA_OUTPUT_DIR: z
    .string()
    .min(1)
    .default('media-output')
    .describe('Folder outputs are written under, relative to the first workspace root (or absolute inside a root); created on demand.'),
  MEDIA_MAX_INPUT_BYTES: int(512 * MiB, 1024, 16 * 1024 * MiB).describe(
    'Largest input file read from the workspace (PAYLOAD_TOO_LARGE above it).',
  ),
  MEDIA_MAX_URL_BYTES: int(100 * MiB, 1024, 4 * 1024 * MiB).describe(
    'Largest body fetched from a URL through the outbound client (PAYLOAD_TOO_LARGE above it).',
  ),
  MEDIA_MAX_BASE64_BYTES: int(10 * MiB, 1024, 256 * MiB).describe('Largest decoded base64 input (PAYLOAD_TOO_LARGE above it).'),
  MEDIA_MAX_PIXELS: int(50_000_000, 1, 1_000_000_000).describe(
    "Largest image, in pixels (width × height), that is decoded: sharp's limitInputPixels; larger images (image bombs) get VALIDATION_ERROR.",
  ),
  MEDIA_URL_TIMEOUT_MS: int(60_000, 100, 600_000).describe('Time limit to fetch a URL input, redirects and body included.'),
  MEDIA_JOB_THRESHOLD_SECONDS: z.coerce
    .number()
    .min(0)
    .max(86_400)
    .default(60)
    .describe('Audio/video work on inputs longer than this (seconds of media) runs as a job; shorter work answers at once.'),
  MEDIA_JOB_CONCURRENCY: int(2, 1, 64).describe('Jobs run at the same time at most; the rest wait in the queue.'),
  MEDIA_JOB_QUEUE_MAX: int(50, 1, 10_000).describe('Jobs waiting at most; a new job beyond it is refused with RATE_LIMITED.'),
  MEDIA_JOB_TIMEOUT_MS: int(30 * 60_000, 1000, 86_400_000).describe(
    'Time limit of one job; its ffmpeg is killed and the job fails with TIMEOUT.',
  ),
  FFMPEG_PATH: z
    .string()
    .min(1)
    .default('ffmpeg')
    .describe('The ffmpeg program (Debian package ffmpeg); a name is looked up on PATH; missing: audio/video tools answer NOT_CONFIGURED.'),
  FFPROBE_PATH: z
    .string()
    .min(1)
    .default('ffprobe')
    .describe(
      'The ffprobe program (Debian package ffmpeg); a name is looked up on PATH; missing: audio/video tools answer NOT_CONFIGURED.',
    ),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
