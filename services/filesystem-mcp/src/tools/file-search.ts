import fs from 'node:fs/promises';
import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { openRegularFile } from '../lib/content';
import { humanBytes, pathArg, resolveIn, shown, type FsDeps } from '../lib/context';
import { fsCall } from '../lib/fs-errors';
import { compileGlob } from '../lib/glob';
import { walk, type EntryType } from '../lib/walk';

const PREVIEW_CHARS = 200;

interface Match {
  path: string;
  type: EntryType;
  secret?: true;
  line?: number;
  preview?: string;
}

/** The matching line, cut to PREVIEW_CHARS around the hit. */
function preview(line: string, at: number): string {
  if (line.length <= PREVIEW_CHARS) return line;
  const start = Math.max(0, Math.min(at - 60, line.length - PREVIEW_CHARS));
  return (start > 0 ? '…' : '') + line.slice(start, start + PREVIEW_CHARS) + (start + PREVIEW_CHARS < line.length ? '…' : '');
}

export function createFileSearchTool(deps: FsDeps) {
  const { searchMaxFiles, searchMaxFileBytes, searchTimeoutMs } = deps.limits;
  return defineTool({
    name: 'file_search',
    title: 'Search files',
    description:
      `Find files under a directory by name (glob such as *.ts or src/**/*.test.ts) and/or by content (plain substring; ` +
      `every matching line is reported with its number and a preview). Visits at most ${searchMaxFiles} entries ` +
      `(FILE_SEARCH_MAX_FILES) and runs at most ${searchTimeoutMs} ms (FILE_SEARCH_TIMEOUT_MS); content search skips binary files ` +
      `and files over maxFileBytes (at most ${humanBytes(searchMaxFileBytes)}). Stops at maxResults (max 1000). Any cap hit says truncated: true. ` +
      `Symlinks are never followed. Secret files (.env, private keys, DATA_DIR: SECRET_FILES) are never read or entered; a name search ` +
      `reports them with secret: true, a content search counts them as skippedSecret.`,
    input: z
      .object({
        path: pathArg('Directory to search (default: the first root).').default('.'),
        name: z
          .string()
          .min(1)
          .max(256)
          .optional()
          .describe('Glob on the base name (*, ?, [a-z], {a,b}); with a "/" it matches the path below `path` (** spans directories).'),
        content: z.string().min(1).max(1000).optional().describe('Plain text each reported line must contain (not a regex).'),
        caseSensitive: z.boolean().default(false).describe('Match name and content case-sensitively (default false).'),
        maxResults: z.number().int().min(1).max(1000).default(100).describe('Stop after this many matches (1-1000, default 100).'),
        maxFileBytes: z
          .number()
          .int()
          .min(1)
          .max(searchMaxFileBytes)
          .default(searchMaxFileBytes)
          .describe(`Content search skips files bigger than this (default and max ${searchMaxFileBytes}).`),
        includeHidden: z.boolean().default(false).describe('Search names starting with "." too (default false).'),
      })
      .strict()
      .refine((a) => a.name !== undefined || a.content !== undefined, {
        message: 'give name (a glob), content (text to find), or both',
        path: ['name'],
      }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const glob = args.name === undefined ? undefined : compileGlob(args.name, args.caseSensitive);
      const resolved = await resolveIn(deps, args.path, true);
      const base = resolved.relative;
      const name = shown(base);
      if (!(await fsCall(name, () => fs.stat(resolved.absolute))).isDirectory()) {
        throw new AppError('VALIDATION_ERROR', `"${name}" is not a directory; file_search looks below a directory.`, {
          details: [{ path: 'path', message: 'not a directory' }],
        });
      }
      const needle = args.content === undefined ? undefined : args.caseSensitive ? args.content : args.content.toLowerCase();
      const deadline = Date.now() + searchTimeoutMs;
      const matches: Match[] = [];
      const stats = { unreadable: 0 };
      let visited = 0;
      let filesScanned = 0;
      let skippedLarge = 0;
      let skippedBinary = 0;
      let skippedSecret = 0;
      let stoppedBy: 'maxResults' | 'maxFiles' | 'time' | undefined;

      const walkOptions = { ws: deps.ws, maxDepth: Number.POSITIVE_INFINITY, includeHidden: args.includeHidden, signal: ctx.signal };
      for await (const entry of walk(resolved.absolute, walkOptions, stats)) {
        if (visited >= searchMaxFiles) {
          stoppedBy = 'maxFiles';
          break;
        }
        if (Date.now() > deadline) {
          stoppedBy = 'time';
          break;
        }
        visited++;
        const shownPath = base === '' ? entry.relative : `${base}/${entry.relative}`;
        if (glob && !glob.test(glob.matchesPath ? entry.relative : entry.name)) continue;
        if (needle === undefined) {
          filesScanned++;
          matches.push({ path: shownPath, type: entry.type, ...(entry.secret ? { secret: true as const } : {}) });
        } else if (entry.secret) {
          skippedSecret++;
        } else if (entry.type === 'file') {
          filesScanned++;
          let text: string;
          try {
            const { handle, size } = await openRegularFile(deps.ws, entry.absolute, shownPath);
            try {
              if (size > args.maxFileBytes) {
                skippedLarge++;
                continue;
              }
              const buf = await handle.readFile();
              if (buf.subarray(0, 8000).includes(0)) {
                skippedBinary++;
                continue;
              }
              text = buf.toString('utf8');
            } finally {
              await handle.close();
            }
          } catch {
            stats.unreadable++;
            continue;
          }
          const lines = text.split(/\r?\n/);
          for (let i = 0; i < lines.length && matches.length <= args.maxResults; i++) {
            const hay = args.caseSensitive ? lines[i] : lines[i].toLowerCase();
            const at = hay.indexOf(needle);
            if (at !== -1) matches.push({ path: shownPath, type: 'file', line: i + 1, preview: preview(lines[i], at) });
          }
        }
        // One match past the cap proves there is more than was returned.
        if (matches.length > args.maxResults) {
          stoppedBy = 'maxResults';
          break;
        }
      }
      return {
        path: name,
        root: resolved.root,
        matches: matches.slice(0, args.maxResults),
        filesScanned,
        entriesVisited: visited,
        truncated: stoppedBy !== undefined,
        ...(stoppedBy ? { truncatedBy: stoppedBy } : {}),
        ...(skippedLarge > 0 ? { skippedLarge } : {}),
        ...(skippedBinary > 0 ? { skippedBinary } : {}),
        ...(skippedSecret > 0 ? { skippedSecret } : {}),
        ...(stats.unreadable > 0 ? { unreadable: stats.unreadable } : {}),
      };
    },
  });
}
