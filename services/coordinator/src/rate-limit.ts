/**
 * The coordinator's rate limit (platform-interface.md, "Limits": 100 requests per minute per IP,
 * configurable): express-rate-limit, counting in this process, or in Redis through rate-limit-redis
 * when REDIS_URL is set, so that every coordinator instance behind a load balancer shares one count
 * per client address. A Redis that cannot be reached or does not answer in time lets the request
 * through uncounted (logged at most every 10 s and counted in /metrics): a broken counter must not
 * stop the surface. The gateway decided the same (docs/deployment.md).
 */
import type { RequestHandler } from 'express';
import { MemoryStore, rateLimit, type Options, type Store } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type * as IoRedis from 'ioredis';
import type { RedisReply, RedisStore } from 'rate-limit-redis';
import type * as RateLimitRedis from 'rate-limit-redis';
import { AppError, Counter, type KitHandle, type Logger } from '@mcp-fleet/kit';

export interface RateLimitSettings {
  /** Requests per window and client address; 0 turns the limit off. */
  limit: number;
  windowMs: number;
  redisUrl?: string;
  prefix: string;
  redisTimeoutMs: number;
}

export interface CoordinatorLimiter {
  readonly store: 'redis' | 'memory';
  /** The middleware, built with the app's error sender and metrics registry. */
  middleware(kit: KitHandle): RequestHandler;
  /** Health check of the shared store (Redis answers PING); undefined for the in-process store. */
  check?: () => Promise<unknown>;
  close(): Promise<void>;
}

/** Monitoring probes are never limited: compose, the launcher and Prometheus call them from the same address as local clients. */
const isProbe = (method: string, path: string) => (method === 'GET' || method === 'HEAD') && (path === '/health' || path === '/metrics');

const WARN_EVERY_MS = 10_000;
/** ioredis states of a first connection still being made. */
const CONNECTING = new Set(['wait', 'connecting', 'connect']);

/**
 * rate-limit-redis's store, kept usable while Redis comes and goes: its scripts are loaded again
 * after a failed load (rate-limit-redis keeps a rejected load forever), each count waits at most
 * `timeoutMs` for a connection or an answer, and every failure is reported before the limiter lets
 * the request through.
 */
class SharedCounts implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  private readonly inner: RedisStore;
  private options?: Options;
  private loaded?: Promise<void>;
  private connecting?: Promise<void>;

  constructor(
    readonly redis: Redis,
    prefix: string,
    private readonly timeoutMs: number,
    private readonly onError: (err: unknown) => void,
  ) {
    this.prefix = prefix;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { RedisStore: RedisStoreClass } = require('rate-limit-redis') as typeof RateLimitRedis;
    this.inner = new RedisStoreClass({
      prefix,
      sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
    });
  }

  init(options: Options): void {
    this.options = options;
  }

  async increment(key: string) {
    try {
      await this.ready();
      return await this.inner.increment(key);
    } catch (err) {
      this.onError(err);
      throw err;
    }
  }

  async decrement(key: string): Promise<void> {
    await this.inner.decrement(key);
  }

  async resetKey(key: string): Promise<void> {
    await this.inner.resetKey(key);
  }

  shutdown(): void {
    this.redis.disconnect();
  }

  private async ready(): Promise<void> {
    await this.connected();
    this.loaded ??= this.inner.init(this.options!).catch((err: unknown) => {
      this.loaded = undefined;
      throw err;
    });
    await this.loaded;
  }

  /**
   * Resolves once Redis is connected. While a connection is being made (at start) it waits for it, at
   * most timeoutMs, one wait shared by every request meanwhile; while Redis is away it fails at once.
   */
  connected(): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    if (!CONNECTING.has(this.redis.status)) return Promise.reject(new Error(`Redis is not connected (${this.redis.status})`));
    this.connecting ??= new Promise<void>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.redis.off('ready', done);
        reject(new Error(`Redis is not connected (${this.redis.status}) after ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.redis.once('ready', done);
    }).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }
}

export function createLimiter(settings: RateLimitSettings, logger: Logger): CoordinatorLimiter | undefined {
  if (settings.limit === 0) return undefined;
  let storeErrors: Counter | undefined;
  let lastWarning = 0;
  const reportStoreError = (err: unknown) => {
    storeErrors?.inc();
    if (Date.now() - lastWarning < WARN_EVERY_MS) return;
    lastWarning = Date.now();
    logger.warn('rate-limit counts cannot reach Redis; requests go through uncounted until it answers', {
      error: err instanceof Error ? err.message : String(err),
    });
  };

  // No offline queue and one retry: while Redis is away a count fails at once; a stalled one after redisTimeoutMs.
  // ioredis is loaded only when counts are shared (REDIS_URL): the in-process store needs none of it.
  const redis = settings.redisUrl
    ? // eslint-disable-next-line @typescript-eslint/no-require-imports
      new (require('ioredis') as typeof IoRedis).Redis(settings.redisUrl, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectTimeout: 2000,
        commandTimeout: settings.redisTimeoutMs,
        // a socket that is gone already is not waited for at close (ioredis waits 2 s by default)
        disconnectTimeout: 500,
      })
    : undefined;
  redis?.on('error', () => undefined); // reported per count, at most every 10 s
  const shared = redis ? new SharedCounts(redis, settings.prefix, settings.redisTimeoutMs, reportStoreError) : undefined;
  const store: Store = shared ?? new MemoryStore();

  return {
    store: shared ? 'redis' : 'memory',
    middleware(kit) {
      storeErrors = new Counter({
        name: 'mcp_fleet_coordinator_rate_limit_store_errors_total',
        help: 'Requests let through uncounted because the rate-limit store (Redis) could not be asked.',
        registers: [kit.metrics.registry],
      });
      const limited = new Counter({
        name: 'mcp_fleet_coordinator_rate_limited_total',
        help: 'Requests refused with RATE_LIMITED (429).',
        registers: [kit.metrics.registry],
      });
      const seconds = Math.round(settings.windowMs / 1000);
      return rateLimit({
        windowMs: settings.windowMs,
        limit: settings.limit,
        store,
        standardHeaders: 'draft-6',
        legacyHeaders: false,
        passOnStoreError: true,
        skip: (req) => isProbe(req.method, req.path),
        // the library's own messages (a misconfigured proxy setting, a store error already reported above)
        logger: {
          warn: (err, message) => logger.warn(message ?? 'rate limiter', { error: String(err) }),
          error: (err, message) =>
            /from store/.test(message ?? '') ? undefined : logger.warn(message ?? 'rate limiter', { error: String(err) }),
        },
        handler: (req, res) => {
          limited.inc();
          const resetAt = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime?.getTime() ?? Date.now() + settings.windowMs;
          const retryAfter = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
          kit.sendError(
            res,
            new AppError(
              'RATE_LIMITED',
              `More than ${settings.limit} requests in ${seconds} s from this address; wait ${retryAfter} s (Retry-After) and send again.`,
              { retryAfter },
            ),
          );
        },
      });
    },
    ...(shared ? { check: () => shared.connected().then(() => shared.redis.ping()) } : {}),
    close: async () => {
      await store.shutdown?.();
    },
  };
}
