/** Pure pieces of log_analysis: message shapes, time buckets and the anomaly rule. */

const MAX_SHAPE_INPUT = 500;

/** Placeholders replace the parts of a message that vary between occurrences of the same error. */
const SHAPE_RULES: [RegExp, string][] = [
  [/\b[a-z][a-z0-9+.-]{0,20}:\/\/[^\s"'<>]+/gi, '<url>'],
  [/\b[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+\b/g, '<email>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g, '<ts>'],
  [/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g, '<ip>'],
  [/(?<!\w)(?:"(?:[^"\\\n]|\\.){0,200}"|'(?:[^'\\\n]|\\.){0,200}')(?!\w)/g, '<str>'],
  [/(?:[A-Za-z]:)?(?:\/[\w.@-]{1,100}){2,}\/?/g, '<path>'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  [/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, '<hex>'],
  [/-?\b\d+(?:\.\d+)?\b/g, '<n>'],
];

/** "user 42 failed at /srv/a.txt after 3.5s" -> "user <n> failed at <path> after <n>s". */
export function messageShape(message: string): string {
  let s = message.length > MAX_SHAPE_INPUT ? message.slice(0, MAX_SHAPE_INPUT) : message;
  for (const [re, placeholder] of SHAPE_RULES) s = s.replace(re, placeholder);
  return s.replace(/\s+/g, ' ').trim() || '(empty message)';
}

/** Bucket sizes; each divides the next, so counts can be merged into a coarser bucket exactly. */
export const BUCKETS = ['1s', '5s', '15s', '30s', '1m', '5m', '15m', '30m', '1h', '3h', '6h', '12h', '1d', '7d'] as const;
export type Bucket = (typeof BUCKETS)[number];

export function bucketMs(bucket: Bucket): number {
  const n = Number.parseInt(bucket, 10);
  const unit = bucket.slice(String(n).length);
  return n * { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit as 's' | 'm' | 'h' | 'd'];
}

export interface BucketCounts {
  total: number;
  errors: number;
  warnings: number;
}

/**
 * Per-bucket counts that coarsen themselves (to the next bucket size) when more than `maxKeys`
 * distinct buckets appear, so memory stays bounded whatever the time span.
 */
export class TimeSeries {
  private counts = new Map<number, BucketCounts>();
  private index: number;

  constructor(
    bucket: Bucket,
    private readonly maxKeys = 50_000,
  ) {
    this.index = BUCKETS.indexOf(bucket);
  }

  get bucket(): Bucket {
    return BUCKETS[this.index];
  }

  add(time: number, isError: boolean, isWarning: boolean): void {
    const size = bucketMs(this.bucket);
    const key = Math.floor(time / size) * size;
    let c = this.counts.get(key);
    if (!c) {
      if (this.counts.size >= this.maxKeys && this.index < BUCKETS.length - 1) {
        this.coarsen();
        this.add(time, isError, isWarning);
        return;
      }
      c = { total: 0, errors: 0, warnings: 0 };
      this.counts.set(key, c);
    }
    c.total++;
    if (isError) c.errors++;
    if (isWarning) c.warnings++;
  }

  /** Moves to the next bucket size, merging counts. */
  coarsen(): void {
    this.index++;
    const size = bucketMs(this.bucket);
    const merged = new Map<number, BucketCounts>();
    for (const [key, c] of this.counts) {
      const k = Math.floor(key / size) * size;
      const m = merged.get(k) ?? { total: 0, errors: 0, warnings: 0 };
      m.total += c.total;
      m.errors += c.errors;
      m.warnings += c.warnings;
      merged.set(k, m);
    }
    this.counts = merged;
  }

  /** Dense series from the first to the last bucket with data (or the given range), at most maxBuckets long. */
  dense(maxBuckets: number, range: { from?: number; to?: number } = {}): { bucket: Bucket; points: ({ start: number } & BucketCounts)[] } {
    if (this.counts.size === 0) return { bucket: this.bucket, points: [] };
    for (;;) {
      const size = bucketMs(this.bucket);
      let min = Infinity;
      let max = -Infinity;
      for (const k of this.counts.keys()) {
        min = Math.min(min, k);
        max = Math.max(max, k);
      }
      const first = range.from !== undefined ? Math.floor(range.from / size) * size : min;
      const last = range.to !== undefined ? Math.floor((range.to - 1) / size) * size : max;
      const n = Math.floor((last - first) / size) + 1;
      if (n > maxBuckets && this.index < BUCKETS.length - 1) {
        this.coarsen();
        continue;
      }
      const points: ({ start: number } & BucketCounts)[] = [];
      for (let t = first; t <= last && points.length < maxBuckets; t += size) {
        points.push({ start: t, ...(this.counts.get(t) ?? { total: 0, errors: 0, warnings: 0 }) });
      }
      return { bucket: this.bucket, points };
    }
  }
}

/** Smallest bucket that covers `spanMs` in at most `target` buckets. */
export function autoBucket(spanMs: number, target = 120): Bucket {
  return BUCKETS.find((b) => spanMs / bucketMs(b) <= target) ?? '7d';
}

export interface AnomalyOptions {
  /** A bucket needs at least this many errors. */
  minErrors: number;
  /** ... and more than median + sensitivity x spread. */
  sensitivity: number;
  /** ... and at least this multiple of the median. */
  minRatio: number;
}

export interface AnomalyWindow {
  start: number;
  end: number;
  buckets: number;
  errors: number;
  total: number;
  errorRate: number;
  /** Mean errors per bucket outside the window. */
  baselineErrorsPerBucket: number;
  /** Errors a bucket had to exceed to be flagged. */
  threshold: number;
  /** Peak bucket's errors divided by baselineErrorsPerBucket (null when that is 0). */
  factor: number | null;
}

export const ANOMALY_RULE =
  'A bucket is anomalous when its error count (error + fatal lines) is at least minErrors, greater than median + sensitivity x spread, and at least minRatio x median, where median is the median error count per bucket over the whole series and spread = max(1.4826 x median absolute deviation, sqrt(median), 1). Medians keep a burst from hiding itself by inflating the baseline. Adjacent anomalous buckets form one window. Needs at least 3 buckets.';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

/** Windows where the error count jumps above the rest of the series (see ANOMALY_RULE). */
export function detectAnomalies(points: ({ start: number } & BucketCounts)[], size: number, options: AnomalyOptions): AnomalyWindow[] {
  const n = points.length;
  if (n < 3) return [];
  const errors = points.map((p) => p.errors);
  const med = median(errors);
  const mad = median(errors.map((e) => Math.abs(e - med)));
  const spread = Math.max(1.4826 * mad, Math.sqrt(med), 1);
  const threshold = med + options.sensitivity * spread;
  const hit = (e: number) => e >= options.minErrors && e > threshold && e >= options.minRatio * med;
  const sum = errors.reduce((a, e) => a + e, 0);
  const windows: AnomalyWindow[] = [];
  for (let i = 0; i < n; i++) {
    if (!hit(errors[i])) continue;
    let j = i;
    while (j + 1 < n && hit(errors[j + 1])) j++;
    const span = points.slice(i, j + 1);
    const windowErrors = span.reduce((a, p) => a + p.errors, 0);
    const total = span.reduce((a, p) => a + p.total, 0);
    const peak = span.reduce((a, p) => Math.max(a, p.errors), 0);
    const outside = n - span.length;
    const baseline = outside > 0 ? (sum - windowErrors) / outside : 0;
    windows.push({
      start: points[i].start,
      end: points[j].start + size,
      buckets: span.length,
      errors: windowErrors,
      total,
      errorRate: total > 0 ? round(windowErrors / total, 3) : 0,
      baselineErrorsPerBucket: round(baseline, 3),
      threshold: round(threshold, 3),
      factor: baseline > 0 ? round(peak / baseline, 2) : null,
    });
    i = j;
  }
  return windows;
}
