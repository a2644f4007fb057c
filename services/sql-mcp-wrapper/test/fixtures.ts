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
  SQL_SCHEMA_CACHE_MS: '0',
  ...extra,
});

export async function buildApp(env: Record<string, string | undefined>): Promise<ServiceApp> {
  return createApp({ config: readConfig(env), logger: testLogger('sql-mcp-wrapper') });
}

/** Engine-neutral seed data: people, a 1200-row table and a table whose names need quoting. */
export const SEED = [
  'CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, age INTEGER)',
  "INSERT INTO people VALUES (1, 'ada', 'ada@example.org', 36), (2, 'bob', NULL, 25), (3, 'Cyd', 'cyd@example.org', 51), " +
    "(4, 'dee', 'dee@example.net', 25), (5, 'eve', NULL, NULL)",
  'CREATE TABLE x (a INTEGER)',
  'INSERT INTO x VALUES (1), (2)',
  'CREATE TABLE big (n INTEGER PRIMARY KEY)',
  'WITH RECURSIVE c(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM c WHERE v < 1200) INSERT INTO big (n) SELECT v FROM c',
  'CREATE TABLE "odd ""name" ("sel""ect" INTEGER, "; drop" TEXT)',
  `INSERT INTO "odd ""name" VALUES (7, 'seven')`,
];

export interface WrapperFixture {
  engine: 'sqlite' | 'postgres';
  app: ServiceApp;
  /** Row count over an independent connection. */
  count(table: string): Promise<number>;
  cleanup(): Promise<void>;
}

export async function sqliteFixture(): Promise<WrapperFixture> {
  const tmp = tempDir('sql-wrapper-');
  const file = path.join(tmp.dir, 'database-mcp', 'sandbox.sqlite');
  const db = await SqliteDb.open(file);
  for (const sql of SEED) await db.exec(sql);
  await db.close();
  const app = await buildApp(testEnv({ DATA_DIR: tmp.dir }));
  return {
    engine: 'sqlite',
    app,
    count: async (table) => {
      const ro = await SqliteDb.open(file, { readonly: true });
      try {
        return (await ro.get<{ n: number }>(`SELECT count(*) AS n FROM "${table}"`))!.n;
      } finally {
        await ro.close();
      }
    },
    cleanup: async () => {
      await app.close();
      tmp.cleanup();
    },
  };
}

export async function postgresFixture(): Promise<WrapperFixture> {
  const { schema, admin, url, drop } = await pgScratchSchema('sqlw');
  for (const sql of SEED) await admin.query(sql);
  // The wrapper is read-only, so it refuses the superuser: it connects as a role that may only read the schema.
  const reader = await pgReaderRole(admin, url, schema, 'sqlw_ro');
  const tmp = tempDir('sql-wrapper-');
  const app = await buildApp(testEnv({ DATA_DIR: tmp.dir, SQL_DATABASE_URL: reader.url }));
  return {
    engine: 'postgres',
    app,
    count: async (table) => Number((await admin.query(`SELECT count(*) AS n FROM ${schema}."${table}"`)).rows[0].n),
    cleanup: async () => {
      await app.close();
      await reader.drop();
      await drop();
      tmp.cleanup();
    },
  };
}
