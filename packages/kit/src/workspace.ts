import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from './errors';

export interface ResolvedPath {
  /** Absolute, symlink-resolved path (for a path that does not exist yet: its resolved parent plus the rest). */
  absolute: string;
  /** The (resolved) workspace root that contains it. */
  root: string;
  /** Path relative to that root, with forward slashes ("" for the root itself). */
  relative: string;
  exists: boolean;
}

/** True when candidate is root itself or lies below it (both absolute, normalised). */
export function within(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/**
 * Confinement to WORKSPACE_ROOTS (decisions.md, "Security defaults"): NUL bytes and `..` segments
 * are refused, relative paths resolve against the first root, and symlinks are resolved before
 * the check, so a link cannot lead outside.
 */
export class Workspace {
  private constructor(readonly roots: string[]) {}

  static async open(roots: string[]): Promise<Workspace> {
    if (roots.length === 0) throw new Error('WORKSPACE_ROOTS is empty; name at least one directory.');
    const resolved: string[] = [];
    for (const r of roots) {
      try {
        const real = await fs.realpath(path.resolve(r));
        const st = await fs.stat(real);
        if (!st.isDirectory()) throw new Error('not a directory');
        resolved.push(real);
      } catch (err) {
        throw new Error(`Workspace root "${r}" is not an existing directory (${(err as Error).message}); fix WORKSPACE_ROOTS.`);
      }
    }
    return new Workspace(resolved);
  }

  /** Checks the input's shape and returns the lexical absolute path it names. */
  lexical(input: string, field = 'path'): string {
    if (typeof input !== 'string') {
      throw new AppError('VALIDATION_ERROR', `${field} must be a string.`, { details: [{ path: field, message: 'expected a string' }] });
    }
    if (input.includes('\0')) {
      throw new AppError('VALIDATION_ERROR', `${field} contains a NUL byte; remove it.`, {
        details: [{ path: field, message: 'NUL byte in path' }],
      });
    }
    if (input.length > 4096) {
      throw new AppError('VALIDATION_ERROR', `${field} is longer than 4096 characters.`, {
        details: [{ path: field, message: 'too long' }],
      });
    }
    const segments = input.split(/[\\/]+/);
    if (segments.includes('..')) {
      throw new AppError('FORBIDDEN', `${field} "${input}" contains "..": paths must stay inside the workspace roots.`, {
        details: [{ path: field, message: 'parent-directory segment' }],
      });
    }
    const trimmed = input.trim() === '' ? '.' : input;
    const absolute = path.isAbsolute(trimmed) ? path.normalize(trimmed) : path.resolve(this.roots[0], trimmed);
    const root = this.roots.find((r) => within(r, absolute));
    if (!root) {
      throw new AppError('FORBIDDEN', `${field} "${input}" is outside the workspace roots (${this.roots.join(', ')}).`, {
        details: [{ path: field, message: 'outside workspace roots' }],
      });
    }
    return absolute;
  }

  /** Resolve a caller's path to a real path inside a root, following symlinks first. */
  async resolve(input: string, options: { mustExist?: boolean; field?: string } = {}): Promise<ResolvedPath> {
    const field = options.field ?? 'path';
    const absolute = this.lexical(input, field);
    let existing = absolute;
    const rest: string[] = [];
    let real: string | undefined;
    for (;;) {
      try {
        // Synchronous on purpose: realpath of a local path costs microseconds, a thread-pool round
        // trip far more (issue 14); every file tool resolves its path here on each call.
        real = realpathSync.native(existing);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
        const parent = path.dirname(existing);
        if (parent === existing) break;
        rest.unshift(path.basename(existing));
        existing = parent;
      }
    }
    const exists = rest.length === 0 && real !== undefined;
    if (!exists && options.mustExist) {
      throw new AppError('NOT_FOUND', `${field} "${input}" does not exist.`, { details: [{ path: field, message: 'not found' }] });
    }
    const full = real === undefined ? absolute : path.join(real, ...rest);
    const root = this.roots.find((r) => within(r, full));
    if (!root) {
      throw new AppError('FORBIDDEN', `${field} "${input}" resolves (through a symlink) outside the workspace roots.`, {
        details: [{ path: field, message: 'symlink escape' }],
      });
    }
    return { absolute: full, root, relative: path.relative(root, full).split(path.sep).join('/'), exists };
  }
}

export interface AtomicWriteOptions {
  mode?: number;
  /** Fail with EEXIST instead of replacing an existing file (race-free create). */
  exclusive?: boolean;
}

/** Write through a temporary file in the same directory and rename, so readers never see half a file. */
export async function atomicWrite(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  let mode = options.mode;
  if (mode === undefined) {
    try {
      mode = (await fs.stat(file)).mode & 0o777;
    } catch {
      mode = 0o644;
    }
  }
  const handle = await fs.open(tmp, 'wx', mode);
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.exclusive) {
      // link() refuses an existing target, unlike rename(): no window in which a new file is replaced.
      await fs.link(tmp, file);
      await fs.rm(tmp, { force: true });
    } else {
      await fs.rename(tmp, file);
    }
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}
