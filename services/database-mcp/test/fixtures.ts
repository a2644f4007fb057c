import path from 'node:path';
import { type ServiceApp } from '@mcp-fleet/kit';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import { pgReaderRole, pgScratchSchema, tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';

export const testEnv = (extra: Record<string, string | undefined>): Record<string, string | undefined> => ({
  HOST: testConfig.HOST,
  LOG_LEVEL: testConfig.LOG_LEVEL,
  BODY_LIMIT: testConfig.BODY_LIMIT,
  TOOL_TIMEOUT_MS: String(testConfig.TOOL_TIMEOUT_MS),
  SHUTDOWN_TIMEOUT_MS: String(testConfig.SHUTDOWN_TIMEOUT_MS),
  DB_MAX_ROWS: '500',
  DB_STATEMENT_TIMEOUT_MS: '1500',
  ...extra,
});

export async function buildApp(env: Record<string, string | undefined>): Promise<ServiceApp> {
  return createApp({ config: readConfig(env), logger: testLogger('database-mcp') });
}

/** One engine under test: a writable and a read-only connection over the same, fresh data. */
export interface EngineFixture {
  engine: 'sqlite' | 'postgres';
  app: ServiceApp;
  writable: string;
  readonly: string;
  /** Placeholder number i (1-based) in this engine's syntax. */
  p(i: number): string;
  /** Row count of a table, read over an independent connection. */
  count(table: string): Promise<number>;
  /** Does the table exist (independent connection)? */
  exists(table: string): Promise<boolean>;
  cleanup(): Promise<void>;
}

export async function sqliteFixture(): Promise<EngineFixture> {
  const tmp = tempDir('database-mcp-');
  const file = path.join(tmp.dir, 'sandbox.sqlite');
  const app = await buildApp(
    testEnv({ DATA_DIR: tmp.dir, DB_SANDBOX_FILE: file, DATABASES: JSON.stringify({ ro: { file, writable: false } }) }),
  );
  const independent = async <T>(fn: (db: SqliteDb) => Promise<T>) => {
    const db = await SqliteDb.open(file, { readonly: true });
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  };
  return {
    engine: 'sqlite',
    app,
    writable: 'sandbox',
    readonly: 'ro',
    p: () => '?',
    count: (table) => independent(async (db) => (await db.get<{ n: number }>(`SELECT count(*) AS n FROM "${table}"`))!.n),
    exists: (table) => independent(async (db) => (await db.get(`SELECT 1 FROM sqlite_schema WHERE name = ?`, [table])) !== undefined),
    cleanup: async () => {
      await app.close();
      tmp.cleanup();
    },
  };
}

/**
 * A fresh PostgreSQL schema, reached through connection URLs whose search_path is that schema: the
 * writable one as the server's superuser, the read-only one as a login role without privileges.
 */
export async function postgresFixture(): Promise<EngineFixture> {
  const { schema, admin, url, drop } = await pgScratchSchema('dbmcp');
  const reader = await pgReaderRole(admin, url, schema, 'dbmcp_ro');
  const tmp = tempDir('database-mcp-');
  const app = await buildApp(
    testEnv({
      DATA_DIR: tmp.dir,
      DATABASES: JSON.stringify({ pgw: { url, writable: true }, pgro: { url: reader.url, writable: false } }),
    }),
  );
  return {
    engine: 'postgres',
    app,
    writable: 'pgw',
    readonly: 'pgro',
    p: (i) => `$${i}`,
    count: async (table) => Number((await admin.query(`SELECT count(*) AS n FROM ${schema}."${table}"`)).rows[0].n),
    exists: async (table) => (await admin.query('SELECT to_regclass($1) AS r', [`${schema}."${table}"`])).rows[0].r !== null,
    cleanup: async () => {
      await app.close();
      await reader.drop();
      await drop();
      tmp.cleanup();
    },
  };
}
