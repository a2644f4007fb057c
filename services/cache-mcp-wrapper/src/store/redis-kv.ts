import { AppError, lazy, type Logger } from '@mcp-fleet/kit';
import type * as IoRedis from 'ioredis';
import type { Redis } from 'ioredis';
import {
  badCursor,
  decodeScanCursor,
  encodeScanCursor,
  notInteger,
  outOfRange,
  type KvStore,
  type ScanPage,
  type SetOptions,
} from './kv-store';

export interface RedisKvOptions {
  url: string;
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  logger: Logger;
}

/** SCAN calls one keys/list request may make before it hands back a cursor. */
export const MAX_SCAN_CALLS = 50;
const SCAN_COUNT = 1000;

// Same rule as the embedded store: only canonical integers inside the safe integer range.
const INCR_SCRIPT = `
local v = redis.call('GET', KEYS[1])
local cur = 0
if v then
  if not (v == '0' or string.match(v, '^%-?[1-9]%d*$')) then return redis.error_reply('NOT_INTEGER') end
  if #v > 17 then return redis.error_reply('OUT_OF_RANGE') end
  cur = tonumber(v)
end
local n = cur + tonumber(ARGV[1])
if cur > 9007199254740991 or cur < -9007199254740991 or n > 9007199254740991 or n < -9007199254740991 then
  return redis.error_reply('OUT_OF_RANGE')
end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`;

/* eslint-disable @typescript-eslint/no-require-imports */
/** ioredis (1.8 MiB of heap), loaded by the first RedisKvStore: the in-process store (no REDIS_URL) never holds it. */
const ioredis = lazy(() => require('ioredis') as typeof IoRedis);
/* eslint-enable @typescript-eslint/no-require-imports */

type WithIncr = Redis & { mcpIncr(key: string, by: string): Promise<number> };

/** Redis through ioredis: no offline queue, so an unreachable server answers at once with 503. */
export class RedisKvStore implements KvStore {
  readonly backend = 'redis' as const;
  private readonly client: WithIncr;
  private lastError = '';

  constructor(private readonly options: RedisKvOptions) {
    this.client = new (ioredis().Redis)(options.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      connectTimeout: options.connectTimeoutMs,
      commandTimeout: options.commandTimeoutMs,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    }) as WithIncr;
    this.client.defineCommand('mcpIncr', { numberOfKeys: 1, lua: INCR_SCRIPT });
    // Log each distinct connection problem once, not on every reconnect attempt; never the URL.
    this.client.on('error', (err: Error) => {
      if (err.message !== this.lastError) {
        this.lastError = err.message;
        options.logger.warn('redis connection problem', { error: err.message });
      }
    });
    this.client.on('ready', () => {
      if (this.lastError) options.logger.info('redis connection ready again');
      this.lastError = '';
    });
  }

  /** First connection; failure is logged and reported by /health, not fatal. */
  async connect(): Promise<void> {
    try {
      await this.client.connect();
    } catch (err) {
      this.options.logger.warn('redis is not reachable yet; cache calls answer UPSTREAM_UNAVAILABLE until it is', {
        error: (err as Error).message,
      });
    }
  }

  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw mapRedisError(err);
    }
  }

  get(key: string): Promise<string | null> {
    return this.run(() => this.client.get(key));
  }

  mget(keys: string[]): Promise<(string | null)[]> {
    return this.run(() => this.client.mget(keys));
  }

  set(key: string, value: string, options: SetOptions = {}): Promise<boolean> {
    const args: (string | number)[] = [key, value];
    if (options.ttlMs !== undefined) args.push('PX', options.ttlMs);
    else if (options.keepTtl) args.push('KEEPTTL');
    if (options.nx) args.push('NX');
    if (options.xx) args.push('XX');
    return this.run(async () => (await this.client.call('SET', args)) === 'OK');
  }

  mset(entries: [string, string][], ttlMs?: number): Promise<void> {
    return this.run(async () => {
      if (ttlMs === undefined) {
        await this.client.mset(entries.flat());
        return;
      }
      const tx = this.client.multi();
      for (const [k, v] of entries) tx.set(k, v, 'PX', ttlMs);
      const results = await tx.exec();
      const failed = results?.find(([err]) => err);
      if (!results || failed) throw failed?.[0] ?? new Error('transaction aborted');
    });
  }

  del(keys: string[]): Promise<number> {
    return this.run(() => this.client.del(keys));
  }

  exists(key: string): Promise<boolean> {
    return this.run(async () => (await this.client.exists(key)) === 1);
  }

  pexpire(key: string, ttlMs: number): Promise<boolean> {
    return this.run(async () => (await this.client.pexpire(key, ttlMs)) === 1);
  }

  pttl(key: string): Promise<number> {
    return this.run(() => this.client.pttl(key));
  }

  incrBy(key: string, by: number): Promise<number> {
    return this.run(async () => Number(await this.client.mcpIncr(key, String(by))));
  }

  /**
   * SCAN (never KEYS) with MATCH, at most MAX_SCAN_CALLS round trips per call. The cursor holds
   * the Redis cursor of the last batch and how much of it was already handed out; like SCAN
   * itself, keys written or deleted meanwhile may be missed or repeated.
   */
  scan(pattern: string, limit: number, cursor?: string): Promise<ScanPage> {
    return this.run(async () => {
      let scanCursor = '0';
      let skip = 0;
      if (cursor !== undefined) {
        const c = decodeScanCursor(cursor);
        if (typeof c.c !== 'string' || !/^\d{1,20}$/.test(c.c) || typeof c.s !== 'number' || !Number.isInteger(c.s) || c.s < 0) {
          throw badCursor();
        }
        scanCursor = c.c;
        skip = c.s;
      }
      const keys: string[] = [];
      for (let calls = 0; ; calls++) {
        const [next, batch] = await this.client.scan(scanCursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
        const fresh = batch.slice(skip);
        const room = limit - keys.length;
        if (fresh.length > room) {
          keys.push(...fresh.slice(0, room));
          return { keys, cursor: encodeScanCursor({ c: scanCursor, s: skip + room }) };
        }
        keys.push(...fresh);
        skip = 0;
        if (next === '0') return { keys };
        scanCursor = next;
        if (keys.length === limit || calls + 1 >= MAX_SCAN_CALLS) return { keys, cursor: encodeScanCursor({ c: next, s: 0 }) };
      }
    });
  }

  async ping(): Promise<Record<string, unknown>> {
    await this.run(() => this.client.ping());
    return { backend: this.backend, status: this.client.status };
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}

/** Redis failures as the fleet's codes; the URL and raw reply stay in the log. */
export function mapRedisError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  // a reply error exists only once ioredis is loaded
  if (ioredis.loaded && err instanceof ioredis().ReplyError) {
    const msg = String((err as Error).message);
    if (msg.includes('NOT_INTEGER')) return notInteger();
    if (msg.includes('OUT_OF_RANGE')) return outOfRange();
    if (msg.startsWith('WRONGTYPE')) {
      return new AppError(
        'CONFLICT',
        'The key holds a Redis type other than a string, so it was not written by this service; use another key.',
        {
          cause: err,
        },
      );
    }
    if (msg.startsWith('OOM')) {
      return new AppError('UPSTREAM_ERROR', 'Redis is out of memory (maxmemory reached); delete keys or give them TTLs.', { cause: err });
    }
    return new AppError('UPSTREAM_ERROR', 'Redis refused the command; the reason is in the service log.', { cause: err });
  }
  return new AppError('UPSTREAM_UNAVAILABLE', 'Redis is not reachable right now; retry shortly or check REDIS_URL and the Redis server.', {
    cause: err,
    retryAfter: 1,
  });
}
