import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

const SKIP_DIRS = new Set(['__pycache__', 'node_modules', 'venv', 'site-packages', 'build', 'dist']);

export interface WalkResult {
  /** Paths relative to root, forward slashes, sorted. */
  files: string[];
  truncated: boolean;
}

export interface WalkPythonOptions {
  /**
   * Reads one directory (default: fs.readdir). code-graph-mcp reads through the kit Workspace's
   * verified descriptors, so a directory swapped for a symlink out of the roots is not read.
   */
  readDirectory?: (dir: string) => Promise<Dirent[]>;
  /** Entries left out whole, never read or entered (the Workspace's secret files and DATA_DIR). */
  skip?: (dir: string, name: string) => boolean;
}

const readDirectory = (dir: string) => fs.readdir(dir, { withFileTypes: true });

/** Python files under root, skipping hidden directories, virtualenvs, caches and symlinks; at most maxFiles. */
export async function walkPythonFiles(root: string, maxFiles: number, options: WalkPythonOptions = {}): Promise<WalkResult> {
  const read = options.readDirectory ?? readDirectory;
  const files: string[] = [];
  const queue = [''];
  let truncated = false;
  while (queue.length) {
    const rel = queue.shift()!;
    const dir = path.join(root, rel);
    let entries;
    try {
      entries = await read(dir);
    } catch {
      continue;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      if (options.skip?.(dir, e.name)) continue;
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!e.name.startsWith('.') && !SKIP_DIRS.has(e.name)) queue.push(childRel);
      } else if (e.isFile() && /\.pyi?$/.test(e.name)) {
        if (files.length >= maxFiles) {
          truncated = true;
          break;
        }
        files.push(childRel);
      }
    }
  }
  return { files: files.sort(), truncated };
}
