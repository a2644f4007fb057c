import { actionInput, AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { boundedJson, deserialize, keySchema, patternSchema, serialize, ttlMs, ttlSecondsSchema, type Keyspace } from '../keyspace';
import type { KvStore } from '../store/kv-store';

export interface CacheToolDeps {
  store: KvStore;
  keyspace: Keyspace;
  maxValueBytes: number;
  maxResponseBytes: number;
}

const MAX_BATCH = 1000;
const keyList = z.array(keySchema).min(1).max(MAX_BATCH);
const jsonValue = boundedJson().describe('Any JSON value; stored serialized, capped at CACHE_MAX_VALUE_BYTES (default 512 KiB).');

/** One object per action, so /tools/list documents the fields each action takes. */
export const cacheInput = z.discriminatedUnion('action', [
  z
    .object({ action: z.literal('get'), key: keySchema })
    .strict()
    .describe('get: read one key ({found, value}).'),
  z
    .object({
      action: z.literal('set'),
      key: keySchema,
      value: jsonValue,
      ttlSeconds: ttlSecondsSchema
        .optional()
        .describe('Expire after this many seconds; without it the key never expires (and loses any TTL it had).'),
      nx: z.boolean().default(false).describe('Only write when the key does not exist yet.'),
      xx: z.boolean().default(false).describe('Only write when the key already exists.'),
    })
    .strict()
    .describe('set: write one key; {stored: false} when the NX/XX condition was not met.'),
  z
    .object({
      action: z.literal('delete'),
      key: keySchema.optional(),
      keys: keyList.optional().describe('Several keys at once (up to 1000).'),
    })
    .strict()
    .describe('delete: remove `key` and/or `keys`; answers how many existed.'),
  z
    .object({ action: z.literal('exists'), key: keySchema })
    .strict()
    .describe('exists: whether the key is present.'),
  z
    .object({ action: z.literal('expire'), key: keySchema, ttlSeconds: ttlSecondsSchema })
    .strict()
    .describe('expire: set a new TTL on an existing key ({updated: false} when it does not exist).'),
  z
    .object({ action: z.literal('ttl'), key: keySchema })
    .strict()
    .describe('ttl: time left before the key expires.'),
  z
    .object({
      action: z.literal('incr'),
      key: keySchema,
      by: z
        .number()
        .int()
        .min(-Number.MAX_SAFE_INTEGER)
        .max(Number.MAX_SAFE_INTEGER)
        .default(1)
        .describe('Amount to add (negative to decrement); default 1.'),
    })
    .strict()
    .describe('incr: add to an integer value (a missing key counts as 0; the TTL is kept). CONFLICT when the value is not an integer.'),
  z
    .object({ action: z.literal('mget'), keys: keyList.describe('Keys to read (1-1000).') })
    .strict()
    .describe('mget: read several keys; answers over CACHE_MAX_RESPONSE_BYTES are cut (truncated, omitted).'),
  z
    .object({
      action: z.literal('mset'),
      entries: z
        .array(z.object({ key: keySchema, value: jsonValue }).strict())
        .min(1)
        .max(MAX_BATCH)
        .describe('Key/value pairs (1-1000), written all or nothing.'),
      ttlSeconds: ttlSecondsSchema.optional().describe('TTL applied to every entry; without it they never expire.'),
    })
    .strict()
    .describe('mset: write several keys at once, atomically.'),
  z
    .object({
      action: z.literal('keys'),
      pattern: patternSchema.default('*'),
      limit: z.number().int().min(1).max(1000).default(100).describe('Keys per page (1-1000, default 100).'),
      cursor: z.string().max(512).optional().describe('nextCursor from the previous page.'),
    })
    .strict()
    .describe('keys: your keys matching a glob, paginated (SCAN on Redis, never KEYS).'),
]);

export type CacheInput = z.output<typeof cacheInput>;

export function createCacheTool({ store, keyspace, maxValueBytes, maxResponseBytes }: CacheToolDeps) {
  const handle = async (args: CacheInput): Promise<Record<string, unknown>> => {
    switch (args.action) {
      case 'get': {
        const text = await store.get(keyspace.cacheKey(args.key));
        return text === null ? { key: args.key, found: false } : { key: args.key, found: true, value: deserialize(text) };
      }
      case 'set': {
        if (args.nx && args.xx) {
          throw new AppError('VALIDATION_ERROR', 'nx and xx cannot both be true; pick one condition.', {
            details: [{ path: 'nx', message: 'conflicts with xx' }],
          });
        }
        const text = serialize(args.value, maxValueBytes);
        const stored = await store.set(keyspace.cacheKey(args.key), text, {
          ttlMs: args.ttlSeconds === undefined ? undefined : ttlMs(args.ttlSeconds),
          nx: args.nx,
          xx: args.xx,
        });
        if (stored) return { key: args.key, stored: true };
        return { key: args.key, stored: false, reason: args.nx ? 'nx: the key already exists' : 'xx: the key does not exist' };
      }
      case 'delete': {
        const keys = [...(args.key === undefined ? [] : [args.key]), ...(args.keys ?? [])];
        if (keys.length === 0) {
          throw new AppError('VALIDATION_ERROR', 'delete needs `key` or `keys`.', { details: [{ path: 'key', message: 'required' }] });
        }
        return { deleted: await store.del(keys.map((k) => keyspace.cacheKey(k))) };
      }
      case 'exists':
        return { key: args.key, exists: await store.exists(keyspace.cacheKey(args.key)) };
      case 'expire':
        return { key: args.key, updated: await store.pexpire(keyspace.cacheKey(args.key), ttlMs(args.ttlSeconds)) };
      case 'ttl': {
        const ms = await store.pttl(keyspace.cacheKey(args.key));
        if (ms === -2) return { key: args.key, exists: false };
        if (ms === -1) return { key: args.key, exists: true, expires: false };
        return { key: args.key, exists: true, expires: true, ttlMs: ms, ttlSeconds: Math.ceil(ms / 1000) };
      }
      case 'incr':
        return { key: args.key, value: await store.incrBy(keyspace.cacheKey(args.key), args.by) };
      case 'mget': {
        const texts = await store.mget(args.keys.map((k) => keyspace.cacheKey(k)));
        const items: Record<string, unknown>[] = [];
        const omitted: string[] = [];
        let bytes = 0;
        texts.forEach((text, i) => {
          const key = args.keys[i];
          if (text === null) {
            items.push({ key, found: false });
            return;
          }
          bytes += text.length;
          if (bytes > maxResponseBytes && items.length > 0) omitted.push(key);
          else items.push({ key, found: true, value: deserialize(text) });
        });
        return omitted.length ? { items, truncated: true, omitted } : { items };
      }
      case 'mset': {
        const entries = args.entries.map((e): [string, string] => [
          keyspace.cacheKey(e.key),
          serialize(e.value, maxValueBytes, `value of ${e.key}`),
        ]);
        await store.mset(entries, args.ttlSeconds === undefined ? undefined : ttlMs(args.ttlSeconds));
        return { stored: entries.length };
      }
      case 'keys': {
        const page = await store.scan(keyspace.cachePattern(args.pattern), args.limit, args.cursor);
        const keys = page.keys.map((k) => keyspace.fromCacheKey(k));
        return page.cursor ? { keys, nextCursor: page.cursor, truncated: true } : { keys };
      }
    }
  };

  return defineTool({
    name: 'cache',
    title: 'Cache',
    description:
      'Key-value cache with TTLs: action get | set (ttlSeconds, nx, xx) | delete | exists | expire | ttl | incr | mget | mset | keys (glob, paginated). ' +
      'Values are JSON, at most CACHE_MAX_VALUE_BYTES (default 512 KiB) each; mget/mset/delete take up to 1000 keys; mget answers are cut at CACHE_MAX_RESPONSE_BYTES (4 MiB) ' +
      "with truncated: true; keys returns at most 1000 per page and scans a bounded slice of the keyspace per call. Keys live in this service's namespace only. " +
      'Redis when REDIS_URL is set, the in-process store otherwise; 30 s call time limit.',
    // Listed as one object (an action enum, the other fields optional); validated per action by cacheInput.
    input: actionInput(cacheInput),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: handle,
  });
}
