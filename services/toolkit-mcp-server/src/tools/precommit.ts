import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError, defineTool } from '@mcp-fleet/kit';
import type * as SimpleGitModule from 'simple-git';
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

export function precommitTool(deps: ToolDeps) {
  return defineTool({
    name: 'precommit',
    title: 'Pre-commit check',
    description:
      'Checks the staged changes of a git repository inside WORKSPACE_ROOTS before a commit: git status, the staged diff (cut at 200 KB, truncated: true), conflict markers and secret-looking strings in added lines (private keys, AWS/GitHub/Slack/OpenAI-style keys, password assignments; values are masked), and staged files over `largeFileBytes`. At most 200 findings. `ok` is false when anything was found.',
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
    handler: async (args) => {
      const resolved = (await deps.ws.resolve(args.path, { mustExist: true })).absolute;
      // a file names the repository it is in (simple-git takes only a directory, and threw for a file)
      const dir = (await fs.stat(resolved)).isDirectory() ? resolved : path.dirname(resolved);
      // simple-git (1.1 MiB of heap) is loaded by the first precommit call, not by the gateway's stdio server at start
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const git = (require('simple-git') as typeof SimpleGitModule).simpleGit({ baseDir: dir });
      if (!(await git.checkIsRepo())) throw new AppError('VALIDATION_ERROR', `${args.path} is not inside a git repository.`);
      const top = (await git.revparse(['--show-toplevel'])).trim();
      const status = await git.status();
      const diff = await git.diff(['--cached', '--no-color', '--no-ext-diff']);
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
      for (const f of status.staged) {
        try {
          const st = await fs.stat(path.join(top, f));
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
        diff: diff.slice(0, cap),
        ...(diff.length > cap || findings.length > 200 ? { truncated: true } : {}),
      };
    },
  });
}
