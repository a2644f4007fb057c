import { baseEnvShape, int, loadConfig, postgresUrl, type Env } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'memory-mcp';

export const configSchema = z.object({
  ...baseEnvShape,
  MEMORY_DATABASE_URL: postgresUrl()
    .meta({ secret: true })
    .describe('PostgreSQL for memories; falls back to DATABASE_URL; neither means SQLite under DATA_DIR.'),
  DATABASE_URL: z
    .string()
    .optional()
    .meta({ secret: true })
    .describe('Fleet-wide database URL; used for memories only when it is a postgres:// URL.'),
  MEMORY_PG_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier')
    .default('memory_mcp')
    .describe('Schema holding the memories table (created when missing).'),
  MEMORY_PG_TS_CONFIG: z
    .string()
    .regex(/^[a-z_]{1,63}$/, 'a text search configuration name such as english or simple')
    .default('english')
    .describe('PostgreSQL text search configuration used for indexing and queries.'),
  MEMORY_PG_POOL_MAX: int(5, 1, 100).describe('Connections in the PostgreSQL pool.'),
  MEMORY_SEARCH_SHARDS: int(2, 1, 16).describe(
    'Embedded store: read connections that rank one search in parallel, each over a range of the memories (the top results are the same as with one; 1 turns it off).',
  ),
  MEMORY_MAX_PAGE_CHARS: int(2_000_000, 1000, 100_000_000).describe(
    'Most characters of memory text one list or search page carries; the page is cut before it.',
  ),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}

/** The PostgreSQL URL memories use, if any. */
export function memoryDatabaseUrl(config: Config): string | undefined {
  if (config.MEMORY_DATABASE_URL) return config.MEMORY_DATABASE_URL;
  const shared = config.DATABASE_URL?.trim();
  return shared && /^postgres(ql)?:\/\//.test(shared) ? shared : undefined;
}
