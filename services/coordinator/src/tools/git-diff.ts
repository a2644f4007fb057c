import { z } from 'zod';
import { forwardSpec } from './forward';
import { repositoryField } from './fields';

const commit = (what: string) => z.string().min(1).max(255).optional().describe(`${what}: a hash, HEAD, HEAD~n, a branch or a tag.`);

export const gitDiff = forwardSpec({
  name: 'git_diff',
  service: 'git-mcp',
  title: 'Git diff',
  description:
    "Unified diff of a repository inside the workspace roots with per-file counts: the working tree against the index with no commit, against commit1 with one, commit1 against commit2 with both. Cut at git-mcp's GIT_MAX_DIFF_BYTES (truncated: true).",
  input: z
    .object({
      repository: repositoryField,
      commit1: commit('Base commit'),
      commit2: commit('Second commit (needs commit1)'),
    })
    .strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});
