import { z } from 'zod';
import { forwardSpec } from './forward';
import { pathField } from './fields';

export const fileList = forwardSpec({
  name: 'file_list',
  service: 'filesystem-mcp',
  title: 'List a directory',
  description:
    "List a directory inside the workspace roots (one level; hidden names left out), the first 50 entries with nextCursor when there are more. At most filesystem-mcp's FILE_LIST_MAX_ENTRIES entries are collected (then truncated: true).",
  input: z.object({ path: pathField('Directory to list (default: the first workspace root).').optional() }).strict(),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
});
