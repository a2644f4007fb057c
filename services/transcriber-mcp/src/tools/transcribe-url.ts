import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { TranscriberDeps } from '../deps';
import { fromUrl } from '../inputs';
import { transcribeInput } from '../transcribe';
import { CAPS, languageField } from './shared';

const input = z
  .object({
    url: z
      .string()
      .min(1)
      .max(4096)
      .describe(
        'http(s) address of an audio or video file, fetched through the outbound client: private, loopback, link-local and metadata addresses are refused (FORBIDDEN) unless OUTBOUND_ALLOWLIST names them; redirects checked hop by hop; TRANSCRIBE_MAX_URL_BYTES cap (default 100 MiB), TRANSCRIBE_URL_TIMEOUT_MS.',
      ),
    language: languageField,
  })
  .strict();

export function transcribeUrlTool(deps: TranscriberDeps) {
  return defineTool({
    name: 'transcribe_url',
    title: 'Transcribe a URL',
    description: `Speech to text for media at a URL (fetched through the outbound client; private addresses refused). ${CAPS}`,
    input,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    // long work: MCP clients that declared the tasks extension get a task through the gateway
    execution: { taskSupport: 'optional' },
    handler: (args, ctx) => {
      return transcribeInput(deps.transcriber, () => fromUrl(deps.input, args.url, ctx.signal), args.language, ctx);
    },
  });
}
