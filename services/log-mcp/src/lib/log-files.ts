import { type Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
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
      return Workspace.open(roots);
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
      let entries: Dirent[];
      try {
        entries = await fs.readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : 1));
      for (const e of entries) {
        if (++seen > MAX_ENTRIES) return;
        if (e.name.startsWith('.')) continue;
        const full = path.join(dir, e.name);
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
          const st = await fs.stat(resolved.absolute);
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
