import type { ResolvedPath, Workspace } from '@mcp-fleet/kit/workspace';
import { z } from 'zod';
import { fsCall } from './fs-errors';

/** Caps every tool states in its description (from config.ts). */
export interface FsLimits {
  maxReadBytes: number;
  /** FILE_MAX_WRITE_BYTES, lowered to the request body limit. */
  maxWriteBytes: number;
  listMaxEntries: number;
  searchMaxFiles: number;
  searchMaxFileBytes: number;
  searchTimeoutMs: number;
  analyzeMaxEntries: number;
  analyzeMaxBytes: number;
}

export interface FsDeps {
  ws: Workspace;
  limits: FsLimits;
}

/** The caller's path argument: relative to the first root, or absolute inside any root. */
export const pathArg = (what: string) =>
  z.string().max(4096).describe(`${what} Relative paths resolve against the first workspace root; absolute paths must lie inside a root.`);

/** Confine a caller path (NUL, "..", outside roots, symlink escapes refused) with errno failures mapped. */
export function resolveIn(deps: FsDeps, input: string, mustExist: boolean): Promise<ResolvedPath> {
  return fsCall(input, () => deps.ws.resolve(input, { mustExist }));
}

/** How a resolved path is shown to callers: relative to its root, "." for the root itself. */
export function shown(relative: string): string {
  return relative === '' ? '.' : relative;
}

export function iso(date: Date): string | null {
  return Number.isFinite(date.getTime()) && date.getTime() > 0 ? date.toISOString() : null;
}

/** A human size for messages: 5242880 -> "5 MiB". */
export function humanBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
