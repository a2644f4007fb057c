import type { Logger } from '@mcp-fleet/kit';
import type { Config } from '../config';
import type { KvStore } from './kv-store';
import { MemoryKvStore } from './memory-kv';
import { RedisKvStore } from './redis-kv';

export type { KvStore } from './kv-store';
export { MemoryKvStore } from './memory-kv';
export { RedisKvStore } from './redis-kv';

/** Redis when REDIS_URL is set (connected before this resolves, or logged as unreachable); the in-process store otherwise. */
export async function openKvStore(config: Config, logger: Logger): Promise<KvStore> {
  if (config.REDIS_URL) {
    const store = new RedisKvStore({
      url: config.REDIS_URL,
      connectTimeoutMs: config.REDIS_CONNECT_TIMEOUT_MS,
      commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
      logger,
    });
    await store.connect();
    return store;
  }
  return new MemoryKvStore({ maxBytes: config.CACHE_EMBEDDED_MAX_BYTES, sweepIntervalMs: config.CACHE_SWEEP_INTERVAL_MS });
}
