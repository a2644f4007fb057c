import { lstatSync, statSync } from 'node:fs';
import path from 'node:path';
import { AppError, defineTool, isSecretFileError, pageShape, paginate } from '@mcp-fleet/kit';
import { z } from 'zod';
import { iso, pathArg, resolveIn, shown, type FsDeps } from '../lib/context';
import { fsCall } from '../lib/fs-errors';
import { children, walk, type WalkEntry } from '../lib/walk';

export function createFileListTool(deps: FsDeps) {
  const cap = deps.limits.listMaxEntries;

  /** Where a listed symlink leads: its path when inside a root, never followed or revealed otherwise. */
  const linkInfo = async (absolute: string) => {
    try {
      const target = await deps.ws.resolve(absolute, { mustExist: true });
      return { target: path.join(target.root, target.relative), targetStatus: 'inside' as const };
    } catch (err) {
      if (isSecretFileError(err)) return { targetStatus: 'secret' as const };
      const code = (err as { code?: string }).code;
      return { targetStatus: code === 'FORBIDDEN' ? ('outside' as const) : ('broken' as const) };
    }
  };

  /** An entry as listed; a promise only for a symlink (its target is resolved), so a plain listing takes no promise turn per entry. */
  const describeEntry = (e: WalkEntry, base: string) => {
    const rel = base === '' ? e.relative : `${base}/${e.relative}`;
    if (e.secret) return { name: e.name, path: rel, type: e.type, size: null, modifiedAt: null, secret: true };
    let size: number | null = null;
    let modifiedAt: string | null = null;
    try {
      // Synchronous on purpose: one lstat is a couple of microseconds, while a thread-pool round trip
      // per entry cost ~0.7 ms per 50 entries (issue 14). A page is at most 500 entries.
      const st = lstatSync(e.absolute, { throwIfNoEntry: false });
      if (st) {
        size = e.type === 'file' ? st.size : null;
        modifiedAt = iso(st.mtime);
      }
    } catch {
      // unreadable, or removed between listing and stat: keep the entry with what is known
    }
    const entry = { name: e.name, path: rel, type: e.type, size, modifiedAt };
    return e.type === 'symlink' ? linkInfo(e.absolute).then((link) => ({ ...entry, ...link })) : entry;
  };

  return defineTool({
    name: 'file_list',
    title: 'List a directory',
    description:
      `List a directory inside the workspace roots, optionally recursively (maxDepth 1-10), paginated (limit 1-500, cursor). ` +
      `At most ${cap} entries are collected per listing (FILE_LIST_MAX_ENTRIES); beyond that the answer says truncated: true. ` +
      `Symlinks are listed as symlinks (with their target when it is inside a root) and never followed. Hidden names (.x) only with includeHidden. ` +
      `Secret files and directories (.env, private keys, DATA_DIR: SECRET_FILES) are listed by name with secret: true, never entered.`,
    input: z
      .object({
        path: pathArg('Directory to list (default: the first root).').default('.'),
        recursive: z.boolean().default(false).describe('Descend into subdirectories (default false).'),
        maxDepth: z.number().int().min(1).max(10).default(3).describe('How deep a recursive listing goes (1-10, default 3).'),
        includeHidden: z.boolean().default(false).describe('Include names starting with "." (default false).'),
        ...pageShape,
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const resolved = await resolveIn(deps, args.path, true);
      const name = shown(resolved.relative);
      // synchronous, as the realpath before it (microseconds, where the thread pool costs more)
      const st = await fsCall(name, async () => statSync(resolved.absolute));
      if (!st.isDirectory()) {
        throw new AppError('VALIDATION_ERROR', `"${name}" is a file, not a directory; use file_read or file_analyze for files.`, {
          details: [{ path: 'path', message: 'not a directory' }],
        });
      }
      const stats = { unreadable: 0 };
      const found: WalkEntry[] = [];
      let truncated = false;
      const walkOptions = {
        ws: deps.ws,
        maxDepth: args.recursive ? args.maxDepth : 1,
        includeHidden: args.includeHidden,
        // only a recursive walk looks at it (between directories): a plain listing makes no AbortSignal (ctx.signal is made when read)
        signal: args.recursive ? ctx.signal : undefined,
      };
      const take = (entry: WalkEntry) => {
        if (found.length >= cap) truncated = true;
        else found.push(entry);
        return !truncated;
      };
      // (a plain loop where it can be: `for await` over an array still takes a promise turn per entry)
      if (walkOptions.maxDepth === 1) {
        for (const entry of children(resolved.absolute, walkOptions, stats)) if (!take(entry)) break;
      } else {
        for await (const entry of walk(resolved.absolute, walkOptions, stats)) if (!take(entry)) break;
      }
      const page = paginate(found, args.limit, args.cursor);
      const described = page.items.map((e) => describeEntry(e, resolved.relative));
      const entries = described.some((d) => d instanceof Promise) ? await Promise.all(described) : described;
      return {
        path: name,
        root: resolved.root,
        entries,
        total: found.length,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        truncated,
        ...(stats.unreadable > 0 ? { unreadableDirectories: stats.unreadable } : {}),
      };
    },
  });
}
