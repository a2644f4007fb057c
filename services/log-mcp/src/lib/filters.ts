import { AppError } from '@mcp-fleet/kit';
import { z } from 'zod';
import { type ParsedLine } from './parse-line';

const isoDate = (what: string) =>
  z
    .string()
    .max(64)
    .refine((v) => !Number.isNaN(Date.parse(v)), 'an ISO 8601 date-time such as 2025-01-31T12:00:00Z')
    .describe(what);

/** Selection fields shared by log_search and log_analysis. */
export const selectionShape = {
  files: z
    .array(z.string().min(1).max(1024))
    .min(1)
    .max(50)
    .optional()
    .describe(
      'Log files to read: paths (absolute or relative to the first log root) or globs (*, **, ?, [..]); a glob without "/" matches file names at any depth. Default: every *.log, *.jsonl, *.ndjson, *.txt, *.out, *.err file (and rotations like .log.1) under the log roots.',
    ),
  service: z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9_.-]+$/, 'a service id such as system-mcp')
    .optional()
    .describe('Only lines from this service: the "service" field of JSON lines, or the file name (<service>.log) for plain lines.'),
  from: isoDate('Only lines at or after this time (ISO 8601; no zone means UTC). Lines without a timestamp are then skipped.').optional(),
  to: isoDate('Only lines before this time (ISO 8601).').optional(),
};

export interface TimeRange {
  from?: number;
  to?: number;
}

export function timeRange(args: { from?: string; to?: string }): TimeRange {
  const range = { from: args.from ? Date.parse(args.from) : undefined, to: args.to ? Date.parse(args.to) : undefined };
  if (range.from !== undefined && range.to !== undefined && range.from >= range.to) {
    throw new AppError('VALIDATION_ERROR', '"from" must be earlier than "to".', { details: [{ path: 'from', message: 'after to' }] });
  }
  return range;
}

export function inRange(line: ParsedLine, range: TimeRange): boolean {
  if (range.from === undefined && range.to === undefined) return true;
  if (line.time === undefined) return false;
  return (range.from === undefined || line.time >= range.from) && (range.to === undefined || line.time < range.to);
}

/** The service a line belongs to: its JSON "service" field, else the file name before its extension. */
export function lineService(line: ParsedLine, fileBase: string): string {
  return line.service ?? fileBase;
}

export function fileBaseName(absolute: string): string {
  const name = absolute.slice(absolute.lastIndexOf('/') + 1);
  const dot = name.indexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}
