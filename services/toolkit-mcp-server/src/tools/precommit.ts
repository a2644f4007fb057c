import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError, defineTool } from '@mcp-fleet/kit';
import type * as GitModule from '@mcp-fleet/git';
import type * as SandboxModule from '@mcp-fleet/sandbox';
import { z } from 'zod';
import type { ToolDeps } from './context';

const SECRET_PATTERNS: [string, RegExp][] = [
  ['private key', /-----BEGIN (?:RSA |EC |OPENSSH |DSA )?PRIVATE KEY-----/],
  ['AWS access key id', /\bAKIA[0-9A-Z]{16}\b/],
  ['GitHub token', /\bgh[pousr]_[A-Za-z0-9]{36,}\b/],
  ['Slack token', /\bxox[baprs]-[A-Za-z0-9-]{10,}\b/],
  ['OpenAI-style key', /\bsk-[A-Za-z0-9_-]{20,}\b/],
  ['password assignment', /\b(?:password|passwd|secret|api[_-]?key|token)\s*[:=]\s*['"][^'"\s]{8,}['"]/i],
];
const CONFLICT = /^(<{7}|={7}|>{7})( |$)/;
/** At most this much of the staged diff is read and scanned (git is stopped beyond it); 200 KB of it is returned. */
const SCAN_BYTES = 16 * 1024 * 1024;

/**
 * @mcp-fleet/git and the OS sandbox, made at the first precommit call: simple-git (1.1 MiB of heap)
 * and the bubblewrap probe cost the gateway's stdio server nothing until a repository is checked.
 */
function gitOpener(deps: ToolDeps): () => { git: typeof GitModule; gitDeps: GitModule.GitDeps } {
  let made: { git: typeof GitModule; gitDeps: GitModule.GitDeps } | undefined;
  return () => {
    if (made) return made;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const git = require('@mcp-fleet/git') as typeof GitModule;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Sandbox } = require('@mcp-fleet/sandbox') as typeof SandboxModule;
    const sandbox = Sandbox.open(deps.config, deps.logger);
    made = {
      git,
      gitDeps: {
        config: deps.config,
        workspace: deps.ws,
        logger: deps.logger,
        sandbox: new git.GitSandbox(sandbox, deps.config.SANDBOX_BWRAP, deps.config.GIT_BASE_ENV.PATH),
      },
    };
    return made;
  };
}

export function precommitTool(deps: ToolDeps) {
  const openGit = gitOpener(deps);
  return defineTool({
    name: 'precommit',
    title: 'Pre-commit check',
    description:
      "Checks the staged changes of a git repository inside WORKSPACE_ROOTS before a commit: git status, the staged diff (cut at 200 KB, truncated: true), conflict markers and secret-looking strings in added lines (private keys, AWS/GitHub/Slack/OpenAI-style keys, password assignments; values are masked), staged secret files (.env, private keys, ...; SECRET_FILES: reported, their diff withheld), and staged files over `largeFileBytes`. At most 200 findings. `ok` is false when anything was found. git runs inside the OS sandbox, reads none of the repository's own program settings and runs no hook, filter, textconv or fsmonitor of it.",
    input: z
      .object({
        path: z
          .string()
          .min(1)
          .max(4096)
          .describe('Repository directory (or a directory or file inside it: a file stands for its directory).'),
        largeFileBytes: z.number().int().min(1).default(1_048_576).describe('Staged files larger than this are reported (default 1 MiB).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const resolved = (await deps.ws.resolve(args.path, { mustExist: true })).absolute;
      // a file names the repository it is in
      const dir = (await fs.stat(resolved)).isDirectory() ? resolved : path.dirname(resolved);
      const { git, gitDeps } = openGit();
      // The repository is hostile (its config may name programs for git to run): every git process
      // runs as git-mcp's do, inside the OS sandbox with the repository's config sanitized and
      // every program setting forced off (@mcp-fleet/git, hardening.ts).
      const repo = await git.openRepo(gitDeps, dir, ctx.signal).catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'NOT_FOUND') {
          throw new AppError('VALIDATION_ERROR', `${args.path} is not inside a git repository; give a path in one.`, {
            details: [{ path: 'path', message: 'not a git repository' }],
          });
        }
        throw err;
      });
      const top = repo.top;
      const status = await repo.run('git status', (g) => g.status());
      // one "diff --git a/P b/P" section per file, as withholdSections reads it
      const staged = await repo.capture('git diff --cached', [...git.SECTIONED_DIFF, '--cached'], SCAN_BYTES);
      const diff = staged.text;
      const findings: { kind: string; file: string; line?: number; detail: string }[] = [];
      let file = '';
      let line = 0;
      for (const text of diff.split('\n')) {
        if (text.startsWith('+++ ')) {
          file = text.replace(/^\+\+\+ (b\/)?/, '');
          continue;
        }
        const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)/.exec(text);
        if (hunk) {
          line = Number(hunk[1]);
          continue;
        }
        if (text.startsWith('+')) {
          const added = text.slice(1);
          if (CONFLICT.test(added)) findings.push({ kind: 'conflict-marker', file, line, detail: added.slice(0, 7) });
          for (const [name, re] of SECRET_PATTERNS) {
            const m = re.exec(added);
            if (m) findings.push({ kind: 'secret', file, line, detail: `${name}: ${m[0].slice(0, 4)}…(${m[0].length} chars)` });
          }
          line++;
        } else if (!text.startsWith('-')) line++;
      }
      // Secret files (.env, private keys, ...; SECRET_FILES) are reported, and their lines never shown.
      const shown = git.withholdSections(diff, (f) => repo.isSecret(f));
      const secretFiles = new Set([...shown.withheld, ...status.staged.filter((f) => repo.isSecret(f))]);
      for (const f of secretFiles) {
        findings.push({ kind: 'secret-file', file: f, detail: 'a secret file (SECRET_FILES) is staged; its diff is withheld' });
      }
      for (const f of status.staged) {
        try {
          // lstat: a staged symlink is measured as the link, never as what it points at
          const st = await fs.lstat(path.join(top, f));
          if (st.size > args.largeFileBytes) findings.push({ kind: 'large-file', file: f, detail: `${st.size} bytes` });
        } catch {
          // deleted or renamed away: nothing to measure
        }
      }
      const cap = 200_000;
      return {
        ok: findings.length === 0,
        repository: top,
        branch: status.current,
        staged: status.staged,
        modified: status.modified.filter((m) => !status.staged.includes(m)),
        untracked: status.not_added,
        conflicted: status.conflicted,
        findings: findings.slice(0, 200),
        diff: shown.text.slice(0, cap),
        ...(secretFiles.size > 0 ? { withheld: [...secretFiles] } : {}),
        ...(shown.text.length > cap || staged.truncated || findings.length > 200 ? { truncated: true } : {}),
      };
    },
  });
}
