import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { callTimeoutMs, openRepo } from '@mcp-fleet/git';
import type { GitDeps } from '../git/deps';
import { repoPath, repoShape } from './repo-arg';

// eslint-disable-next-line no-control-regex
const IDENT_UNSAFE = /[<>\u0000-\u001f\u007f]/;

export function gitCommitTool(deps: GitDeps) {
  return defineTool({
    name: 'git_commit',
    title: 'Git commit',
    description:
      'Record a commit in a repository inside the workspace roots. Commits what is staged; `files` stages those paths first (new, changed or deleted), `all: true` stages every change to tracked files first. ' +
      'Nothing staged is a CONFLICT. Hooks of the repository never run and commits are not signed. Returns the new hash, branch and change counts. ' +
      `Message up to 10000 characters, up to 1000 files; each git process is limited to ${deps.config.GIT_TIMEOUT_MS} ms.`,
    input: z
      .object({
        ...repoShape,
        message: z
          .string()
          .min(1)
          .max(10_000)
          .refine((m) => !m.includes('\0') && m.trim() !== '', 'must contain text and no NUL byte')
          .describe('Commit message (1-10000 characters).'),
        files: z
          .array(z.string().min(1).max(4096))
          .min(1)
          .max(1000)
          .optional()
          .describe('Paths inside the repository to stage before committing (relative to the repository top).'),
        all: z.boolean().default(false).describe('Stage every change to tracked files first (like git commit -a).'),
        author: z
          .object({
            name: z
              .string()
              .min(1)
              .max(200)
              .refine((n) => !IDENT_UNSAFE.test(n) && n.trim() !== '', 'no <, >, control characters or blank names')
              .describe('Author name.'),
            email: z
              .email()
              .max(320)
              .refine((e) => !IDENT_UNSAFE.test(e), 'no <, > or control characters')
              .describe('Author e-mail address.'),
          })
          .strict()
          .optional()
          .describe('Author of the commit; default the configured user.name and user.email.'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    timeoutMs: callTimeoutMs(deps.config),
    handler: async (args, ctx) => {
      const repo = await openRepo(deps, repoPath(args), ctx.signal);
      const specs: string[] = [];
      for (const [i, file] of (args.files ?? []).entries()) specs.push(await repo.pathspec(file, `files.${i}`));
      if (args.all) await repo.run('git add -u', (git) => git.raw(['add', '--update']), { write: true });
      if (specs.length > 0) await repo.run('git add', (git) => git.raw(['add', '--all', '--', ...specs]), { write: true });
      const staged = await repo.run('git diff --cached', (git) => git.raw(['diff', '--cached', '--name-only', '-z']));
      if (staged.replace(/\0/g, '').trim() === '') {
        throw new AppError(
          'CONFLICT',
          'Nothing to commit: no changes are staged. Name the paths to commit in files, or pass all: true to commit every change to tracked files.',
        );
      }
      const env: Record<string, string> = {};
      if (args.author) {
        // git also needs a committer; when the service user has none configured, the author is it.
        const [name, email] = await repo.run('git config', async (git) => [
          (await git.getConfig('user.name')).value,
          (await git.getConfig('user.email')).value,
        ]);
        if (!name) env.GIT_COMMITTER_NAME = args.author.name;
        if (!email) env.GIT_COMMITTER_EMAIL = args.author.email;
      }
      const options = args.author ? [`--author=${args.author.name} <${args.author.email}>`] : [];
      const result = await repo.run('git commit', (git) => git.commit(args.message, options), { write: true, env });
      const hash = (await repo.run('git rev-parse', (git) => git.raw(['rev-parse', 'HEAD']))).trim();
      return {
        repository: repo.relative || '.',
        hash,
        shortHash: (await repo.run('git rev-parse --short', (git) => git.raw(['rev-parse', '--short', hash]))).trim(),
        branch: result.branch,
        root: result.root,
        summary: result.summary,
      };
    },
  });
}
