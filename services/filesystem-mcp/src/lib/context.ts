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

const MS_PER_DAY = 86_400_000;
/** 10000-01-01T00:00:00.000Z: from here on toISOString writes a six-digit year. */
const YEAR_10000 = 253_402_300_800_000;
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
/** The last day written and its "YYYY-MM-DDT" (a listing's entries mostly share a few days). */
let lastDay = Number.NaN;
let lastDayText = '';

/**
 * A file time as toISOString writes it (null for none or before 1970), without toISOString on each:
 * its C++ formatting took ~1.3 µs a call, and file_list writes one per entry (6.6% of
 * filesystem-mcp's busy time listing 20 files). The time of day comes from tables, the date from
 * toISOString once per day; ~0.3 µs.
 */
export function iso(date: Date): string | null {
  const t = date.getTime();
  if (!Number.isFinite(t) || t <= 0) return null;
  if (t >= YEAR_10000) return date.toISOString();
  const day = Math.floor(t / MS_PER_DAY);
  if (day !== lastDay) {
    lastDayText = new Date(day * MS_PER_DAY).toISOString().slice(0, 11);
    lastDay = day;
  }
  let rest = t - day * MS_PER_DAY;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${lastDayText}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[rest - seconds * 1000]}Z`;
}

/** A human size for messages: 5242880 -> "5 MiB". */
export function humanBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
