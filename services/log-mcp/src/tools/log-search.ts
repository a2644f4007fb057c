import { createHash } from 'node:crypto';
import { AppError, defineTool, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import { type Config } from '../config';
import { BoundedRegex, checkRegex } from '../lib/bounded-regex';
import { fileBaseName, inRange, lineService, selectionShape, timeRange } from '../lib/filters';
import { readLines, type RawLine } from '../lib/line-reader';
import { type LogRoots } from '../lib/log-files';
import { LEVELS, type ParsedLine, parseLine, SEVERITY } from '../lib/parse-line';
import { scrubObject, scrubText } from '../lib/scrub';

const MAX_MESSAGE = 2000;
const MAX_RAW = 4000;
const BATCH_LINES = 500;
const BATCH_BYTES = 1024 * 1024;
/** A file last written before `from` minus this slack cannot hold lines in the range. */
const MTIME_SLACK_MS = 60_000;

const levelEnum = z.enum(LEVELS);

const input = z
  .object({
    query: z.string().min(1).max(1000).optional().describe('Plain text the line must contain (case-insensitive unless caseSensitive).'),
    regex: z
      .string()
      .min(1)
      .max(10_000)
      .optional()
      .describe(
        'JavaScript regular expression the line must match (at most LOG_REGEX_MAX_LENGTH characters; runs under LOG_REGEX_TIMEOUT_MS).',
      ),
    caseSensitive: z.boolean().default(false).describe('Match query/regex case-sensitively.'),
    level: z
      .union([levelEnum, z.array(levelEnum).min(1).max(6)])
      .optional()
      .describe(
        'Only these levels (fatal, error, warn, info, debug, trace; winston http/verbose/silly and pino numbers are mapped to them).',
      ),
    minLevel: levelEnum.optional().describe('Only this level or more severe (e.g. warn keeps warn, error, fatal).'),
    ...selectionShape,
    limit: pageShape.limit,
    cursor: z.string().max(8192).optional().describe('nextCursor from the previous page (valid only with the same filters).'),
  })
  .strict()
  .superRefine((args, ctx) => {
    if (args.query !== undefined && args.regex !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['regex'], message: 'give query or regex, not both' });
    }
  });

type Args = z.output<typeof input>;

interface Position {
  f: string;
  o: number;
  n: number;
}

function filterHash(args: Args): string {
  const { limit: _limit, cursor: _cursor, ...filters } = args;
  return createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16);
}

function encodePosition(pos: Position, hash: string): string {
  return Buffer.from(JSON.stringify({ v: 1, ...pos, h: hash })).toString('base64url');
}

function decodePosition(cursor: string | undefined, hash: string): Position | undefined {
  if (!cursor) return undefined;
  let v: { v?: unknown; f?: unknown; o?: unknown; n?: unknown; h?: unknown } | undefined;
  try {
    v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    v = undefined;
  }
  const valid =
    v?.v === 1 &&
    typeof v.f === 'string' &&
    typeof v.o === 'number' &&
    Number.isInteger(v.o) &&
    v.o >= 0 &&
    typeof v.n === 'number' &&
    Number.isInteger(v.n) &&
    v.n >= 0;
  if (!valid) {
    throw new AppError('VALIDATION_ERROR', 'The cursor is not one this service issued; start again without a cursor.', {
      details: [{ path: 'cursor', message: 'unrecognised cursor' }],
    });
  }
  if (v!.h !== hash) {
    throw new AppError(
      'VALIDATION_ERROR',
      'The cursor belongs to a search with different filters; repeat the same filters or start again without a cursor.',
      {
        details: [{ path: 'cursor', message: 'filters changed' }],
      },
    );
  }
  return { f: v!.f as string, o: v!.o as number, n: v!.n as number };
}

interface Candidate {
  file: string;
  lineNo: number;
  raw: RawLine;
  parsed: ParsedLine;
  scrubbed: string;
}

function present(c: Candidate) {
  const message = scrubText(c.parsed.message);
  return {
    file: c.file,
    line: c.lineNo,
    offset: c.raw.offset,
    timestamp: c.parsed.time === undefined ? null : new Date(c.parsed.time).toISOString(),
    level: c.parsed.level ?? null,
    service: lineService(c.parsed, fileBaseName(c.file)),
    message: message.length > MAX_MESSAGE ? message.slice(0, MAX_MESSAGE) : message,
    raw: c.scrubbed.length > MAX_RAW ? c.scrubbed.slice(0, MAX_RAW) : c.scrubbed,
    json: c.parsed.json,
    ...(c.raw.cut || message.length > MAX_MESSAGE || c.scrubbed.length > MAX_RAW ? { lineTruncated: true } : {}),
  };
}

export function logSearchTool(config: Config, roots: LogRoots) {
  return defineTool({
    name: 'log_search',
    title: 'Search logs',
    description:
      'Search log files under the log roots (LOG_ROOTS; by default the fleet\'s own logs in DATA_DIR/logs): JSON lines (winston, pino, bunyan) and plain "<timestamp> <LEVEL> message" or logfmt lines. Filter by plain text or regex, level, service and time range. Results come in file order (files sorted by path, lines oldest first), limit 1-500 (default 50) with nextCursor. Caps: LOG_MAX_FILES files and LOG_MAX_SCAN_BYTES bytes per call (then truncated: true with a nextCursor to continue), lines cut at LOG_MAX_LINE_BYTES, regex at most LOG_REGEX_MAX_LENGTH characters and LOG_REGEX_TIMEOUT_MS of matching in a worker thread (then TIMEOUT; at most 4 regex searches at once, then RATE_LIMITED). Secrets in lines are redacted before matching and output.',
    input,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const range = timeRange(args);
      const hash = filterHash(args);
      const start = decodePosition(args.cursor, hash);
      if (args.regex !== undefined) checkRegex(args.regex, args.caseSensitive, config.LOG_REGEX_MAX_LENGTH);
      const selection = await roots.select(args.files);
      const levels = args.level === undefined ? undefined : new Set(Array.isArray(args.level) ? args.level : [args.level]);
      const minSeverity = args.minLevel === undefined ? undefined : SEVERITY[args.minLevel];
      const needle = args.query === undefined ? undefined : args.caseSensitive ? args.query : args.query.toLowerCase();

      const matcher =
        args.regex === undefined
          ? undefined
          : new BoundedRegex({
              source: args.regex,
              caseSensitive: args.caseSensitive,
              budgetMs: config.LOG_REGEX_TIMEOUT_MS,
              maxLength: config.LOG_REGEX_MAX_LENGTH,
            });

      const matches: ReturnType<typeof present>[] = [];
      let batch: Candidate[] = [];
      let batchBytes = 0;
      let scannedBytes = 0;
      let scannedLines = 0;
      let filesScanned = 0;
      let next: Position | undefined;
      let truncatedReason: 'scan_limit' | undefined;

      /** Evaluates pending candidates in order; true once the page is full. */
      const flush = async (): Promise<boolean> => {
        const pending = batch;
        batch = [];
        batchBytes = 0;
        const hits = matcher
          ? await matcher.match(
              pending.map((c) => c.scrubbed),
              ctx.signal,
            )
          : pending.map((_, i) => i);
        for (const i of hits) {
          const c = pending[i];
          matches.push(present(c));
          if (matches.length >= args.limit) {
            next = { f: c.file, o: c.raw.end, n: c.lineNo };
            return true;
          }
        }
        return false;
      };

      try {
        outer: for (const file of selection.files) {
          if (start && file.absolute < start.f) continue;
          const resume = start && file.absolute === start.f && start.o <= file.size ? start : undefined;
          if (range.from !== undefined && file.mtimeMs < range.from - MTIME_SLACK_MS) continue;
          filesScanned++;
          const base = fileBaseName(file.absolute);
          let lineNo = resume?.n ?? 0;
          for await (const raw of readLines(() => roots.open(file.absolute), {
            start: resume?.o ?? 0,
            endOffset: file.size,
            maxLineBytes: config.LOG_MAX_LINE_BYTES,
            signal: ctx.signal,
          })) {
            lineNo++;
            const bytes = raw.end - raw.offset;
            if (scannedBytes + bytes > config.LOG_MAX_SCAN_BYTES) {
              if (await flush()) break outer;
              next = { f: file.absolute, o: raw.offset, n: lineNo - 1 };
              truncatedReason = 'scan_limit';
              break outer;
            }
            scannedBytes += bytes;
            scannedLines++;
            const parsed = parseLine(raw.text);
            if (levels && (!parsed.level || !levels.has(parsed.level))) continue;
            if (minSeverity !== undefined && (!parsed.level || SEVERITY[parsed.level] > minSeverity)) continue;
            if (args.service && lineService(parsed, base) !== args.service) continue;
            if (!inRange(parsed, range)) continue;
            const scrubbed = parsed.object ? scrubObject(parsed.object) : scrubText(raw.text);
            if (needle !== undefined && !(args.caseSensitive ? scrubbed : scrubbed.toLowerCase()).includes(needle)) continue;
            batch.push({ file: file.absolute, lineNo, raw, parsed, scrubbed });
            batchBytes += scrubbed.length;
            if (!matcher || batch.length >= BATCH_LINES || batchBytes >= BATCH_BYTES) {
              if (await flush()) break outer;
            }
          }
          if (await flush()) break;
        }
      } finally {
        await matcher?.close();
      }

      const truncated = truncatedReason !== undefined || selection.truncated;
      return {
        matches,
        scannedBytes,
        scannedLines,
        filesScanned,
        filesSelected: selection.files.length,
        ...(truncated ? { truncated: true, truncatedReason: truncatedReason ?? 'file_limit' } : {}),
        ...(next ? { nextCursor: encodePosition(next, hash) } : {}),
      };
    },
  });
}
