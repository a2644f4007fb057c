import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { callTimeoutMs, openRepo } from '@mcp-fleet/git';
import type { GitDeps } from '../git/deps';
import { capList, repoPath, repoShape } from './repo-arg';

/** Each path list in the answer holds at most this many entries. */
export const STATUS_LIST_CAP = 1000;

export function gitStatusTool(deps: GitDeps) {
  return defineTool({
    name: 'git_status',
    title: 'Git status',
    description:
      `Working-tree status of a repository inside the workspace roots: current branch, upstream and ahead/behind counts, and the paths that are staged, modified (unstaged), deleted (unstaged), untracked or conflicted. ` +
      `Each list holds at most ${STATUS_LIST_CAP} paths (truncated: true when cut); each git process is limited to ${deps.config.GIT_TIMEOUT_MS} ms.`,
    input: z.object(repoShape).strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    timeoutMs: callTimeoutMs(deps.config),
    handler: async (args, ctx) => {
      const repo = await openRepo(deps, repoPath(args), ctx.signal);
      const s = await repo.run('git status', (git) => git.status(['--untracked-files=normal', '--ignore-submodules=all']));
      const conflicted = new Set(s.conflicted);
      const pick = (test: (f: (typeof s.files)[number]) => boolean) =>
        s.files.filter((f) => !conflicted.has(f.path) && test(f)).map((f) => f.path);
      const lists = {
        staged: pick((f) => ![' ', '?', '!'].includes(f.index)),
        modified: pick((f) => f.working_dir === 'M' || f.working_dir === 'T'),
        untracked: pick((f) => f.index === '?'),
        deleted: pick((f) => f.working_dir === 'D'),
        conflicted: [...conflicted],
      };
      let truncated = false;
      const capped = Object.fromEntries(
        Object.entries(lists).map(([key, list]) => {
          const { items, cut } = capList(list, STATUS_LIST_CAP);
          truncated ||= cut;
          return [key, items];
        }),
      ) as typeof lists;
      return {
        repository: repo.relative || '.',
        branch: s.detached ? null : s.current,
        detached: s.detached,
        tracking: s.tracking,
        ahead: s.ahead,
        behind: s.behind,
        ...capped,
        clean: s.isClean(),
        truncated,
      };
    },
  });
}
