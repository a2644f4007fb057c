import http from 'node:http';
import https from 'node:https';
import Transport from 'winston-transport';

export interface LokiTransportOptions {
  /** Loki's base URL, e.g. http://loki:3100; lines go to `<url>/loki/api/v1/push`. */
  url: string;
  /** Stream labels besides `level` (the service and job). */
  labels: Record<string, string>;
  /** Lines are pushed at least this often (ms). */
  intervalMs?: number;
  /** A push is sent as soon as this many lines wait. */
  batchSize?: number;
  /** Lines kept while Loki is unreachable; the oldest are dropped past it. */
  maxQueued?: number;
}

type Entry = { level: string; ns: string; line: string };

/**
 * Pushes the JSON log lines to Grafana Loki's push API, batched, one stream per level. Never blocks
 * or fails a request: when Loki is down, lines wait in a bounded queue and the oldest are dropped
 * (counted in `dropped`). Written here rather than taken from winston-loki, whose exit hook
 * replaces the kit's graceful SIGTERM handling.
 */
export class LokiTransport extends Transport {
  dropped = 0;
  pushed = 0;
  private queue: Entry[] = [];
  private timer: NodeJS.Timeout;
  private sending: Promise<void> = Promise.resolve();
  private readonly endpoint: URL;
  private readonly options: Required<Omit<LokiTransportOptions, 'url'>>;
  private lastNs = 0n;

  constructor(options: LokiTransportOptions) {
    super();
    this.endpoint = new URL('loki/api/v1/push', options.url.endsWith('/') ? options.url : `${options.url}/`);
    this.options = { intervalMs: 1000, batchSize: 500, maxQueued: 10_000, ...options };
    this.timer = setInterval(() => void this.flush(), this.options.intervalMs);
    this.timer.unref();
  }

  override log(info: Record<string | symbol, unknown>, callback: () => void): void {
    const line = String(info[Symbol.for('message')] ?? JSON.stringify(info));
    // Loki wants strictly increasing timestamps within a stream to keep every line.
    let ns = BigInt(Date.now()) * 1_000_000n;
    if (ns <= this.lastNs) ns = this.lastNs + 1n;
    this.lastNs = ns;
    this.queue.push({ level: String(info.level), ns: ns.toString(), line });
    if (this.queue.length > this.options.maxQueued) {
      this.dropped += this.queue.length - this.options.maxQueued;
      this.queue.splice(0, this.queue.length - this.options.maxQueued);
    }
    if (this.queue.length >= this.options.batchSize) void this.flush();
    callback();
  }

  /** Pushes everything queued so far; resolves when Loki answered (or the push failed). */
  flush(): Promise<void> {
    this.sending = this.sending.then(() => this.pushQueued());
    return this.sending;
  }

  /** At the logger's end (closeLogger at shutdown): the last lines are pushed before the stream finishes. */
  override _final(callback: (error?: Error | null) => void): void {
    clearInterval(this.timer);
    void this.flush().then(() => callback());
  }

  override close(): void {
    clearInterval(this.timer);
    void this.flush();
  }

  private async pushQueued(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.options.batchSize);
      const streams = new Map<string, [string, string][]>();
      for (const e of batch) {
        const values = streams.get(e.level) ?? [];
        values.push([e.ns, e.line]);
        streams.set(e.level, values);
      }
      const body = JSON.stringify({
        streams: [...streams].map(([level, values]) => ({ stream: { ...this.options.labels, level }, values })),
      });
      const ok = await this.post(body);
      if (ok) this.pushed += batch.length;
      else {
        // Keep the batch for the next interval, within the queue bound.
        this.queue.unshift(...batch);
        if (this.queue.length > this.options.maxQueued) {
          this.dropped += this.queue.length - this.options.maxQueued;
          this.queue.splice(0, this.queue.length - this.options.maxQueued);
        }
        return;
      }
    }
  }

  private post(body: string): Promise<boolean> {
    const lib = this.endpoint.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      const req = lib.request(
        this.endpoint,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: 5000 },
        (res) => {
          res.resume();
          res.on('end', () => resolve((res.statusCode ?? 500) < 300));
        },
      );
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
      req.end(body);
    });
  }
}
