import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError, defineTool, pageShape, paginate } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { TerminalDeps } from '../deps';

/** Directories with more entries than this are listed partly (truncated: true). */
export const MAX_DIRECTORY_ENTRIES = 100_000;

type EntryType = 'file' | 'directory' | 'symlink' | 'other';

function typeOf(stat: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryType {
  if (stat.isSymbolicLink()) return 'symlink';
  if (stat.isDirectory()) return 'directory';
  if (stat.isFile()) return 'file';
  return 'other';
}

export function directoryTool({ workspace }: TerminalDeps) {
  return defineTool({
    name: 'directory',
    title: 'Directory listing',
    description:
      'Entries of a directory inside the workspace roots (default the first root), sorted by name: name, type (file, directory, symlink, other), size in bytes and modifiedAt. ' +
      `Symlinks are reported, not followed. Paginated: limit 1-500 (default 50) with cursor; at most ${MAX_DIRECTORY_ENTRIES} entries are considered (truncated: true).`,
    input: z
      .object({
        path: z
          .string()
          .min(1)
          .max(4096)
          .optional()
          .describe('Directory inside the workspace roots (relative to the first root, or absolute).'),
        ...pageShape,
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const dir = await workspace.resolve(args.path ?? '.', { mustExist: true });
      let names: string[];
      try {
        const handle = await fs.opendir(dir.absolute);
        names = [];
        for await (const entry of handle) {
          names.push(entry.name);
          if (names.length > MAX_DIRECTORY_ENTRIES) break;
        }
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOTDIR') {
          throw new AppError('VALIDATION_ERROR', `path "${args.path}" is a file; give a directory.`, {
            details: [{ path: 'path', message: 'not a directory' }],
          });
        }
        if (code === 'EACCES' || code === 'EPERM') throw new AppError('FORBIDDEN', `No permission to read the directory "${args.path}".`);
        throw err;
      }
      const truncated = names.length > MAX_DIRECTORY_ENTRIES;
      if (truncated) names = names.slice(0, MAX_DIRECTORY_ENTRIES);
      names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const page = paginate(names, args.limit, args.cursor);
      const entries = [];
      for (const name of page.items) {
        try {
          const st = await fs.lstat(path.join(dir.absolute, name));
          entries.push({ name, type: typeOf(st), size: st.size, modifiedAt: st.mtime.toISOString() });
        } catch {
          entries.push({ name, type: 'other' as EntryType, size: null, modifiedAt: null }); // vanished or unreadable meanwhile
        }
      }
      return {
        path: dir.relative || '.',
        entries,
        total: page.total,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        truncated,
      };
    },
  });
}
