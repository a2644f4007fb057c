import { z } from 'zod';
import { forwardSpec } from './forward';
import { pathField } from './fields';

export const fileRead = forwardSpec({
  name: 'file_read',
  service: 'filesystem-mcp',
  title: 'Read a file',
  description:
    "Read a text file inside the workspace roots (UTF-8; a binary file says binary: true). At most filesystem-mcp's FILE_MAX_READ_BYTES (1 MiB by default); a longer file is cut and says truncated: true.",
  input: z.object({ path: pathField('File to read.') }).strict(),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
});
