import { baseEnvShape, int, loadConfig, ms, optionalUrl, unsetIfEmpty, type Env } from '@mcp-fleet/kit';
import { GATEWAY_ID, getService, resolveUrl } from '@mcp-fleet/inventory';
import { z } from 'zod';

export const SERVICE_ID = 'coordinator';

/** The environment this service reads: the kit's base variables plus its own, each with `.describe()`. */
export const configSchema = z.object({
  ...baseEnvShape,
  COORDINATOR_GATEWAY_URL: optionalUrl().describe(
    "The gateway every tool call goes through (POST <url>/mcp/<service>); default: MEGA_ORCHESTRATOR_URL, else the gateway's port on 127.0.0.1.",
  ),
  COORDINATOR_CALL_TIMEOUT_MS: ms(35_000, 1000, 600_000).describe(
    "Time limit of one forwarded tool call (TIMEOUT after it); keep it above the gateway's DOWNSTREAM_TIMEOUT_MS (30 s), so the gateway's own TIMEOUT, naming the service, comes first.",
  ),
  COORDINATOR_MAX_RESPONSE_BYTES: int(33_554_432, 1024, 1_073_741_824).describe(
    'Largest gateway answer read for one call (UPSTREAM_ERROR above it).',
  ),
  COORDINATOR_RATE_LIMIT: int(100, 0, 10_000_000).describe(
    'Requests one client address may send per window (every route but GET /health and GET /metrics); above it RATE_LIMITED (429, Retry-After). 0: no limit.',
  ),
  COORDINATOR_RATE_WINDOW_MS: ms(60_000, 1000, 86_400_000).describe(
    'The rate-limit window (fixed, starting at the first counted request).',
  ),
  COORDINATOR_RATE_PREFIX: z
    .string()
    .regex(/^[\w.:-]{1,64}$/, '1-64 letters, digits, _ . : or -')
    .default('mcp-fleet:coordinator:rl:')
    .describe('Prefix of the rate-limit keys in Redis (coordinator instances sharing a limit use the same one).'),
  COORDINATOR_RATE_REDIS_TIMEOUT_MS: ms(250, 10, 10_000).describe(
    'How long one count may wait for Redis; past it (or with Redis away) the request goes through uncounted, with a warning at most every 10 s.',
  ),
  REDIS_URL: optionalUrl(/^rediss?$/).describe(
    'Redis shared by coordinator instances, so that the rate limit is per client address across all of them; unset: counted in this process.',
  ),
  TRUST_PROXY: unsetIfEmpty(
    z
      .string()
      .trim()
      .min(1)
      .transform((v) => (v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v)),
  ).describe(
    "Express 'trust proxy' (loopback, a subnet such as 10.0.0.0/8, a hop count, true): behind a load balancer, the client address the rate limit counts is read from X-Forwarded-For. Unset: the socket's address.",
  ),
});

export type Config = z.output<typeof configSchema> & {
  /** Where the gateway is: COORDINATOR_GATEWAY_URL, else `<MEGA_ORCHESTRATOR>_URL`/`_PORT` (readConfig fills it). */
  gatewayUrl?: string;
};

export function readConfig(env?: Env): Config {
  const source = env ?? process.env;
  const config: Config = loadConfig(SERVICE_ID, configSchema, source);
  return { ...config, gatewayUrl: gatewayUrlOf(config, source) };
}

/** The gateway's base URL, without a trailing slash. */
export function gatewayUrlOf(config: Pick<Config, 'COORDINATOR_GATEWAY_URL'>, env: Env = {}): string {
  return (config.COORDINATOR_GATEWAY_URL ?? resolveUrl(getService(GATEWAY_ID)!, env)).replace(/\/+$/, '');
}
