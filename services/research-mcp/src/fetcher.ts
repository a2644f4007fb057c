/**
 * Every source request goes through here: the fleet's outbound client (address policy, size cap,
 * redirect checks), a time limit per source, a token bucket per source and a TTL cache keyed by
 * the request URL.
 */
import { AppError, type Logger } from '@mcp-fleet/kit';
import type { OutboundClient } from '@mcp-fleet/outbound';

export interface FetcherOptions {
  client: OutboundClient;
  logger: Logger;
  timeoutMs: number;
  ratePerMinute: number;
  cacheTtlMs: number;
  cacheEntries: number;
  maxResponseBytes: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export interface Fetched {
  text: string;
  status: number;
  cached: boolean;
}

export class Fetcher {
  private readonly cache = new Map<string, { at: number; value: Fetched }>();
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly options: FetcherOptions) {}

  /** One token from the source's bucket, or RATE_LIMITED naming when the next one is due. */
  private take(source: string): void {
    const { ratePerMinute } = this.options;
    const now = Date.now();
    const b = this.buckets.get(source) ?? { tokens: ratePerMinute, at: now };
    b.tokens = Math.min(ratePerMinute, b.tokens + ((now - b.at) / 60_000) * ratePerMinute);
    b.at = now;
    this.buckets.set(source, b);
    if (b.tokens < 1) {
      const waitS = Math.ceil(((1 - b.tokens) * 60) / ratePerMinute);
      throw new AppError('RATE_LIMITED', `${source} is over its ${ratePerMinute} requests per minute; try again in ${waitS} s.`, {
        retryAfter: waitS,
      });
    }
    b.tokens -= 1;
  }

  async get(source: string, url: string, signal: AbortSignal, headers: Record<string, string> = {}): Promise<Fetched> {
    return this.send(source, url, { method: 'GET', headers }, signal);
  }

  async send(
    source: string,
    url: string,
    req: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; cache?: boolean },
    signal: AbortSignal,
  ): Promise<Fetched> {
    const key = `${req.method} ${url} ${req.body ?? ''}`;
    const useCache = (req.cache ?? req.method === 'GET') && this.options.cacheTtlMs > 0 && this.options.cacheEntries > 0;
    if (useCache) {
      const hit = this.cache.get(key);
      if (hit && Date.now() - hit.at < this.options.cacheTtlMs) return { ...hit.value, cached: true };
      if (hit) this.cache.delete(key);
    }
    this.take(source);
    const res = await this.options.client.request(url, {
      method: req.method,
      headers: { accept: 'application/json, application/atom+xml, application/rss+xml, text/xml;q=0.9, */*;q=0.5', ...req.headers },
      body: req.body,
      timeoutMs: this.options.timeoutMs,
      maxResponseBytes: this.options.maxResponseBytes,
      signal,
    });
    if (res.truncated) throw new AppError('UPSTREAM_ERROR', `${source} answered more than ${this.options.maxResponseBytes} bytes.`);
    if (res.status >= 400) {
      const status = res.status === 429 ? 'RATE_LIMITED' : 'UPSTREAM_ERROR';
      throw new AppError(status, `${source} answered HTTP ${res.status}.`);
    }
    const value: Fetched = { text: res.body.toString('utf8'), status: res.status, cached: false };
    if (useCache) {
      if (this.cache.size >= this.options.cacheEntries) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, { at: Date.now(), value });
    }
    return value;
  }

  async json<T = unknown>(
    source: string,
    url: string,
    signal: AbortSignal,
    headers?: Record<string, string>,
  ): Promise<{ body: T; cached: boolean }> {
    const res = await this.get(source, url, signal, headers);
    try {
      return { body: JSON.parse(res.text) as T, cached: res.cached };
    } catch {
      throw new AppError('UPSTREAM_ERROR', `${source} answered something that is not JSON.`);
    }
  }
}
