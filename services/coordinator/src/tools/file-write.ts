import { z } from 'zod';
import { forwardSpec } from './forward';
import { pathField } from './fields';

export const fileWrite = forwardSpec({
  name: 'file_write',
  service: 'filesystem-mcp',
  title: 'Write a file',
  description:
    "Write (create or replace) a UTF-8 text file inside the workspace roots, atomically; its directory must exist. At most filesystem-mcp's FILE_MAX_WRITE_BYTES and the request body limit (BODY_LIMIT, 1 MiB by default).",
  input: z
    .object({
      path: pathField('File to write.'),
      content: z.string().describe('The new content of the file (UTF-8 text).'),
    })
    .strict(),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
});
