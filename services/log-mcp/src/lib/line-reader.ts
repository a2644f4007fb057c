import type { FileHandle } from 'node:fs/promises';

export interface RawLine {
  text: string;
  /** Byte offset where the line starts. */
  offset: number;
  /** Byte offset just after the line and its newline: where reading resumes. */
  end: number;
  /** The line was longer than maxLineBytes and was cut. */
  cut: boolean;
}

const CHUNK = 256 * 1024;

/**
 * Lines of a file (opened by `open`: LogRoots.open, verified on its descriptor) from a byte offset, with their offsets. A line over `maxLineBytes` is cut (the
 * rest skipped up to its newline). Stops at `endOffset` (the file size when the call started), so a
 * file being appended to gives a stable answer.
 */
export async function* readLines(
  open: () => Promise<FileHandle>,
  options: { start: number; endOffset: number; maxLineBytes: number; signal?: AbortSignal; skipPartialFirst?: boolean },
): AsyncGenerator<RawLine> {
  const handle = await open();
  try {
    const buf = Buffer.alloc(CHUNK);
    let pos = options.start;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let lineStart = options.start;
    let cut = false;
    let skipping = options.skipPartialFirst === true && options.start > 0;
    const emit = (): RawLine => {
      let data = pending.length === 1 ? pending[0] : Buffer.concat(pending);
      if (data.length > 0 && data[data.length - 1] === 0x0d) data = data.subarray(0, data.length - 1);
      return { text: data.toString('utf8'), offset: lineStart, end: lineStart, cut };
    };
    while (pos < options.endOffset) {
      options.signal?.throwIfAborted();
      const want = Math.min(CHUNK, options.endOffset - pos);
      const { bytesRead } = await handle.read(buf, 0, want, pos);
      if (bytesRead === 0) break;
      let from = 0;
      while (from < bytesRead) {
        const nl = buf.indexOf(0x0a, from);
        const stop = nl === -1 || nl >= bytesRead ? bytesRead : nl;
        if (!skipping) {
          const room = options.maxLineBytes - pendingBytes;
          const take = Math.min(stop - from, Math.max(room, 0));
          if (take > 0) {
            pending.push(Buffer.from(buf.subarray(from, from + take)));
            pendingBytes += take;
          }
          if (stop - from > take) cut = true;
        }
        if (stop === bytesRead) break;
        // newline at `stop`
        const end = pos + stop + 1;
        if (skipping) skipping = false;
        else {
          const line = emit();
          line.end = end;
          yield line;
        }
        pending = [];
        pendingBytes = 0;
        cut = false;
        lineStart = end;
        from = stop + 1;
      }
      pos += bytesRead;
    }
    if (!skipping && (pendingBytes > 0 || cut)) {
      const line = emit();
      line.end = pos;
      yield line;
    }
  } finally {
    await handle.close();
  }
}
