import path from 'node:path';
import { baseEnvShape, bool, ConfigError, loadConfig, type Env, int } from '@mcp-fleet/kit';
import { toConnectionSpec, type ConnectionSpec } from '@mcp-fleet/sql';
import { z } from 'zod';

export const SERVICE_ID = 'sql-mcp-wrapper';

export const configSchema = z.object({
  ...baseEnvShape,
  SQL_DATABASE_URL: z
    .string()
    .optional()
    .meta({ secret: true })
    .describe('PostgreSQL to serve (read-only). Falls back to DATABASE_URL; with neither, the embedded SQLite sandbox.'),
  DATABASE_URL: z
    .string()
    .optional()
    .meta({ secret: true })
    .describe('PostgreSQL to query (read-only); unset: the embedded SQLite sandbox.'),
  SQL_READONLY_ALLOW_PRIVILEGED_ROLE: bool(false).describe(
    'UNSAFE: serve PostgreSQL even when its role is a superuser or may reach server files and programs (refused by default; logged).',
  ),
  SQL_SANDBOX_FILE: z
    .string()
    .min(1)
    .optional()
    .describe("The SQLite file served without PostgreSQL; default: database-mcp's sandbox, ${DATA_DIR}/database-mcp/sandbox.sqlite."),
  SQL_STATEMENT_TIMEOUT_MS: int(10_000, 100, 300_000).describe('Time limit of one query (TIMEOUT after it).'),
  SQL_SCHEMA_CACHE_MS: int(5_000, 0, 600_000).describe('How long introspected tables and columns are trusted before being read again.'),
  SQL_POOL_MAX: int(5, 1, 100).describe('Connections in the PostgreSQL pool.'),
  SQL_MAX_RESULT_BYTES: int(8_388_608, 1024, 67_108_864).describe('Approximate JSON size of the rows of one answer.'),
});

export type EnvConfig = z.output<typeof configSchema>;

export interface Config extends Omit<EnvConfig, 'SQL_DATABASE_URL' | 'DATABASE_URL'> {
  /** Always read-only. */
  connection: ConnectionSpec;
}

export function resolveConnection(c: EnvConfig): Config {
  const { SQL_DATABASE_URL, DATABASE_URL, ...rest } = c;
  const url = [SQL_DATABASE_URL, DATABASE_URL].map((v) => v?.trim()).find((v) => v);
  const variable = SQL_DATABASE_URL?.trim() ? 'SQL_DATABASE_URL' : 'DATABASE_URL';
  let connection: ConnectionSpec;
  if (url) {
    try {
      connection = toConnectionSpec('postgres', { url, writable: false, poolMax: c.SQL_POOL_MAX });
    } catch (err) {
      throw new ConfigError(SERVICE_ID, [{ variable, message: (err as Error).message }]);
    }
    if (connection.engine !== 'postgres') {
      throw new ConfigError(SERVICE_ID, [{ variable, message: 'must be a postgres:// URL (leave it unset to serve the SQLite sandbox)' }]);
    }
  } else {
    const file = path.resolve(c.SQL_SANDBOX_FILE ?? path.join(c.DATA_DIR, 'database-mcp', 'sandbox.sqlite'));
    connection = { name: 'sandbox', engine: 'sqlite', file, writable: false };
  }
  return { ...rest, connection };
}

export function readConfig(env?: Env): Config {
  return resolveConnection(loadConfig(SERVICE_ID, configSchema, env));
}
