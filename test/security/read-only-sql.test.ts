/**
 * Class 7 (issue 27): read-only SQL that is read-only for any role. A READ ONLY transaction does not
 * stop what a privileged PostgreSQL role does beside writing tables (COPY ... TO PROGRAM runs a
 * command, pg_read_file reads the server's files, a superuser leaves any role with RESET ROLE), so
 * read-only service refuses such a role outright and serves only a login role without those powers;
 * every statement still runs in a READ ONLY transaction that has taken its snapshot and is rolled
 * back. SQLite read-only handles are opened read-only with ATTACH, extensions and temporary objects
 * off. Each attack is tried in several spellings against the real services, the real PostgreSQL
 * on 127.0.0.1:5432 and real SQLite files, asserting it fails, changes nothing, and that legitimate
 * reads still work.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { ConfigError, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import {
  backendUrl,
  describeWithBackend,
  pgReaderRole,
  pgScratchSchema,
  tempDir,
  testEnv,
  testLogger,
  type PgReaderRole,
  type PgScratchSchema,
} from '@mcp-fleet/testing';
import { createApp as createDatabaseApp } from '../../services/database-mcp/src/app';
import { readConfig as readDatabaseConfig } from '../../services/database-mcp/src/config';
import { createApp as createWrapperApp } from '../../services/sql-mcp-wrapper/src/app';
import { readConfig as readWrapperConfig } from '../../services/sql-mcp-wrapper/src/config';

const tmp = tempDir('sec-rosql-');
afterAll(() => tmp.cleanup());

async function databaseMcp(extra: Record<string, string>, logger: Logger = testLogger('database-mcp')): Promise<ServiceApp> {
  return createDatabaseApp({ config: readDatabaseConfig(testEnv({ DATA_DIR: tmp.dir, ...extra })), logger });
}

async function sqlWrapper(extra: Record<string, string>, logger: Logger = testLogger('sql-mcp-wrapper')): Promise<ServiceApp> {
  return createWrapperApp({ config: readWrapperConfig(testEnv({ DATA_DIR: tmp.dir, ...extra })), logger });
}

async function until(test: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!test() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return test();
}

/** A marker path in the shared /tmp that a command run by the PostgreSQL server would create. */
const markerPath = (name: string) => path.join(os.tmpdir(), `rosql-${name}-${randomBytes(4).toString('hex')}`);

describeWithBackend('postgres', 'read-only SQL on PostgreSQL', () => {
  const marker = markerPath('pwned');
  const copied = markerPath('copied');
  let scratch: PgScratchSchema;
  let reader: PgReaderRole;
  /** Roles that are no superusers yet reach files, programs or other roles. */
  const risky: Record<string, { role?: PgReaderRole; grant: (role: string) => string[]; problem: RegExp }> = {
    files: {
      grant: (r) => [`GRANT pg_execute_server_program, pg_read_server_files TO ${r}`],
      problem: /member of pg_execute_server_program/,
    },
    roles: { grant: (r) => [`ALTER ROLE ${r} CREATEROLE`], problem: /CREATEROLE/ },
    rls: { grant: (r) => [`ALTER ROLE ${r} BYPASSRLS`], problem: /BYPASSRLS/ },
    readfile: {
      grant: (r) => [`GRANT EXECUTE ON FUNCTION pg_catalog.pg_read_file(text) TO ${r}`],
      problem: /EXECUTE on pg_read_file\(text\)/,
    },
    member: {
      grant: (r) => [`CREATE ROLE ${r}_su SUPERUSER NOLOGIN`, `GRANT ${r}_su TO ${r}`],
      problem: /may become superuser/,
    },
  };
  let svc: ServiceApp;
  let bootErrors: jest.SpyInstance;

  const exec = (database: string, query: string) => request(svc.app).post('/db/execute').send({ database, query });
  const rows = async () => (await scratch.admin.query('SELECT id, v FROM t ORDER BY id')).rows;
  const ORIGINAL = [
    { id: 1, v: 'one' },
    { id: 2, v: 'two' },
    { id: 3, v: 'three' },
  ];

  beforeAll(async () => {
    scratch = await pgScratchSchema('rosql');
    await scratch.admin.query('CREATE TABLE t (id int PRIMARY KEY, v text)');
    await scratch.admin.query("INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')");
    await scratch.admin.query('CREATE SEQUENCE s');
    reader = await pgReaderRole(scratch.admin, scratch.url, scratch.schema, 'rosql_ro');
    for (const entry of Object.values(risky)) {
      entry.role = await pgReaderRole(scratch.admin, scratch.url, scratch.schema, 'rosql_risky');
      for (const sql of entry.grant(entry.role.role)) await scratch.admin.query(sql);
    }
    const logger = testLogger('database-mcp');
    bootErrors = jest.spyOn(logger, 'error');
    svc = await databaseMcp(
      {
        // One pooled session, so a call that left anything in its session would show it to the next.
        DB_POOL_MAX: '1',
        DATABASES: JSON.stringify({
          su: { url: scratch.url },
          ro: { url: reader.url },
          ...Object.fromEntries(Object.entries(risky).map(([name, e]) => [name, { url: e.role!.url }])),
        }),
      },
      logger,
    );
  });

  afterAll(async () => {
    await svc?.close();
    for (const e of Object.values(risky)) {
      if (!e.role) continue;
      await e.role.drop();
      await scratch.admin.query(`DROP ROLE IF EXISTS ${e.role.role}_su`);
    }
    await reader?.drop();
    await scratch?.drop();
    for (const f of [marker, copied]) fs.rmSync(f, { force: true });
  });

  it('refuses to serve read-only over a superuser: every call answers NOT_CONFIGURED naming the fix', async () => {
    for (const sql of [
      'SELECT 1',
      `COPY (SELECT 1) TO PROGRAM 'touch ${marker}'`,
      `copy t to program 'touch ${marker}'`,
      `CoPy/**/(select 1)/**/TO/**/PROGRAM 'touch ${marker}'`,
      "SELECT pg_read_file('/etc/passwd')",
      'RESET ROLE',
    ]) {
      const res = await exec('su', sql);
      expect([res.status, res.body.code]).toEqual([503, 'NOT_CONFIGURED']);
      expect(res.body.error).toMatch(/role "postgres".*superuser/);
      expect(res.body.error).toMatch(/CREATE ROLE \w+ LOGIN .*NOSUPERUSER/);
    }
    for (const route of ['/db/tables?database=su', '/db/schema/t?database=su', '/db/sample/t?database=su']) {
      expect((await request(svc.app).get(route)).body.code).toBe('NOT_CONFIGURED');
    }
    expect(fs.existsSync(marker)).toBe(false);
    const health = await request(svc.app).get('/health').expect(200);
    expect(health.body.status).toBe('degraded');
    expect(health.body.checks['database:su'].status).toBe('error');
    // The operator is told at start, with the role to create and the opt-out's name.
    expect(await until(() => bootErrors.mock.calls.some(([m]) => /"su" is refused/.test(String(m))))).toBe(true);
    const told = String(bootErrors.mock.calls.find(([m]) => /"su" is refused/.test(String(m)))![0]);
    expect(told).toMatch(/CREATE ROLE/);
    expect(told).toMatch(/DB_READONLY_ALLOW_PRIVILEGED_ROLE/);
  });

  it.each(Object.keys(risky))('refuses a role that is no superuser but reaches beyond reading (%s)', async (name) => {
    for (const sql of ['SELECT 1', `COPY (SELECT 1) TO PROGRAM 'touch ${marker}'`, "SELECT pg_read_file('/etc/passwd')"]) {
      const res = await exec(name, sql);
      expect([res.status, res.body.code]).toEqual([503, 'NOT_CONFIGURED']);
      expect(res.body.error).toMatch(risky[name].problem);
      expect(res.body.details.problems.join('\n')).toMatch(risky[name].problem);
    }
    expect(fs.existsSync(marker)).toBe(false);
  });

  /** Refused outright, with a caller's error (never 500, never 503). */
  const refused = [
    `COPY (SELECT 1) TO PROGRAM 'touch ${marker}'`,
    `copy (select 1) to program 'touch ${marker}'`,
    `copy t to program 'touch ${marker}'`,
    `CoPy/**/(SELECT 1)/**/To/**/PrOgRaM 'touch ${marker}'`,
    `COPY -- comment\n t TO PROGRAM 'touch ${marker}'`,
    `COPY t FROM PROGRAM 'touch ${marker}'`,
    `COPY t TO '${copied}'`,
    "SELECT pg_read_file('/etc/passwd')",
    "select PG_READ_FILE('/etc/passwd', 0, 100)",
    "SELECT pg_read_binary_file('/etc/passwd')",
    "SELECT pg_ls_dir('/')",
    "SELECT * FROM pg_stat_file('/etc/passwd')",
    "SELECT lo_import('/etc/passwd')",
    `SELECT lo_export(1, '${copied}')`,
    'SET TRANSACTION READ WRITE',
    'set transaction read write',
    "SET TRANSACTION READ WRITE; INSERT INTO t VALUES (9, 'x')",
    "select set_config('transaction_read_only', 'off', true)",
    'SET ROLE postgres',
    'SET SESSION AUTHORIZATION postgres',
    'WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d',
    "with u as (update t set v = 'x' returning *) select * from u",
    'CREATE TEMP TABLE tmp_x (a int)',
    'create temporary table tmp_y as select * from t',
    "DO $$ BEGIN INSERT INTO t VALUES (9, 'x'); END $$",
    "DO $$ BEGIN SET TRANSACTION READ WRITE; INSERT INTO t VALUES (9, 'x'); END $$",
    `DO $$ BEGIN EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch ${marker}'''; END $$`,
    'SELECT 1; DELETE FROM t',
    `SELECT 1; COPY (SELECT 1) TO PROGRAM 'touch ${marker}'`,
    "INSERT INTO t VALUES (9, 'x')",
    'DELETE FROM t',
    'TRUNCATE t',
    "SELECT nextval('s')",
    'CREATE EXTENSION IF NOT EXISTS dblink',
    'ALTER ROLE CURRENT_USER SUPERUSER',
    'GRANT pg_execute_server_program TO CURRENT_USER',
  ];
  /** Accepted by PostgreSQL but inert: they change only this call's transaction, which is rolled back. */
  const inert = [
    'BEGIN READ WRITE',
    'START TRANSACTION READ WRITE',
    'SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE',
    "select set_config('default_transaction_read_only', 'off', false)",
    'SET default_transaction_read_only = off',
    'RESET ROLE',
    'RESET SESSION AUTHORIZATION',
    'COMMIT',
    'SELECT pg_advisory_lock(4242)',
    'PREPARE sneaky AS SELECT 1',
    'NOTIFY rosql',
  ];

  it.each(refused)('refuses %j on an unprivileged role and changes nothing', async (sql) => {
    const res = await exec('ro', sql);
    expect([400, 403]).toContain(res.status);
    expect(['VALIDATION_ERROR', 'FORBIDDEN']).toContain(res.body.code);
    await expectNothingChanged();
  });

  it.each(inert)('lets %j change nothing beyond its own call', async (sql) => {
    const res = await exec('ro', sql);
    expect(res.status).toBeLessThan(500);
    await expectNothingChanged();
  });

  /** Nothing outlives the call (checked first, before any other call could clean up); the next call is as read-only as the first, as the same role. */
  async function expectNothingChanged(): Promise<void> {
    const locks = await scratch.admin.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory'");
    expect(locks.rows[0].n).toBe(0);
    const prepared = await exec('ro', "SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'sneaky'").expect(200);
    expect(prepared.body.result.rows).toEqual([{ n: 0 }]);
    const who = await exec('ro', "SELECT current_user AS u, session_user AS s, current_setting('transaction_read_only') AS ro").expect(200);
    expect(who.body.result.rows).toEqual([{ u: reader.role, s: reader.role, ro: 'on' }]);
    const write = await exec('ro', "INSERT INTO t VALUES (10, 'late')");
    expect([write.status, write.body.code]).toEqual([403, 'FORBIDDEN']);
    expect((await exec('ro', 'SET TRANSACTION READ WRITE')).status).toBe(400);
    expect(await rows()).toEqual(ORIGINAL);
    expect(fs.existsSync(marker)).toBe(false);
    expect(fs.existsSync(copied)).toBe(false);
    const temp = await scratch.admin.query("SELECT count(*)::int AS n FROM pg_class WHERE relname LIKE 'tmp\\_%' AND relpersistence = 't'");
    expect(temp.rows[0].n).toBe(0);
  }

  it('still serves legitimate reads to the unprivileged role', async () => {
    const res = await exec('ro', 'SELECT id, v FROM t WHERE id >= 2 ORDER BY id').expect(200);
    expect(res.body.result).toMatchObject({
      writable: false,
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'v', type: 'text' },
      ],
      rows: ORIGINAL.slice(1),
    });
    const joined = await exec('ro', 'WITH x AS (SELECT id FROM t) SELECT count(*)::int AS n FROM x').expect(200);
    expect(joined.body.result.rows).toEqual([{ n: 3 }]);
    expect((await request(svc.app).get('/db/sample/t?database=ro').expect(200)).body.result.rowCount).toBe(3);
    expect((await request(svc.app).get('/db/schema/t?database=ro').expect(200)).body.result.table.primaryKey).toEqual(['id']);
    const health = await request(svc.app).get('/health').expect(200);
    expect(health.body.checks['database:ro'].status).toBe('ok');
  });

  it('sql-mcp-wrapper refuses a superuser URL and serves the unprivileged role', async () => {
    const logger = testLogger('sql-mcp-wrapper');
    const errors = jest.spyOn(logger, 'error');
    const su = await sqlWrapper({ SQL_DATABASE_URL: scratch.url }, logger);
    try {
      const res = await request(su.app).post('/tools/query').send({ table: 't' });
      expect([res.status, res.body.code]).toEqual([503, 'NOT_CONFIGURED']);
      expect((await request(su.app).post('/tools/schema').send({ action: 'list' })).body.code).toBe('NOT_CONFIGURED');
      expect((await request(su.app).get('/health')).body.status).toBe('unhealthy');
      expect(await until(() => errors.mock.calls.some(([m]) => /SQL_READONLY_ALLOW_PRIVILEGED_ROLE/.test(String(m))))).toBe(true);
    } finally {
      await su.close();
    }
    const ro = await sqlWrapper({ SQL_DATABASE_URL: reader.url });
    try {
      const res = await request(ro.app)
        .post('/tools/query')
        .send({ table: 't', order: [{ column: 'id' }] })
        .expect(200);
      expect(res.body.result.rows).toEqual(ORIGINAL);
    } finally {
      await ro.close();
    }
  });

  it('opens the hole only under the explicit, logged opt-out (which the checks above would catch)', async () => {
    const logger = testLogger('database-mcp');
    const warnings = jest.spyOn(logger, 'warn');
    const unsafe = await databaseMcp(
      { DB_READONLY_ALLOW_PRIVILEGED_ROLE: '1', DATABASES: JSON.stringify({ su: { url: scratch.url } }) },
      logger,
    );
    const opened = markerPath('opt-out');
    try {
      expect(warnings.mock.calls.some(([m]) => /UNSAFE: DB_READONLY_ALLOW_PRIVILEGED_ROLE/.test(String(m)))).toBe(true);
      // The second layer stays: writes and a switch to read-write are still refused...
      expect((await request(unsafe.app).post('/db/execute').send({ database: 'su', query: 'DELETE FROM t' })).status).toBe(403);
      expect((await request(unsafe.app).post('/db/execute').send({ database: 'su', query: 'SET TRANSACTION READ WRITE' })).status).toBe(
        400,
      );
      // ...but a superuser runs a program from inside a READ ONLY transaction, which is why the default refuses it.
      await request(unsafe.app)
        .post('/db/execute')
        .send({ database: 'su', query: `COPY (SELECT 1) TO PROGRAM 'touch ${opened}'` })
        .expect(200);
      expect(fs.existsSync(opened)).toBe(true);
      expect(await rows()).toEqual(ORIGINAL);
    } finally {
      await unsafe.close();
      fs.rmSync(opened, { force: true });
    }
  });
});

describe('read-only SQL on SQLite', () => {
  const dir = path.join(tmp.dir, 'sqlite');
  const file = path.join(dir, 'data.sqlite');
  const outside = path.join(dir, 'escaped.sqlite');
  let svc: ServiceApp;
  let before: Buffer;
  const exec = (database: string, query: string) => request(svc.app).post('/db/execute').send({ database, query });

  beforeAll(async () => {
    fs.mkdirSync(dir, { recursive: true });
    const db = await SqliteDb.open(file);
    await db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three');");
    await db.exec('PRAGMA journal_mode = DELETE');
    await db.close();
    before = fs.readFileSync(file);
    svc = await databaseMcp({ DB_SANDBOX_FILE: path.join(dir, 'sandbox.sqlite'), DATABASES: JSON.stringify({ lite: { file } }) });
  });
  afterAll(async () => {
    await svc?.close();
  });

  const readOnlyAttacks = [
    `ATTACH '${outside}' AS x`,
    `attach database '${outside}' as x`,
    `/* c */ AtTaCh DATABASE '${outside}' AS "x"`,
    `SELECT 1; ATTACH '${outside}' AS x`,
    `VACUUM INTO '${outside}'`,
    `vacuum main into '${outside}'`,
    'VACUUM',
    `SELECT load_extension('${path.join(dir, 'evil.so')}')`,
    'PRAGMA writable_schema = ON',
    "UPDATE sqlite_schema SET sql = 'x'",
    'PRAGMA query_only = OFF',
    'pragma QUERY_ONLY=0',
    'EXPLAIN PRAGMA query_only = 0',
    'EXPLAIN QUERY PLAN PRAGMA query_only = 0',
    'PRAGMA trusted_schema = ON',
    'PRAGMA hard_heap_limit = 1',
    'CREATE TEMP TABLE shadow (a)',
    "CREATE TEMP VIEW t AS SELECT 1 AS id, 'forged' AS v",
    'create temporary trigger tr after insert on t begin select 1; end',
    "INSERT INTO t VALUES (9, 'x')",
    "REPLACE INTO t VALUES (1, 'x')",
    "UPDATE t SET v = 'x'",
    'DELETE FROM t',
    'WITH d AS (SELECT 1) DELETE FROM t',
    'DROP TABLE t',
    'REINDEX',
    'ANALYZE',
    'BEGIN',
  ];

  it.each(readOnlyAttacks)('refuses %j on a read-only connection and changes nothing', async (sql) => {
    const res = await exec('lite', sql);
    expect([400, 403]).toContain(res.status);
    // Every later call is still read-only, still sees the real table, and nothing was written anywhere.
    const temp = await exec('lite', 'SELECT count(*) AS n FROM sqlite_temp_schema').expect(200);
    expect(temp.body.result.rows).toEqual([{ n: 0 }]);
    expect((await exec('lite', 'CREATE TEMP TABLE later (a)')).status).toBe(403);
    const read = await exec('lite', 'SELECT id, v FROM t ORDER BY id').expect(200);
    expect(read.body.result.rows.map((r: { v: string }) => r.v)).toEqual(['one', 'two', 'three']);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(fs.readdirSync(dir).filter((f) => f !== 'data.sqlite' && !f.startsWith('sandbox.sqlite'))).toEqual([]);
    expect(fs.existsSync(outside)).toBe(false);
  });

  it('serves queries on the read-only connection, with column types', async () => {
    const res = await exec('lite', 'SELECT id, v FROM t WHERE id > 1 ORDER BY id').expect(200);
    expect(res.body.result).toMatchObject({
      writable: false,
      columns: [
        { name: 'id', type: 'integer' },
        { name: 'v', type: 'text' },
      ],
      rows: [
        { id: 2, v: 'two' },
        { id: 3, v: 'three' },
      ],
    });
    await exec('lite', 'WITH x AS (SELECT id FROM t) SELECT count(*) AS n FROM x').expect(200);
    await exec('lite', 'VALUES (1), (2)').expect(200);
    await exec('lite', 'EXPLAIN QUERY PLAN SELECT * FROM t WHERE id = 1').expect(200);
    await exec('lite', "SELECT * FROM pragma_table_info('t')").expect(200);
  });

  it('keeps the writable sandbox from reaching other files: ATTACH and VACUUM INTO in any spelling', async () => {
    for (const sql of [
      `ATTACH '${outside}' AS x`,
      `attach database '${outside}' as x`,
      `VACUUM INTO '${outside}'`,
      `vacuum "main" into '${outside}'`,
      `/**/VACUUM/**/main/**/INTO/**/'${outside}'`,
      `SELECT load_extension('${path.join(dir, 'evil.so')}')`,
    ]) {
      const res = await exec('sandbox', sql);
      expect([400, 403]).toContain(res.status);
    }
    expect(fs.existsSync(outside)).toBe(false);
    await exec('sandbox', 'CREATE TABLE scratch (a)').expect(200);
  });

  it('sql-mcp-wrapper opens its SQLite file read-only', async () => {
    const wrapper = await sqlWrapper({ SQL_SANDBOX_FILE: file });
    try {
      const res = await request(wrapper.app).post('/tools/query').send({ table: 't' }).expect(200);
      expect(res.body.result.rowCount).toBe(3);
      expect(fs.readFileSync(file).equals(before)).toBe(true);
    } finally {
      await wrapper.close();
    }
  });
});

describe('read-only SQL on MariaDB/MySQL', () => {
  it('is not offered: database-mcp and sql-mcp-wrapper refuse mysql:// and mariadb:// URLs at start', () => {
    for (const url of [backendUrl('mariadb'), 'mariadb://root@127.0.0.1:3306/test', 'MYSQL://root@127.0.0.1/test']) {
      expect(() => readDatabaseConfig(testEnv({ DATA_DIR: tmp.dir, DATABASES: `m=${url}` }))).toThrow(ConfigError);
      expect(() => readDatabaseConfig(testEnv({ DATA_DIR: tmp.dir, DATABASE_URL: url }))).toThrow(/unsupported URL scheme/);
      expect(() => readWrapperConfig(testEnv({ DATA_DIR: tmp.dir, SQL_DATABASE_URL: url }))).toThrow(ConfigError);
    }
  });
});
