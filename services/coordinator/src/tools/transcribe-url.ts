import { z } from 'zod';
import { forwardSpec } from './forward';

export const transcribeUrl = forwardSpec({
  name: 'transcribe_url',
  service: 'transcriber-mcp',
  title: 'Transcribe a URL',
  description:
    "Speech to text for media at an http(s) URL, fetched by transcriber-mcp through its outbound policy (private, loopback, link-local and metadata addresses refused with FORBIDDEN unless allowlisted; redirects checked hop by hop). Caps are transcriber-mcp's (TRANSCRIBE_MAX_URL_BYTES).",
  input: z
    .object({
      url: z
        .url({ protocol: /^https?$/ })
        .max(2048)
        .describe('http(s) address of an audio or video file (up to 2048 characters).'),
    })
    .strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
});
