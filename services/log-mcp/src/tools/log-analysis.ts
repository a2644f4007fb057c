import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { type Config } from '../config';
import { ANOMALY_RULE, autoBucket, BUCKETS, bucketMs, detectAnomalies, messageShape, TimeSeries } from '../lib/analysis';
import { fileBaseName, inRange, lineService, selectionShape, timeRange } from '../lib/filters';
import { readLines } from '../lib/line-reader';
import { type LogRoots } from '../lib/log-files';
import { LEVELS, type Level, parseLine } from '../lib/parse-line';
import { scrubText } from '../lib/scrub';

const MAX_BUCKETS = 1000;
const MAX_SHAPES = 5000;
const MAX_EXAMPLE = 500;

const input = z
  .object({
    ...selectionShape,
    bucket: z
      .enum(BUCKETS)
      .optional()
      .describe(
        'Time bucket for the series; default: the smallest that covers the data in about 120 buckets. Widened automatically past 1000 buckets.',
      ),
    top: z.number().int().min(1).max(100).default(10).describe('How many error shapes to return (1-100, default 10).'),
    minErrors: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(5)
      .describe('Anomaly rule: fewest errors in a bucket to flag it (default 5).'),
    sensitivity: z
      .number()
      .min(0.5)
      .max(10)
      .default(3)
      .describe("Anomaly rule: standard deviations above the other buckets' mean (default 3)."),
    minRatio: z
      .number()
      .min(1)
      .max(100)
      .default(2)
      .describe("Anomaly rule: at least this multiple of the other buckets' mean (default 2)."),
  })
  .strict();

interface ShapeStats {
  shape: string;
  count: number;
  firstSeen?: number;
  lastSeen?: number;
  example: string;
  services: Set<string>;
  levels: Set<Level>;
}

const iso = (t: number | undefined) => (t === undefined ? null : new Date(t).toISOString());

export function logAnalysisTool(config: Config, roots: LogRoots) {
  return defineTool({
    name: 'log_analysis',
    title: 'Analyse logs',
    description:
      "Summarise log files under the log roots (default: the fleet's own logs): counts by level, a time series of lines, errors and warnings per bucket, the top error messages grouped by shape (numbers, ids, uuids, hex, quoted strings, paths, urls, emails and timestamps replaced by placeholders) and anomaly windows where the error count jumps (rule in the answer). Reads at most LOG_MAX_SCAN_BYTES (default 64 MiB), newest files and newest bytes first, across at most LOG_MAX_FILES files; less than everything read says truncated: true. Series at most 1000 buckets; at most 5000 distinct error shapes tracked.",
    input,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const range = timeRange(args);
      const selection = await roots.select(args.files);
      const files = [...selection.files].sort((a, b) => b.mtimeMs - a.mtimeMs);

      const levels: Record<Level | 'unknown', number> = { fatal: 0, error: 0, warn: 0, info: 0, debug: 0, trace: 0, unknown: 0 };
      const series = new TimeSeries(args.bucket ?? '1s');
      const shapes = new Map<string, ShapeStats>();
      let untracked = 0;
      let budget = config.LOG_MAX_SCAN_BYTES;
      let truncated = selection.truncated;
      let scannedBytes = 0;
      let scannedLines = 0;
      let matchedLines = 0;
      let untimed = 0;
      let first: number | undefined;
      let last: number | undefined;
      const perFile: { file: string; scannedBytes: number; size: number }[] = [];

      for (const file of files) {
        if (budget <= 0) {
          truncated = true;
          break;
        }
        if (range.from !== undefined && file.mtimeMs < range.from - 60_000) continue;
        // the newest bytes of each file, within what is left of the budget
        const start = Math.max(0, file.size - budget);
        if (start > 0) truncated = true;
        const base = fileBaseName(file.absolute);
        let fileBytes = 0;
        for await (const raw of readLines(() => roots.open(file.absolute), {
          start,
          endOffset: file.size,
          maxLineBytes: config.LOG_MAX_LINE_BYTES,
          signal: ctx.signal,
          skipPartialFirst: true,
        })) {
          fileBytes += raw.end - raw.offset;
          scannedLines++;
          const parsed = parseLine(raw.text);
          if (args.service && lineService(parsed, base) !== args.service) continue;
          if (!inRange(parsed, range)) continue;
          matchedLines++;
          levels[parsed.level ?? 'unknown']++;
          const isError = parsed.level === 'error' || parsed.level === 'fatal';
          if (parsed.time !== undefined) {
            series.add(parsed.time, isError, parsed.level === 'warn');
            first = first === undefined ? parsed.time : Math.min(first, parsed.time);
            last = last === undefined ? parsed.time : Math.max(last, parsed.time);
          } else {
            untimed++;
          }
          if (isError) {
            const message = scrubText(parsed.message);
            const shape = messageShape(message);
            let s = shapes.get(shape);
            if (!s) {
              if (shapes.size >= MAX_SHAPES) {
                untracked++;
                continue;
              }
              s = { shape, count: 0, example: message.slice(0, MAX_EXAMPLE), services: new Set(), levels: new Set() };
              shapes.set(shape, s);
            }
            s.count++;
            if (parsed.time !== undefined) {
              s.firstSeen = s.firstSeen === undefined ? parsed.time : Math.min(s.firstSeen, parsed.time);
              s.lastSeen = s.lastSeen === undefined ? parsed.time : Math.max(s.lastSeen, parsed.time);
            }
            if (s.services.size < 20) s.services.add(lineService(parsed, base));
            s.levels.add(parsed.level!);
          }
        }
        budget -= file.size - start;
        scannedBytes += fileBytes;
        perFile.push({ file: file.absolute, scannedBytes: fileBytes, size: file.size });
      }

      if (args.bucket === undefined && first !== undefined && last !== undefined) {
        const span = (range.to ?? last + 1) - (range.from ?? first);
        const wanted = autoBucket(span);
        while (BUCKETS.indexOf(series.bucket) < BUCKETS.indexOf(wanted)) series.coarsen();
      }
      const { bucket, points } = series.dense(MAX_BUCKETS, range);
      const anomalies = detectAnomalies(points, bucketMs(bucket), {
        minErrors: args.minErrors,
        sensitivity: args.sensitivity,
        minRatio: args.minRatio,
      });

      const topErrors = [...shapes.values()]
        .sort((a, b) => b.count - a.count || a.shape.localeCompare(b.shape))
        .slice(0, args.top)
        .map((s) => ({
          shape: s.shape,
          count: s.count,
          firstSeen: iso(s.firstSeen),
          lastSeen: iso(s.lastSeen),
          example: s.example,
          services: [...s.services].sort(),
          levels: LEVELS.filter((l) => s.levels.has(l)),
        }));

      return {
        files: perFile.sort((a, b) => a.file.localeCompare(b.file)),
        scannedBytes,
        scannedLines,
        matchedLines,
        untimedLines: untimed,
        range: { first: iso(first), last: iso(last) },
        levels,
        bucket,
        ...(args.bucket !== undefined && bucket !== args.bucket ? { bucketAdjusted: true } : {}),
        series: points.map((p) => ({ start: new Date(p.start).toISOString(), total: p.total, errors: p.errors, warnings: p.warnings })),
        topErrors,
        distinctErrorShapes: shapes.size,
        ...(untracked > 0 ? { untrackedErrors: untracked } : {}),
        anomalies: anomalies.map((a) => ({ ...a, start: new Date(a.start).toISOString(), end: new Date(a.end).toISOString() })),
        anomalyRule: ANOMALY_RULE,
        ...(truncated ? { truncated: true } : {}),
      };
    },
  });
}
