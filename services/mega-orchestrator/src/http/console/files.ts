/**
 * The files the console reads: the audit log and the fleet's JSON logs, both JSON lines the gateway
 * and the services write. Only paths the gateway names itself are opened (never one built from a
 * request beyond a known service id), without following a symbolic link, and only regular files;
 * what is read is bounded (the last TAIL_BYTES, lines cut at LINE_MAX characters).
 */
import fs from 'node:fs/promises';
import { constants } from 'node:fs';

export const TAIL_BYTES = 256 * 1024;
export const LINE_MAX = 16 * 1024;

export type FileHandle = fs.FileHandle;

/** Opens a regular file for reading, refusing a symbolic link; undefined when there is none. */
export async function openRegular(file: string): Promise<FileHandle | undefined> {
  let handle: FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') return undefined;
    throw err;
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    return undefined;
  }
  return handle;
}

/** Whole lines of text, the last one kept back when it is not finished; each cut to LINE_MAX. */
export function splitLines(text: string): { lines: string[]; rest: string } {
  const parts = text.split('\n');
  const rest = parts.pop() ?? '';
  return { lines: parts.filter((l) => l.trim() !== '').map((l) => (l.length > LINE_MAX ? l.slice(0, LINE_MAX) : l)), rest };
}

/** The complete lines among the last `bytes` of an open file, and where its end was. */
export async function tailLines(handle: FileHandle, bytes = TAIL_BYTES): Promise<{ lines: string[]; end: number }> {
  const { size } = await handle.stat();
  const start = Math.max(0, size - bytes);
  const buf = Buffer.alloc(size - start);
  const { bytesRead } = await handle.read(buf, 0, buf.length, start);
  let text = buf.subarray(0, bytesRead).toString('utf8');
  // Started mid-file: the first line is a piece of one.
  if (start > 0) text = text.slice(text.indexOf('\n') + 1);
  const { lines, rest } = splitLines(text);
  return { lines, end: start + bytesRead - Buffer.byteLength(rest) };
}

/** A JSON line as an object; a line that is not one becomes {message: line}. */
export function parseLine(line: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(line);
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // not JSON: shown as its text
  }
  return { message: line };
}
