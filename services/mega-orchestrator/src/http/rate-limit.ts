/**
 * Rate limits on what callers send (every POST: tool calls and the other MCP messages), counted per
 * caller in fixed one-minute windows. The counts live in this process, or in Redis (REDIS_URL) so
 * that several gateway instances behind a load balancer share one limit. A Redis that cannot be
 * reached lets requests through (fail open, logged and counted): a broken counter must not take
 * the fleet down with it.
 */
import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type Redis from 'ioredis';
import type * as IoRedis from 'ioredis';
import { AppError, ERROR_CODES, type Logger, type SendError } from '@mcp-fleet/kit';
import { principalOf } from '../auth/auth';
import { requestIdOf } from '../mcp/jsonrpc';
import { sendRpcError } from '../mcp/errors';

export interface WindowCount {
  /** Requests counted in the current window, this one included. */
  count: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
}

export interface RateStore {
  readonly kind: 'memory' | 'redis';
  /** Counts one request of `key` in the current window of `windowMs`. */
  hit(key: string, windowMs: number): Promise<WindowCount>;
  close(): Promise<void>;
}

/** The embedded store: one map per window, dropped when the window turns. */
export class MemoryRateStore implements RateStore {
  readonly kind = 'memory';
  private window = -1;
  private counts = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const t = this.now();
    const window = Math.floor(t / windowMs);
    if (window !== this.window) {
      this.window = window;
      this.counts = new Map();
    }
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    return { count, resetMs: (window + 1) * windowMs - t };
  }

  async close(): Promise<void> {}
}

// INCR the window's key and give it an expiry when it is new; answer the count and the time left.
const HIT_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}
`;

/** Shared counts: one key per caller and window, `<prefix>:<window>:<caller>`, atomic in one script. */
export class RedisRateStore implements RateStore {
  readonly kind = 'redis';
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix: string,
    commandTimeoutMs = 250,
  ) {
    // No offline queue and one retry: while Redis is away a hit fails at once (and the request goes through);
    // a Redis that is connected but stalls (overloaded, or a network partition) fails the hit after commandTimeoutMs.
    // ioredis is loaded only for this store (REDIS_URL), not by a gateway that counts in-process
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    this.redis = new (require('ioredis') as typeof IoRedis).Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2000,
      commandTimeout: commandTimeoutMs,
    });
    this.redis.on('error', () => undefined); // reported per hit by the limiter
    void this.redis.connect().catch(() => undefined);
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const window = Math.floor(Date.now() / windowMs);
    const [count, pttl] = (await this.redis.eval(HIT_SCRIPT, 1, `${this.prefix}:${window}:${key}`, String(windowMs))) as [number, number];
    return { count, resetMs: pttl > 0 ? pttl : windowMs };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

export interface RateLimitOptions {
  limit: number;
  windowMs: number;
  store: RateStore;
  logger: Logger;
  sendError: SendError;
  /** True when the caller speaks JSON-RPC (it gets a JSON-RPC error rather than the envelope). */
  wantsJsonRpc: (req: Request) => boolean;
  /** Counted when Redis could not be asked (requests then go through). */
  onStoreError?: () => void;
}

/** Who a request counts against: the authenticated caller, else the client address. */
export function callerKey(req: Request): string {
  const principal = principalOf(req.res);
  if (principal) return boundedKey(`${principal.kind}:${principal.subject}`);
  return `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
}

/** Keys past MAX_KEY_LENGTH (a token's subject is the issuer's to choose) are counted under their SHA-256. */
const MAX_KEY_LENGTH = 128;
function boundedKey(key: string): string {
  return key.length <= MAX_KEY_LENGTH ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/**
 * The limiter middleware (mounted only when RATE_LIMIT_PER_MINUTE > 0): every POST is counted;
 * answers carry RateLimit-Limit / -Remaining / -Reset; above the limit, 429 RATE_LIMITED with
 * Retry-After (a JSON-RPC error for JSON-RPC callers).
 */
export function rateLimiter(options: RateLimitOptions): RequestHandler {
  const { limit, windowMs, store, logger } = options;
  let lastWarning = 0;
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST') return next();
    store.hit(callerKey(req), windowMs).then(
      ({ count, resetMs }) => {
        const reset = Math.max(1, Math.ceil(resetMs / 1000));
        res.setHeader('RateLimit-Limit', String(limit));
        res.setHeader('RateLimit-Remaining', String(Math.max(0, limit - count)));
        res.setHeader('RateLimit-Reset', String(reset));
        if (count <= limit) return next();
        const message = `Rate limit reached: ${limit} requests per minute for this caller; retry in ${reset} s.`;
        res.locals.errorCode = 'RATE_LIMITED';
        if (options.wantsJsonRpc(req)) {
          res.setHeader('Retry-After', String(reset));
          return sendRpcError(res, requestIdOf(req.body), ERROR_CODES.RATE_LIMITED.rpc, message, { retryAfter: reset });
        }
        options.sendError(res, new AppError('RATE_LIMITED', message, { retryAfter: reset }));
      },
      (err: unknown) => {
        options.onStoreError?.();
        const now = Date.now();
        if (now - lastWarning > 10_000) {
          lastWarning = now;
          logger.warn('rate limit store unreachable: requests are let through until it answers', {
            store: store.kind,
            err: (err as Error).message,
          });
        }
        next();
      },
    );
  };
}
