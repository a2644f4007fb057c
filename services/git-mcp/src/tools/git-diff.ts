import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { checkRevision } from '../git/refs';
import { callTimeoutMs, openRepo, parseNumstat, SECTIONED_DIFF, withholdSections } from '@mcp-fleet/git';
import type { GitDeps } from '../git/deps';
import { capList, repoPath, repoShape } from './repo-arg';

/** The per-file summary lists at most this many files. */
export const DIFF_FILES_CAP = 1000;

export function gitDiffTool(deps: GitDeps) {
  const maxBytes = deps.config.GIT_MAX_DIFF_BYTES;
  return defineTool({
    name: 'git_diff',
    title: 'Git diff',
    description:
      'Unified diff of a repository inside the workspace roots plus per-file insertions and deletions. ' +
      'No commits: working tree against the index (staged: true = index against HEAD). commit1 only: working tree (or index, with staged) against commit1. ' +
      'commit1 and commit2: between the two commits. Untracked files are not part of a diff; a renamed file shows as deleted and added. ' +
      'Secret files (.env, private keys, ...; SECRET_FILES) are listed in withheld, never shown. ' +
      `The patch text is cut at ${maxBytes} bytes (GIT_MAX_DIFF_BYTES; truncated: true), the file list at ${DIFF_FILES_CAP} entries; each git process is limited to ${deps.config.GIT_TIMEOUT_MS} ms.`,
    input: z
      .object({
        ...repoShape,
        commit1: z.string().min(1).max(255).optional().describe('Base commit: a hash, HEAD, HEAD~n, a branch or a tag.'),
        commit2: z.string().min(1).max(255).optional().describe('Second commit (needs commit1).'),
        staged: z.boolean().default(false).describe('Compare the index (staged changes) instead of the working tree.'),
        file: z.string().min(1).max(4096).optional().describe('Limit the diff to this path (relative to the repository top).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    timeoutMs: callTimeoutMs(deps.config),
    handler: async (args, ctx) => {
      if (args.commit2 !== undefined && args.commit1 === undefined) {
        throw new AppError('VALIDATION_ERROR', 'commit2 needs commit1; send both to compare two commits.', {
          details: [{ path: 'commit1', message: 'required with commit2' }],
        });
      }
      if (args.commit2 !== undefined && args.staged) {
        throw new AppError('VALIDATION_ERROR', 'staged compares the index; it cannot be combined with two commits.', {
          details: [{ path: 'staged', message: 'not with commit2' }],
        });
      }
      const revs = [args.commit1, args.commit2]
        .map((rev, i) => (rev === undefined ? undefined : checkRevision(rev, i === 0 ? 'commit1' : 'commit2')))
        .filter((rev): rev is string => rev !== undefined);
      const repo = await openRepo(deps, repoPath(args), ctx.signal);
      const file = args.file === undefined ? undefined : await repo.pathspec(args.file, 'file');
      // one "diff --git a/P b/P" section per file, as withholdSections reads it
      const base = [...SECTIONED_DIFF, ...(args.staged ? ['--cached'] : [])];
      const tail = ['--end-of-options', ...revs, '--', ...(file ? [file] : [])];
      const patch = await repo.capture('git diff', [...base, ...tail], maxBytes);
      const numstat = parseNumstat(await repo.run('git diff --numstat', (git) => git.raw([...base, '--numstat', '-z', ...tail])));
      // Secret files (SECRET_FILES) are named, never shown.
      const shown = withholdSections(patch.text, (f) => repo.isSecret(f));
      const withheld = [...new Set([...numstat.filter((f) => repo.isSecret(f.file)).map((f) => f.file), ...shown.withheld])];
      const listed = numstat.filter((f) => !withheld.includes(f.file));
      const files = capList(listed, DIFF_FILES_CAP);
      return {
        repository: repo.relative || '.',
        diff: shown.text,
        files: files.items,
        insertions: listed.reduce((n, f) => n + f.insertions, 0),
        deletions: listed.reduce((n, f) => n + f.deletions, 0),
        truncated: patch.truncated,
        ...(files.cut ? { filesTruncated: true, totalFiles: listed.length } : {}),
        ...(withheld.length > 0 ? { withheld } : {}),
      };
    },
  });
}
