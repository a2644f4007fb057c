import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { defineTool } from '@mcp-fleet/kit';
import { type ResolvedPath } from '@mcp-fleet/kit/workspace';
import { z } from 'zod';
import { guessMime, openRegularFile } from '../lib/content';
import { humanBytes, iso, pathArg, resolveIn, shown, type FsDeps } from '../lib/context';
import { fsCall } from '../lib/fs-errors';
import { walk } from '../lib/walk';

const CHUNK = 64 * 1024;
const isSpace = (b: number) => b === 0x20 || (b >= 0x09 && b <= 0x0d);

export function createFileAnalyzeTool(deps: FsDeps) {
  const { analyzeMaxBytes, analyzeMaxEntries, searchTimeoutMs } = deps.limits;

  const analyzeFile = async (resolved: ResolvedPath, name: string, signal: AbortSignal) => {
    const { handle, size, stat } = await openRegularFile(deps.ws, resolved.absolute, name);
    const hash = createHash('sha256');
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let utf8 = true;
    let nul = false;
    let lines = 0;
    let words = 0;
    let inWord = false;
    let last = -1;
    let read = 0;
    try {
      const buf = Buffer.alloc(CHUNK);
      const budget = Math.min(size, analyzeMaxBytes);
      while (read < budget) {
        signal.throwIfAborted();
        const { bytesRead } = await handle.read(buf, 0, Math.min(CHUNK, budget - read), read);
        if (bytesRead === 0) break;
        const chunk = buf.subarray(0, bytesRead);
        hash.update(chunk);
        if (utf8) {
          try {
            decoder.decode(chunk, { stream: true });
          } catch {
            utf8 = false;
          }
        }
        for (const b of chunk) {
          if (b === 0x0a) lines++;
          if (b === 0) nul = true;
          const space = isSpace(b);
          if (!space && !inWord) words++;
          inWord = !space;
        }
        last = chunk[bytesRead - 1];
        read += bytesRead;
      }
      if (utf8 && read === size) {
        try {
          decoder.decode(); // a file that ends inside a character is not UTF-8
        } catch {
          utf8 = false;
        }
      }
    } finally {
      await handle.close();
    }
    if (read > 0 && last !== 0x0a) lines++;
    const binary = nul || !utf8;
    const complete = read >= size;
    return {
      path: name,
      root: resolved.root,
      type: 'file' as const,
      size,
      modifiedAt: iso(stat.mtime),
      createdAt: iso(stat.birthtime),
      mode: (stat.mode & 0o7777).toString(8).padStart(4, '0'),
      extension: path.extname(resolved.absolute).toLowerCase() || null,
      mimeType: guessMime(resolved.absolute, binary),
      binary,
      encoding: binary ? ('binary' as const) : ('utf8' as const),
      lines: binary ? null : lines,
      words: binary ? null : words,
      sha256: complete ? hash.digest('hex') : null,
      bytesAnalyzed: read,
      truncated: !complete,
    };
  };

  const analyzeDirectory = async (resolved: ResolvedPath, name: string, signal: AbortSignal) => {
    const stat = await fsCall(name, () => fs.stat(resolved.absolute));
    const counts = { entries: 0, files: 0, directories: 0, symlinks: 0, other: 0, hidden: 0, secret: 0, totalBytes: 0, maxDepth: 0 };
    const stats = { unreadable: 0 };
    const deadline = Date.now() + searchTimeoutMs;
    let truncated = false;
    const walkOptions = { ws: deps.ws, maxDepth: Number.POSITIVE_INFINITY, includeHidden: true, signal };
    for await (const entry of walk(resolved.absolute, walkOptions, stats)) {
      if (counts.entries >= analyzeMaxEntries || Date.now() > deadline) {
        truncated = true;
        break;
      }
      counts.entries++;
      counts.maxDepth = Math.max(counts.maxDepth, entry.depth);
      if (entry.name.startsWith('.')) counts.hidden++;
      // secret entries are counted, neither measured nor entered
      if (entry.secret) counts.secret++;
      else if (entry.type === 'file') {
        counts.files++;
        try {
          counts.totalBytes += (await fs.lstat(entry.absolute)).size;
        } catch {
          // removed meanwhile
        }
      } else if (entry.type === 'directory') counts.directories++;
      else if (entry.type === 'symlink') counts.symlinks++;
      else counts.other++;
    }
    return {
      path: name,
      root: resolved.root,
      type: 'directory' as const,
      modifiedAt: iso(stat.mtime),
      createdAt: iso(stat.birthtime),
      mode: (stat.mode & 0o7777).toString(8).padStart(4, '0'),
      ...counts,
      truncated,
      ...(stats.unreadable > 0 ? { unreadableDirectories: stats.unreadable } : {}),
    };
  };

  return defineTool({
    name: 'file_analyze',
    title: 'Analyze a file or directory',
    description:
      `Metadata and analysis of a path inside the workspace roots. A file: size, dates, permission mode, extension, MIME type guessed ` +
      `from the extension, binary or UTF-8, line and word counts and SHA-256, over at most ${humanBytes(analyzeMaxBytes)} ` +
      `(FILE_ANALYZE_MAX_BYTES; a bigger file is analyzed in part, says truncated: true and has no sha256). ` +
      `A directory: counts of entries, files, subdirectories, symlinks and total file bytes over a walk of at most ` +
      `${analyzeMaxEntries} entries (FILE_ANALYZE_MAX_ENTRIES) or ${searchTimeoutMs} ms, truncated: true when cut. Symlinks are not followed. ` +
      `Secret files and directories (SECRET_FILES, DATA_DIR) are refused, and in a directory counted as secret, never measured or entered.`,
    input: z
      .object({
        path: pathArg('File or directory to analyze (default: the first root).').default('.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const resolved = await resolveIn(deps, args.path, true);
      const name = shown(resolved.relative);
      const st = await fsCall(name, () => fs.stat(resolved.absolute));
      return st.isDirectory() ? analyzeDirectory(resolved, name, ctx.signal) : analyzeFile(resolved, name, ctx.signal);
    },
  });
}
