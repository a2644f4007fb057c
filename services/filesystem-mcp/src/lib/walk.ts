import type { Dirent } from 'node:fs';
import path from 'node:path';
import type { Workspace } from '@mcp-fleet/kit/workspace';

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface WalkEntry {
  absolute: string;
  /** Relative to the walk's start, with forward slashes. */
  relative: string;
  name: string;
  type: EntryType;
  depth: number;
  /** A secret file or directory (SECRET_FILES, DATA_DIR, SECRET_PATHS): listed by name only, never read or entered. */
  secret: boolean;
}

export interface WalkOptions {
  /** Every directory is read through its verified descriptor, and secret entries are marked. */
  ws: Workspace;
  /** 1 = the start directory's children only. */
  maxDepth: number;
  includeHidden: boolean;
  signal?: AbortSignal;
}

export interface WalkStats {
  /** Directories that could not be read (permissions, removed meanwhile). */
  unreadable: number;
}

export function entryType(d: Dirent): EntryType {
  if (d.isSymbolicLink()) return 'symlink';
  if (d.isDirectory()) return 'directory';
  if (d.isFile()) return 'file';
  return 'other';
}

/**
 * Pre-order walk, children sorted by name, that never follows a symlink (a symlinked directory is
 * reported as a symlink and not entered, and each directory is opened O_NOFOLLOW and its descriptor
 * checked against the roots before it is read), so it cannot leave the directory it starts in.
 * Secret directories are reported and not entered. The consumer stops it by breaking out of the
 * loop; caps live with the consumer.
 */
export async function* walk(start: string, options: WalkOptions, stats: WalkStats): AsyncGenerator<WalkEntry> {
  yield* walkDir(start, '', 0, options, stats);
}

/**
 * The start directory's children only (what walk yields with maxDepth 1), read and answered
 * synchronously: an async generator costs a few promise turns per entry, a tenth of a plain
 * listing's CPU (issue 14).
 */
export function children(start: string, options: Omit<WalkOptions, 'maxDepth'>, stats: WalkStats): WalkEntry[] {
  try {
    const { real, entries } = options.ws.readDirectorySync(start);
    return entriesOf(real, '', 0, entries, options);
  } catch {
    stats.unreadable++;
    return [];
  }
}

/** A directory below the start, read through the thread pool (unreadable: none, counted). */
async function deeperEntries(dir: string, rel: string, depth: number, options: WalkOptions, stats: WalkStats): Promise<WalkEntry[]> {
  try {
    const { real, entries } = await options.ws.readDirectory(dir);
    return entriesOf(real, rel, depth, entries, options);
  } catch {
    stats.unreadable++;
    return [];
  }
}

/** A directory's entries as the walk reports them: sorted by name, hidden names left out unless asked for. */
function entriesOf(dir: string, rel: string, depth: number, dirents: Dirent[], options: Omit<WalkOptions, 'maxDepth'>): WalkEntry[] {
  dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // dir is the real path read from the directory's descriptor, and a name has no separator
  const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep;
  const out: WalkEntry[] = [];
  for (const d of dirents) {
    if (!options.includeHidden && d.name.startsWith('.')) continue;
    out.push({
      absolute: prefix + d.name,
      relative: rel === '' ? d.name : `${rel}/${d.name}`,
      name: d.name,
      type: entryType(d),
      depth: depth + 1,
      secret: options.ws.isSecretEntry(dir, d.name),
    });
  }
  return out;
}

async function* walkDir(dir: string, rel: string, depth: number, options: WalkOptions, stats: WalkStats): AsyncGenerator<WalkEntry> {
  if (options.signal?.aborted) return;
  // The start directory is read synchronously (children): one local readdir costs microseconds,
  // while a thread-pool round trip cost file_list a third of its CPU (issue 14, bench
  // vs-supergateway). Deeper directories (a recursive walk) go through the pool, so a large tree
  // never holds the loop.
  const entries = depth === 0 ? children(dir, options, stats) : await deeperEntries(dir, rel, depth, options, stats);
  for (const entry of entries) {
    if (options.signal?.aborted) return;
    yield entry;
    // Pre-order: a directory's subtree comes right after it.
    if (entry.type === 'directory' && !entry.secret && entry.depth < options.maxDepth) {
      yield* walkDir(entry.absolute, entry.relative, entry.depth, options, stats);
    }
  }
}
