/**
 * Where the call history, the contexts, the MCP tasks (tasks.ts) and, on PostgreSQL, the console's
 * sessions (http/console/session-store.ts) live: SQLite under DATA_DIR (the embedded default, one
 * gateway), or PostgreSQL (SESSION_DATABASE_URL) so that several gateway instances behind a load
 * balancer share one history. The store writes the same SQL to both; `?` placeholders become `$n`
 * for PostgreSQL, and numbers PostgreSQL returns as strings (BIGINT, COUNT) come back as numbers.
 */
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import type pg from 'pg';

export interface Statement {
  sql: string;
  params: unknown[];
}

export interface HistoryDb {
  readonly kind: 'sqlite' | 'postgres';
  run(sql: string, params?: unknown[]): Promise<void>;
  get<T>(sql: string, params?: unknown[]): Promise<T | undefined>;
  all<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /** The statements in order, in one transaction (all or none). */
  batch(statements: readonly Statement[]): Promise<void>;
  close(): Promise<void>;
}

/** The tables, in each engine's types: 64-bit integers, an auto-increment key, floating point. */
const schema = (t: { int64: string; serial: string; double: string }) => `
CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT PRIMARY KEY,
  transport TEXT NOT NULL,
  created_at ${t.int64} NOT NULL,
  last_seen ${t.int64} NOT NULL,
  calls INTEGER NOT NULL DEFAULT 0,
  errors INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS calls (
  id ${t.serial},
  session_id TEXT NOT NULL,
  context_id TEXT,
  tool TEXT NOT NULL,
  service TEXT,
  transport TEXT NOT NULL,
  mode TEXT NOT NULL,
  success INTEGER NOT NULL,
  code TEXT,
  duration_ms ${t.double} NOT NULL,
  at ${t.int64} NOT NULL,
  args TEXT,
  result TEXT
);
CREATE INDEX IF NOT EXISTS calls_by_session ON calls (session_id, id);
CREATE INDEX IF NOT EXISTS calls_by_time ON calls (at);
CREATE TABLE IF NOT EXISTS tasks (
  task_id TEXT PRIMARY KEY,
  owner TEXT,
  tool TEXT NOT NULL,
  status TEXT NOT NULL,
  status_message TEXT,
  created_at ${t.int64} NOT NULL,
  updated_at ${t.int64} NOT NULL,
  ttl_ms ${t.int64} NOT NULL,
  expires_at ${t.int64} NOT NULL,
  poll_ms INTEGER NOT NULL,
  instance TEXT NOT NULL,
  lease_until ${t.int64} NOT NULL,
  result TEXT,
  error TEXT,
  input_requests TEXT,
  instance_url TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_expiry ON tasks (expires_at);
CREATE INDEX IF NOT EXISTS tasks_by_status ON tasks (status, lease_until);
CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (owner, status);
CREATE TABLE IF NOT EXISTS console_sessions (
  session_key TEXT PRIMARY KEY,
  sealed TEXT NOT NULL,
  key_hash TEXT,
  created_at ${t.int64} NOT NULL,
  last_seen ${t.int64} NOT NULL
);
CREATE INDEX IF NOT EXISTS console_sessions_by_key ON console_sessions (key_hash);
`;

const SQLITE_SCHEMA = schema({ int64: 'INTEGER', serial: 'INTEGER PRIMARY KEY AUTOINCREMENT', double: 'REAL' });
const PG_SCHEMA = schema({ int64: 'BIGINT', serial: 'BIGSERIAL PRIMARY KEY', double: 'DOUBLE PRECISION' });

/** Columns added after a table's first release (TEXT): a store made before gets them on open. */
const ADDED_COLUMNS = [
  ['tasks', 'input_requests'],
  ['tasks', 'instance_url'],
  // a call's result (the console's history shows it); older calls have none
  ['calls', 'result'],
] as const;

/**
 * A new SQLite store's page size. A call's row holds its result's JSON (up to RESULT_MAX): with
 * SQLite's 4 KiB default most rows of a few KiB took a page each, and writing the history cost a
 * third more CPU per call (call-history micro-benchmark, 30,000 file_list calls: 36-38 µs a call
 * at 4 KiB, 25-32 µs at 8 KiB). A store made before keeps its pages (changing them means a VACUUM).
 */
const SQLITE_PAGE_SIZE = 8192;

export async function openSqliteHistory(file: string): Promise<HistoryDb> {
  // Set before the file is first written (no VACUUM: two gateways may open one new store at once).
  const db = await SqliteDb.open(file, { pageSize: SQLITE_PAGE_SIZE });
  await db.exec(SQLITE_SCHEMA);
  // a store made before tasks could ask for input, or named their instance's URL, or calls kept their result
  for (const [table, column] of ADDED_COLUMNS) {
    const columns = await db.all<{ name: string }>(`PRAGMA table_info(${table})`);
    if (!columns.some((c) => c.name === column)) await db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} TEXT`);
  }
  const self: HistoryDb = {
    kind: 'sqlite',
    run: async (sql, params = []) => void (await db.run(sql, params as never[])),
    get: (sql, params = []) => db.get(sql, params as never[]),
    all: (sql, params = []) => db.all(sql, params as never[]),
    batch: (statements) => db.batch(statements),
    close: () => db.close(),
  };
  return self;
}

const toPg = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};
/** Text columns whose values may look like numbers (a tool named "42", a JSON result "7"): never converted. */
const TEXT_COLUMNS = new Set([
  'args',
  'tool',
  'owner',
  'status_message',
  'result',
  'error',
  'task_id',
  'instance',
  'input_requests',
  'instance_url',
  'session_key',
  'sealed',
  'key_hash',
]);
/** BIGINT and COUNT(*) arrive as strings from pg; the store works in numbers. */
const numeric = <T>(row: Record<string, unknown>): T => {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row))
    out[k] = typeof v === 'string' && !TEXT_COLUMNS.has(k) && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
  return out as T;
};

export async function openPostgresHistory(url: string): Promise<HistoryDb> {
  // pg is loaded only for a PostgreSQL store (SESSION_DATABASE_URL), not by a gateway on SQLite
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Pool } = require('pg') as typeof pg;
  const pool = new Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 3000, statement_timeout: 20_000 });
  pool.on('error', () => undefined); // an idle client that dies is replaced on the next query
  const client = await pool.connect();
  try {
    // One gateway creates the tables; the others wait on the lock instead of racing it.
    await client.query('SELECT pg_advisory_lock(774411)');
    await client.query(PG_SCHEMA);
    for (const [table, column] of ADDED_COLUMNS) await client.query(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${column} TEXT`);
  } finally {
    await client.query('SELECT pg_advisory_unlock(774411)').catch(() => undefined);
    client.release();
  }
  const over = (q: pg.Pool): HistoryDb => ({
    kind: 'postgres',
    run: async (sql, params = []) => void (await q.query(toPg(sql), params)),
    get: async <T>(sql: string, params: unknown[] = []) => {
      const r = await q.query(toPg(sql), params);
      return r.rows[0] ? numeric<T>(r.rows[0]) : undefined;
    },
    all: async <T>(sql: string, params: unknown[] = []) => (await q.query(toPg(sql), params)).rows.map((r) => numeric<T>(r)),
    batch: async (statements) => {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        for (const st of statements) await c.query(toPg(st.sql), st.params);
        await c.query('COMMIT');
      } catch (err) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        c.release();
      }
    },
    close: () => pool.end(),
  });
  return over(pool);
}
