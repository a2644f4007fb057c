import type fs from 'node:fs/promises';
import { constants, type Stats } from 'node:fs';
import { AppError } from '@mcp-fleet/kit';
import type { Workspace } from '@mcp-fleet/kit/workspace';
import { fsCall } from './fs-errors';

/**
 * Open a resolved path for reading, verified on the descriptor (Workspace.openFile: no directory
 * or symlink swapped in after the check leads outside the roots or to a secret file), without
 * blocking on a FIFO.
 */
export async function openRegularFile(
  ws: Workspace,
  absolute: string,
  shownPath: string,
): Promise<{ handle: fs.FileHandle; size: number; stat: Stats }> {
  const { handle } = await fsCall(shownPath, () => ws.openFile(absolute, constants.O_RDONLY | constants.O_NONBLOCK));
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) {
      throw new AppError('VALIDATION_ERROR', `"${shownPath}" is a directory; use file_list (or file_analyze) for directories.`, {
        details: [{ path: 'path', message: 'is a directory' }],
      });
    }
    if (!stat.isFile()) {
      throw new AppError(
        'VALIDATION_ERROR',
        `"${shownPath}" is not a regular file (device, socket or FIFO); only regular files can be read.`,
        {
          details: [{ path: 'path', message: 'not a regular file' }],
        },
      );
    }
    return { handle, size: stat.size, stat };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

const SNIFF_BYTES = 8000;

/** Text unless it has a NUL byte near the start or is not valid UTF-8 (the git heuristic plus a UTF-8 check). */
export function looksBinary(buf: Uint8Array): boolean {
  const head = buf.subarray(0, SNIFF_BYTES);
  if (head.includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, completeUtf8Length(buf)));
    return false;
  } catch {
    return true;
  }
}

/** Length of buf without a trailing, incomplete UTF-8 sequence (so a cut read still decodes cleanly). */
export function completeUtf8Length(buf: Uint8Array): number {
  const n = buf.length;
  for (let back = 1; back <= Math.min(4, n); back++) {
    const b = buf[n - back];
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

/** A MIME type guessed from the extension (the kit's table, shared with the marketplace's skill files). */
export { guessMime } from '@mcp-fleet/kit';
