import { z } from 'zod';
import { forwardSpec } from './forward';
import { repositoryField } from './fields';

export const gitStatus = forwardSpec({
  name: 'git_status',
  service: 'git-mcp',
  title: 'Git status',
  description:
    "Working tree status of a repository inside the workspace roots: branch, upstream and ahead/behind counts, and the staged, modified, deleted, untracked and conflicted paths (lists cut at git-mcp's cap, truncated: true).",
  input: z.object({ repository: repositoryField }).strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});
