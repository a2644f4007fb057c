import { z } from 'zod';
import { forwardSpec } from './forward';
import { repositoryField } from './fields';

export const gitLog = forwardSpec({
  name: 'git_log',
  service: 'git-mcp',
  title: 'Git log',
  description:
    'Commit history of a repository inside the workspace roots, newest first: hash, author, date and message of up to `limit` commits (1-500, default 20).',
  input: z
    .object({
      repository: repositoryField,
      limit: z.number().int().min(1).max(500).optional().describe('How many commits, 1-500 (default 20).'),
    })
    .strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});
