import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { checkRevision } from '../git/refs';
import { callTimeoutMs, openRepo } from '@mcp-fleet/git';
import type { GitDeps } from '../git/deps';
import { repoPath, repoShape } from './repo-arg';

const BODY_CAP = 4096;

/** One commit per NUL-terminated record (-z); fields separated by US (0x1f), the free-text body last. */
const LOG_FORMAT = ['%H', '%h', '%an', '%ae', '%aI', '%s', '%b'].join('%x1f');

export function parseLog(output: string) {
  return output
    .split('\0')
    .filter((record) => record.trim() !== '')
    .map((record) => {
      const [hash, shortHash, author, email, date, message, ...rest] = record.replace(/^\n/, '').split('\x1f');
      const body = rest.join('\x1f').trim();
      return {
        hash,
        shortHash,
        author,
        email,
        date,
        message,
        body: body.length > BODY_CAP ? `${body.slice(0, BODY_CAP)}…` : body,
      };
    });
}

interface LogCursor {
  /** Commits already returned. */
  o: number;
  /** The commit the listing started from, so later pages do not shift when new commits land. */
  h: string;
}

export function encodeLogCursor(cursor: LogCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

export function decodeLogCursor(raw: string): LogCursor {
  try {
    const v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<LogCursor>;
    if (typeof v.o === 'number' && Number.isInteger(v.o) && v.o >= 0 && typeof v.h === 'string' && /^[0-9a-f]{40,64}$/.test(v.h)) {
      return { o: v.o, h: v.h };
    }
  } catch {
    // fall through
  }
  throw new AppError('VALIDATION_ERROR', 'The cursor is not one git_log issued; start again without a cursor.', {
    details: [{ path: 'cursor', message: 'unrecognised cursor' }],
  });
}

export function gitLogTool(deps: GitDeps) {
  return defineTool({
    name: 'git_log',
    title: 'Git log',
    description:
      'Commit history of a repository inside the workspace roots, newest first, from HEAD or from `ref`, optionally only commits touching `file`. ' +
      `Each commit: hash, shortHash, author, email, date (ISO 8601), message (subject) and body (at most ${BODY_CAP} characters). ` +
      `Paginated: limit 1-500 (default 20) with cursor; a cursor pins the starting commit. Each git process is limited to ${deps.config.GIT_TIMEOUT_MS} ms.`,
    input: z
      .object({
        ...repoShape,
        limit: z.number().int().min(1).max(500).default(20).describe('Commits per page (1-500, default 20).'),
        ref: z
          .string()
          .min(1)
          .max(255)
          .optional()
          .describe('Start from this commit: a hash, HEAD, HEAD~n, a branch or a tag. Default HEAD.'),
        file: z.string().min(1).max(4096).optional().describe('Only commits that touch this path (relative to the repository top).'),
        cursor: z.string().max(512).optional().describe('nextCursor from the previous page.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    timeoutMs: callTimeoutMs(deps.config),
    handler: async (args, ctx) => {
      const cursor = args.cursor ? decodeLogCursor(args.cursor) : undefined;
      const ref = args.ref === undefined ? undefined : checkRevision(args.ref, 'ref');
      const repo = await openRepo(deps, repoPath(args), ctx.signal);
      const file = args.file === undefined ? undefined : await repo.pathspec(args.file, 'file');
      let start = cursor?.h;
      if (!start) {
        if (ref === undefined && !(await repo.revExists('HEAD'))) return { repository: repo.relative || '.', commits: [] };
        start = (
          await repo.run(`git rev-parse ${ref ?? 'HEAD'}`, (git) =>
            git.raw(['rev-parse', '--verify', '--end-of-options', `${ref ?? 'HEAD'}^{commit}`]),
          )
        ).trim();
      }
      const offset = cursor?.o ?? 0;
      const logArgs = [
        'log',
        '-z',
        `--format=${LOG_FORMAT}`,
        `--skip=${offset}`,
        `--max-count=${args.limit + 1}`,
        '--end-of-options',
        start,
        '--',
        ...(file ? [file] : []),
      ];
      const all = parseLog(await repo.run('git log', (git) => git.raw(logArgs)));
      const rows = all.slice(0, args.limit);
      const more = all.length > args.limit;
      return {
        repository: repo.relative || '.',
        commits: rows,
        ...(more ? { nextCursor: encodeLogCursor({ o: offset + rows.length, h: start }) } : {}),
      };
    },
  });
}
