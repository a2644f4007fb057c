import fs from 'node:fs/promises';
import path from 'node:path';

const SKIP_DIRS = new Set(['__pycache__', 'node_modules', 'venv', 'site-packages', 'build', 'dist']);

export interface WalkResult {
  /** Paths relative to root, forward slashes, sorted. */
  files: string[];
  truncated: boolean;
}

/** Python files under root, skipping hidden directories, virtualenvs, caches and symlinks; at most maxFiles. */
export async function walkPythonFiles(root: string, maxFiles: number): Promise<WalkResult> {
  const files: string[] = [];
  const queue = [''];
  let truncated = false;
  while (queue.length) {
    const rel = queue.shift()!;
    let entries;
    try {
      entries = await fs.readdir(path.join(root, rel), { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
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
