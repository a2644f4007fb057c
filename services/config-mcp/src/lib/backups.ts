import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';

/**
 * Backups of one file live in `<backupDir>/<basename>-<sha256(real path) prefix>/`, one copy per
 * backup named by its UTC timestamp (`2025-01-02T03-04-05.678Z`, `_N` added on a same-millisecond
 * collision), beside `source.json` recording the original path.
 */
export const BACKUP_ID = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}Z(?:_\d{1,4})?$/;

export interface BackupEntry {
  id: string;
  createdAt: string;
  bytes: number;
}

function safeBase(file: string): string {
  return (
    path
      .basename(file)
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .slice(0, 80) || 'file'
  );
}

export class BackupStore {
  constructor(readonly root: string) {}

  dirFor(absolute: string): string {
    const hash = createHash('sha256').update(absolute).digest('hex').slice(0, 16);
    return path.join(this.root, `${safeBase(absolute)}-${hash}`);
  }

  private static order(a: string, b: string): number {
    const [baseA, nA = '0'] = a.split('_');
    const [baseB, nB = '0'] = b.split('_');
    return baseA < baseB ? -1 : baseA > baseB ? 1 : Number(nA) - Number(nB);
  }

  static createdAt(id: string): string {
    const base = id.split('_')[0];
    return `${base.slice(0, 10)}T${base.slice(11, 19).replace(/-/g, ':')}${base.slice(19)}`;
  }

  /** Ids oldest first. */
  async ids(absolute: string): Promise<string[]> {
    try {
      const names = await fs.readdir(this.dirFor(absolute));
      return names.filter((n) => BACKUP_ID.test(n)).sort(BackupStore.order);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  /** Newest first. */
  async list(absolute: string): Promise<BackupEntry[]> {
    const dir = this.dirFor(absolute);
    const ids = (await this.ids(absolute)).reverse();
    const out: BackupEntry[] = [];
    for (const id of ids) {
      try {
        const st = await fs.stat(path.join(dir, id));
        out.push({ id, createdAt: BackupStore.createdAt(id), bytes: st.size });
      } catch {
        // pruned meanwhile
      }
    }
    return out;
  }

  /** Copies the file's current content into a new backup. */
  async create(absolute: string, content: Buffer): Promise<BackupEntry> {
    const dir = this.dirFor(absolute);
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    await fs.writeFile(path.join(dir, 'source.json'), JSON.stringify({ path: absolute }), { mode: 0o600 });
    const base = new Date().toISOString().replace(/:/g, '-');
    for (let n = 0; n < 10_000; n++) {
      const id = n === 0 ? base : `${base}_${n}`;
      const tmp = path.join(dir, `.${id}.tmp`);
      try {
        await fs.writeFile(tmp, content, { flag: 'wx', mode: 0o600 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      }
      try {
        // link fails if the id is taken, so two concurrent backups never overwrite each other
        await fs.link(tmp, path.join(dir, id));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw err;
      } finally {
        await fs.rm(tmp, { force: true });
      }
      return { id, createdAt: BackupStore.createdAt(id), bytes: content.length };
    }
    throw new AppError('CONFLICT', 'Too many backups in the same millisecond; retry.');
  }

  async read(absolute: string, id: string): Promise<Buffer> {
    try {
      return await fs.readFile(path.join(this.dirFor(absolute), id));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new AppError('NOT_FOUND', `No backup "${id}" of this file; action "list" shows the ones that exist.`);
      }
      throw err;
    }
  }

  /** Deletes the oldest backups beyond `keep`; returns the deleted ids. */
  async prune(absolute: string, keep: number): Promise<string[]> {
    const ids = await this.ids(absolute);
    const doomed = ids.slice(0, Math.max(0, ids.length - keep));
    for (const id of doomed) await fs.rm(path.join(this.dirFor(absolute), id), { force: true });
    return doomed;
  }
}
