import { baseEnvShape, int, loadConfig, type Env } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'cache-mcp-wrapper';

const redisUrl = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()))
  .refine((v) => v === undefined || /^rediss?:\/\//.test(v), 'a redis:// or rediss:// URL');

export const configSchema = z.object({
  ...baseEnvShape,
  REDIS_URL: redisUrl.describe('Redis connection; unset means the in-process store.'),
  CACHE_NAMESPACE: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, '1-64 letters, digits, _ . or -')
    .default('mcp-fleet')
    .describe('Prefix of every key this service touches: `<ns>:cache:<key>` and `<ns>:session:<id>`.'),
  CACHE_MAX_VALUE_BYTES: int(524_288, 64, 16_777_216).describe('Largest serialized (JSON, UTF-8) value or session record.'),
  CACHE_MAX_RESPONSE_BYTES: int(4_194_304, 1024, 67_108_864).describe('Most bytes one mget answer carries; the rest is listed as omitted.'),
  CACHE_EMBEDDED_MAX_BYTES: int(268_435_456, 1024, 8_589_934_592).describe(
    'Budget of the in-process store (keys plus values, approximate).',
  ),
  CACHE_SWEEP_INTERVAL_MS: int(30_000, 100, 3_600_000).describe(
    'How often the in-process store drops expired keys (they are also dropped when touched).',
  ),
  REDIS_CONNECT_TIMEOUT_MS: int(2_000, 100, 60_000).describe('Time limit of connecting to Redis (UPSTREAM_UNAVAILABLE after it).'),
  REDIS_COMMAND_TIMEOUT_MS: int(5_000, 100, 60_000).describe('Time limit of one Redis command.'),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
