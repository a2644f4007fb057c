import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  statSync,
  type Dirent,
  type Stats,
} from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_DATA_DIR } from './config';
import { AppError } from './errors';
import { SecretFiles, secretFileError, type ProtectedPath, type SecretFilesOptions, type SecretReason } from './secret-files';

/**
 * Linux names every open descriptor /proc/self/fd/N, and a path through it resolves from exactly
 * the directory that descriptor holds, whatever is renamed or swapped meanwhile: an openat() for a
 * runtime that has none. Without procfs (macOS) the checks fall back to comparing inodes.
 */
const PROC_FD = existsSync('/proc/self/fd') ? '/proc/self/fd' : undefined;

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

/** A directory opened and verified: its descriptor's real path is inside a root and not secret. */
export interface VerifiedDirectory {
  /** The real path, read from the descriptor. */
  real: string;
  /** A path that reaches exactly this directory while it is open (/proc/self/fd/N; `real` without procfs). */
  via: string;
  close(): void;
}

/** A file opened inside a verified directory (see Workspace.openFile). */
export interface OpenedFile {
  handle: fs.FileHandle;
  /** Its real path: the verified directory's plus its name. */
  absolute: string;
  root: string;
  /** Relative to that root, with forward slashes. */
  relative: string;
}

const enoent = (p: string) => Object.assign(new Error(`ENOENT: no such file or directory, open '${p}'`), { code: 'ENOENT' });

/** The path of `name` inside `dir`, for a dir that may be the filesystem root. */
const joinName = (dir: string, name: string) => (dir.endsWith(path.sep) ? dir + name : dir + path.sep + name);

/**
 * Confinement to WORKSPACE_ROOTS (decisions.md, "Security defaults"): NUL bytes and `..` segments
 * are refused, relative paths resolve against the first root, and symlinks are resolved before
 * the check, so a link cannot lead outside. Secret files (secret-files.ts) are refused anywhere in
 * the roots. Opening is checked again on the descriptor (openFile, openDirectory, writeFile), so a
 * directory swapped for a symlink between the check and the open cannot lead outside either.
 */
export class Workspace {
  /** Protected paths that lie strictly inside a root (the others cannot be reached, or a root is chosen inside them). */
  private readonly stores: ProtectedPath[];
  private readonly storePaths: Set<string>;
  /** Their parent directories: a walk looks an entry up only in one of these. */
  private readonly storeParents: Set<string>;

  private constructor(
    readonly roots: string[],
    readonly secretFiles: SecretFiles,
  ) {
    this.stores = secretFiles.protectedPaths.filter((p) => roots.some((r) => r !== p.path && within(r, p.path)));
    this.storePaths = new Set(this.stores.map((p) => p.path));
    this.storeParents = new Set(this.stores.map((p) => path.dirname(p.path)));
  }

  /**
   * `secretFiles`: the policy (secretFilesFrom(config) in a service); unset, the default names are
   * refused and the default DATA_DIR is protected.
   */
  static async open(roots: string[], secretFiles?: SecretFilesOptions): Promise<Workspace> {
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
    const policy = secretFiles ?? { protectedPaths: [{ path: DEFAULT_DATA_DIR, label: "the fleet's data directory (DATA_DIR)" }] };
    return new Workspace(resolved, new SecretFiles(policy));
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

  /** Resolve a caller's path to a real path inside a root, following symlinks first; secret files are refused. */
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
    const full = real === undefined ? absolute : path.join(real, ...rest);
    const root = this.roots.find((r) => within(r, full));
    if (!root) {
      throw new AppError('FORBIDDEN', `${field} "${input}" resolves (through a symlink) outside the workspace roots.`, {
        details: [{ path: field, message: 'symlink escape' }],
      });
    }
    // The real path and the path as written: a link named .env is refused as well as one to it.
    const secret = this.secretReason(full) ?? this.nameReason(absolute);
    if (secret) throw secretFileError(secret, field, input);
    if (!exists && options.mustExist) {
      throw new AppError('NOT_FOUND', `${field} "${input}" does not exist.`, { details: [{ path: field, message: 'not found' }] });
    }
    return { absolute: full, root, relative: path.relative(root, full).split(path.sep).join('/'), exists };
  }

  /** Why a real absolute path inside the roots is refused as secret, or undefined. */
  secretReason(absolute: string): SecretReason | undefined {
    for (const store of this.stores) {
      // a root chosen inside the store (log-mcp reading DATA_DIR/logs) is the operator's choice
      if (within(store.path, absolute) && !this.roots.some((r) => within(r, absolute) && within(store.path, r))) {
        return { kind: 'store', store };
      }
    }
    return this.nameReason(absolute);
  }

  /** The name check on every segment below each root that holds the path. */
  private nameReason(absolute: string): SecretReason | undefined {
    for (const r of this.roots) {
      if (absolute === r || !within(r, absolute)) continue;
      const reason = this.secretFiles.matchSegments(absolute.slice(r.endsWith(path.sep) ? r.length : r.length + 1));
      if (reason) return reason;
    }
    return undefined;
  }

  /**
   * For walks: whether entry `name` of the verified directory `dir` is secret (a secret name, or a
   * protected path). One pattern test and one set lookup per entry.
   */
  isSecretEntry(dir: string, name: string): boolean {
    if (this.secretFiles.matchName(name) !== undefined) return true;
    if (!this.storeParents.has(dir)) return false;
    const full = joinName(dir, name);
    return this.storePaths.has(full) && this.secretReason(full) !== undefined;
  }

  /**
   * The real path of an open descriptor, read from the descriptor itself, checked: inside a root
   * and not secret. Throws FORBIDDEN (outside, secret) or an ENOENT error (removed meanwhile).
   */
  verifyDescriptor(fd: number, opened: string, field = 'path'): string {
    let real: string;
    if (PROC_FD) {
      real = readlinkSync(`${PROC_FD}/${fd}`);
      if (real.endsWith(' (deleted)') && fstatSync(fd).nlink === 0) throw enoent(opened);
    } else {
      real = realpathSync.native(opened);
      const held = fstatSync(fd);
      const named = statSync(real);
      if (held.dev !== named.dev || held.ino !== named.ino) {
        throw new AppError('CONFLICT', `${field} "${opened}" changed while it was being opened; retry.`);
      }
    }
    if (!this.roots.some((r) => within(r, real))) {
      throw new AppError(
        'FORBIDDEN',
        `${field} "${opened}" led outside the workspace roots when it was opened (something on the way was swapped for a symlink); nothing was read or written.`,
        { details: [{ path: field, message: 'escaped while opening' }] },
      );
    }
    const reason = this.secretReason(real);
    if (reason) throw secretFileError(reason, field, opened);
    return real;
  }

  /**
   * Opens a directory (synchronously: microseconds) and verifies its descriptor. `noFollow` refuses
   * a symlink as the last segment (walks, which never follow links). Close it when done.
   */
  openDirectory(absolute: string, options: { noFollow?: boolean; field?: string } = {}): VerifiedDirectory {
    const fd = openSync(absolute, constants.O_RDONLY | constants.O_DIRECTORY | (options.noFollow ? constants.O_NOFOLLOW : 0));
    try {
      const real = this.verifyDescriptor(fd, absolute, options.field);
      return { real, via: PROC_FD ? `${PROC_FD}/${fd}` : real, close: () => closeSync(fd) };
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** A directory's entries, read through its verified descriptor (a walk's step: never follows a symlink). */
  readDirectorySync(absolute: string): { real: string; entries: Dirent[] } {
    const dir = this.openDirectory(absolute, { noFollow: true });
    try {
      return { real: dir.real, entries: readdirSync(dir.via, { withFileTypes: true }) };
    } finally {
      dir.close();
    }
  }

  /** readDirectorySync with the reading itself on the thread pool (deep walks, which must not hold the loop). */
  async readDirectory(absolute: string): Promise<{ real: string; entries: Dirent[] }> {
    const dir = this.openDirectory(absolute, { noFollow: true });
    try {
      return { real: dir.real, entries: await fs.readdir(dir.via, { withFileTypes: true }) };
    } finally {
      dir.close();
    }
  }

  /**
   * Open, then verify: opens a resolved path's parent directory and checks its descriptor, then
   * opens the name inside that very directory with O_NOFOLLOW, so no directory swapped for a symlink
   * after resolve() and no symlink put in the file's place can lead the open outside the roots or to
   * a secret file. Errno failures (ENOENT, ELOOP, EISDIR...) are thrown as they are.
   */
  async openFile(absolute: string, flags: number, mode?: number, field = 'path'): Promise<OpenedFile> {
    const root = this.roots.find((r) => r === absolute);
    if (root !== undefined) {
      // a root itself (a caller asking to read "."): opened as it is, for the caller to say it is a directory
      const handle = await fs.open(absolute, flags, mode);
      return this.checked(handle, () => ({ handle, absolute: this.verifyDescriptor(handle.fd, absolute, field), root, relative: '' }));
    }
    const name = path.basename(absolute);
    const dir = this.openDirectory(path.dirname(absolute), { field });
    let handle: fs.FileHandle;
    let real: string;
    try {
      real = joinName(dir.real, name);
      const reason = this.secretReason(real);
      if (reason) throw secretFileError(reason, field, absolute);
      handle = await fs.open(joinName(dir.via, name), flags | constants.O_NOFOLLOW, mode);
    } finally {
      dir.close();
    }
    // without procfs the open went by path: check the file's descriptor as well
    if (!PROC_FD) return this.checked(handle, () => this.opened(handle, this.verifyDescriptor(handle.fd, real, field)));
    return this.opened(handle, real);
  }

  private opened(handle: fs.FileHandle, real: string): OpenedFile {
    const root = this.roots.find((r) => within(r, real))!;
    return { handle, absolute: real, root, relative: path.relative(root, real).split(path.sep).join('/') };
  }

  private async checked(handle: fs.FileHandle, verify: () => OpenedFile): Promise<OpenedFile> {
    try {
      return verify();
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /**
   * atomicWrite inside the verified parent directory of a resolved path: the temporary file is
   * created, and renamed into place, relative to that directory's descriptor. Returns the written
   * file's stat (from its descriptor, not its path).
   */
  async writeFile(absolute: string, data: string | Uint8Array, options: AtomicWriteOptions = {}, field = 'path'): Promise<Stats> {
    const name = path.basename(absolute);
    const dir = this.openDirectory(path.dirname(absolute), { field });
    try {
      const reason = this.secretReason(joinName(dir.real, name));
      if (reason) throw secretFileError(reason, field, absolute);
      return await writeAtomicIn(dir.via, name, data, options);
    } finally {
      dir.close();
    }
  }

  /**
   * mkdir -p for a resolved path, one segment at a time, each made and opened inside the verified
   * descriptor of its parent, so no segment swapped for a symlink can make a directory outside.
   */
  makeDirectories(absolute: string, field = 'path'): void {
    let existing = absolute;
    const missing: string[] = [];
    while (!existsSync(existing)) {
      const parent = path.dirname(existing);
      if (parent === existing) break;
      missing.unshift(path.basename(existing));
      existing = parent;
    }
    let dir = this.openDirectory(existing, { field });
    try {
      for (const name of missing) {
        const reason = this.secretReason(joinName(dir.real, name));
        if (reason) throw secretFileError(reason, field, absolute);
        try {
          mkdirSync(joinName(dir.via, name));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
        const next = this.openDirectory(joinName(dir.via, name), { noFollow: true, field });
        dir.close();
        dir = next;
      }
    } finally {
      dir.close();
    }
  }
}

export interface AtomicWriteOptions {
  mode?: number;
  /** Fail with EEXIST instead of replacing an existing file (race-free create). */
  exclusive?: boolean;
}

/** Write through a temporary file in the same directory and rename, so readers never see half a file; the written file's stat. */
export function atomicWrite(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<Stats> {
  return writeAtomicIn(path.dirname(file), path.basename(file), data, options);
}

/** atomicWrite of `name` in `dir` (a plain directory path, or /proc/self/fd/N of a verified one). */
async function writeAtomicIn(dir: string, name: string, data: string | Uint8Array, options: AtomicWriteOptions): Promise<Stats> {
  const file = path.join(dir, name);
  const tmp = path.join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  let mode = options.mode;
  if (mode === undefined) {
    try {
      mode = (await fs.stat(file)).mode & 0o777;
    } catch {
      mode = 0o644;
    }
  }
  const handle = await fs.open(tmp, 'wx', mode);
  let written: Stats;
  try {
    try {
      await handle.writeFile(data);
      await handle.sync();
      written = await handle.stat();
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
  return written;
}
