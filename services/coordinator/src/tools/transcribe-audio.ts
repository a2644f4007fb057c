import { z } from 'zod';
import { forwardSpec } from './forward';
import { pathField } from './fields';

export const transcribeAudio = forwardSpec({
  name: 'transcribe_audio',
  service: 'transcriber-mcp',
  title: 'Transcribe audio',
  description:
    "Speech to text for an audio or video file inside the workspace roots. Caps are transcriber-mcp's (TRANSCRIBE_MAX_UPLOAD_BYTES, its duration and time limits); long files may need a COORDINATOR_CALL_TIMEOUT_MS and gateway DOWNSTREAM_TIMEOUT_MS above the default 30 s.",
  input: z.object({ file_path: pathField('Audio or video file to transcribe.') }).strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});
