import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { TranscriberDeps } from '../deps';
import { fromBase64, fromWorkspace } from '../inputs';
import { transcribeInput } from '../transcribe';
import { CAPS, languageField } from './shared';

const input = z
  .object({
    file_path: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        'An audio or video file inside the workspace roots (relative paths resolve against the first root); TRANSCRIBE_MAX_UPLOAD_BYTES cap.',
      ),
    audio_base64: z
      .string()
      .min(1)
      .optional()
      .describe('The audio file itself, base64-encoded, instead of file_path (TRANSCRIBE_MAX_UPLOAD_BYTES decoded cap, default 25 MiB).'),
    language: languageField,
  })
  .strict();

export function transcribeAudioTool(deps: TranscriberDeps) {
  return defineTool({
    name: 'transcribe_audio',
    title: 'Transcribe audio',
    description: `Speech to text for a workspace file (file_path) or uploaded bytes (audio_base64; POST /transcribe/audio also takes multipart/form-data with a "file" part). ${CAPS}`,
    input,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    // long work: MCP clients that declared the tasks extension get a task through the gateway
    execution: { taskSupport: 'optional' },
    handler: async (args, ctx) => {
      const given = [args.file_path, args.audio_base64].filter((v) => v !== undefined).length;
      if (given !== 1) {
        throw new AppError('VALIDATION_ERROR', 'Give exactly one of file_path and audio_base64.', {
          details: [{ path: 'file_path', message: given ? 'both given' : 'neither given' }],
        });
      }
      const open = () =>
        args.file_path !== undefined ? fromWorkspace(deps.input, args.file_path) : fromBase64(deps.input, args.audio_base64!);
      return transcribeInput(deps.transcriber, open, args.language, ctx);
    },
  });
}
