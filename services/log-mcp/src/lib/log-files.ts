import { constants } from 'node:fs';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { AppError, secretFilesFrom } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { type Config, logRoots } from '../config';
import { matchesGlob } from './glob';

/** Names treated as logs when walking the roots: *.log, *.jsonl, *.ndjson, *.txt, *.out, *.err, with an optional rotation suffix (.1, .2, ...). */
export const LOG_NAME = /\.(log|jsonl|ndjson|txt|out|err)(\.\d{1,4})?$/i;
const MAX_DEPTH = 4;
const MAX_ENTRIES = 20_000;

export interface LogFile {
  absolute: string;
  size: number;
  mtimeMs: number;
}

export interface Selection {
  files: LogFile[];
  /** More files matched than LOG_MAX_FILES. */
  truncated: boolean;
}

export class LogRoots {
  private opening?: Promise<Workspace>;

  constructor(private readonly config: Config) {}

  /** Opens the roots once; a missing required root is NOT_CONFIGURED (and is retried on the next call). */
  workspace(): Promise<Workspace> {
    this.opening ??= (async () => {
      const roots: string[] = [];
      for (const root of logRoots(this.config)) {
        if (root.create) await fs.mkdir(root.path, { recursive: true }).catch(() => undefined);
        const exists = await fs.stat(root.path).then(
          (s) => s.isDirectory(),
          () => false,
        );
        if (exists) roots.push(root.path);
        else if (!root.optional) throw new Error(`Log root "${root.path}" is not an existing directory; fix LOG_ROOTS.`);
      }
      // the secret-file policy; a log root inside DATA_DIR (the default, DATA_DIR/logs) is read as configured
      return Workspace.open(roots, secretFilesFrom(this.config));
    })().catch((err: Error) => {
      this.opening = undefined;
      throw new AppError('NOT_CONFIGURED', err.message);
    });
    return this.opening;
  }

  private async walk(ws: Workspace): Promise<string[]> {
    const out: string[] = [];
    let seen = 0;
    const visit = async (dir: string, depth: number): Promise<void> => {
      let listing: Awaited<ReturnType<Workspace['readDirectory']>>;
      try {
        // through the directory's verified descriptor: a directory swapped for a link out is not read
        listing = await ws.readDirectory(dir);
      } catch {
        return;
      }
      const entries = listing.entries.sort((a, b) => (a.name < b.name ? -1 : 1));
      for (const e of entries) {
        if (++seen > MAX_ENTRIES) return;
        if (e.name.startsWith('.') || ws.isSecretEntry(listing.real, e.name)) continue;
        const full = path.join(listing.real, e.name);
        if (e.isDirectory() && depth < MAX_DEPTH) await visit(full, depth + 1);
        else if (e.isFile() && LOG_NAME.test(e.name)) out.push(full);
        else if (e.isSymbolicLink() && LOG_NAME.test(e.name)) {
          // followed only when it stays inside the roots
          const resolved = await ws.resolve(full, { mustExist: true }).catch(() => undefined);
          if (resolved) out.push(resolved.absolute);
        }
      }
    };
    for (const root of ws.roots) await visit(root, 0);
    return out;
  }

  /** Opens a selected file for reading, verified on its descriptor (Workspace.openFile). */
  async open(absolute: string): Promise<FileHandle> {
    const ws = await this.workspace();
    try {
      return (await ws.openFile(absolute, constants.O_RDONLY | constants.O_NONBLOCK)).handle;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new AppError('NOT_FOUND', `Log file "${absolute}" was removed (rotated?) during the call; retry.`);
      if (code === 'ELOOP') throw new AppError('FORBIDDEN', `Log file "${absolute}" was replaced by a symlink during the call.`);
      throw err;
    }
  }

  /**
   * The files a call reads, sorted by path. `patterns` are file paths (absolute or relative to the
   * first root) or globs (`*`, `**`, `?`, `[...]`): a glob with a "/" is matched against the path
   * relative to its root (or the absolute path when it is absolute), one without against the file name.
   */
  async select(patterns: string[] | undefined): Promise<Selection> {
    const ws = await this.workspace();
    const chosen = new Set<string>();
    if (!patterns || patterns.length === 0) {
      for (const f of await this.walk(ws)) chosen.add(f);
    } else {
      let walked: string[] | undefined;
      for (const [i, pattern] of patterns.entries()) {
        const field = `files.${i}`;
        if (/[*?[\]{}]/.test(pattern)) {
          ws.lexical(pattern.replace(/[*?[\]{}]/g, '_'), field);
          walked ??= await this.walk(ws);
          for (const f of walked) {
            const root = ws.roots.find((r) => f.startsWith(r + path.sep));
            const rel = root ? path.relative(root, f).split(path.sep).join('/') : f;
            const subject = pattern.includes('/') ? (path.isAbsolute(pattern) ? f : rel) : path.basename(f);
            if (matchesGlob(subject, pattern)) chosen.add(f);
          }
        } else {
          const resolved = await ws.resolve(pattern, { mustExist: true, field });
          const st = await fs.stat(resolved.absolute).catch((err: NodeJS.ErrnoException) => {
            if (err.code === 'ENOENT' || err.code === 'ENOTDIR') throw new AppError('NOT_FOUND', `${field} "${pattern}" does not exist.`);
            throw err;
          });
          if (!st.isFile()) {
            throw new AppError('VALIDATION_ERROR', `${field} "${pattern}" is not a file; name log files or use a glob such as "*.log".`, {
              details: [{ path: field, message: 'not a file' }],
            });
          }
          chosen.add(resolved.absolute);
        }
      }
    }
    const sorted = [...chosen].sort();
    const files: LogFile[] = [];
    for (const f of sorted.slice(0, this.config.LOG_MAX_FILES)) {
      try {
        const st = await fs.stat(f);
        if (st.isFile()) files.push({ absolute: f, size: st.size, mtimeMs: st.mtimeMs });
      } catch {
        // rotated away meanwhile
      }
    }
    return { files, truncated: sorted.length > this.config.LOG_MAX_FILES };
  }
}
