import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, type ServiceApp } from '@mcp-fleet/kit';
import { describeWithBackend, tempDir } from '@mcp-fleet/testing';
import request from 'supertest';
import { readConfig } from '../src/config';
import { buildApp, postgresFixture, testEnv, type EngineFixture } from './fixtures';

describe('database-mcp', () => {
  let tmp: { dir: string; cleanup: () => void };
  let svc: ServiceApp;
  beforeEach(async () => {
    tmp = tempDir('database-mcp-');
    svc = await buildApp(testEnv({ DATA_DIR: tmp.dir }));
  });
  afterEach(async () => {
    await svc.close();
    tmp.cleanup();
  });
  const exec = (body: Record<string, unknown>) => request(svc.app).post('/db/execute').send(body);

  it('lists its four tools with zod-generated schemas and honest annotations', async () => {
    const res = await request(svc.app).get('/tools/list').expect(200);
    const byName = Object.fromEntries(res.body.tools.map((t: { name: string }) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(['db_query', 'db_sample', 'db_schema', 'db_tables']);
    expect(byName.db_query.inputSchema).toMatchObject({
      type: 'object',
      required: ['query'],
      properties: { query: { type: 'string' }, database: { default: 'sandbox' } },
      additionalProperties: false,
    });
    expect(byName.db_query.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.db_tables.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(byName.db_query.description).toMatch(/500 rows/);
  });

  it('creates the sandbox under DATA_DIR and serves it through every route and /tools/call', async () => {
    expect(fs.existsSync(path.join(tmp.dir, 'database-mcp', 'sandbox.sqlite'))).toBe(true);
    await exec({ query: 'CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)' }).expect(200);
    await exec({ query: 'INSERT INTO notes (body) VALUES (?), (?)', params: ['one', 'two'] }).expect(200);
    const call = await request(svc.app)
      .post('/tools/call')
      .send({ name: 'db_query', arguments: { query: 'SELECT body FROM notes ORDER BY id' } })
      .expect(200);
    expect(call.body.result).toMatchObject({
      database: 'sandbox',
      engine: 'sqlite',
      writable: true,
      rows: [{ body: 'one' }, { body: 'two' }],
    });
    const tables = await request(svc.app).get('/db/tables').expect(200);
    expect(tables.body.result).toMatchObject({ database: 'sandbox', tables: [{ schema: 'main', name: 'notes', type: 'table' }], total: 1 });
    const whole = await request(svc.app).get('/db/schema').expect(200);
    expect(whole.body.result.tables[0]).toMatchObject({ name: 'notes', primaryKey: ['id'] });
    const sample = await request(svc.app).get('/db/sample/notes?limit=1').expect(200);
    expect(sample.body.result).toMatchObject({ rows: [{ id: 1, body: 'one' }], truncated: true });
    const page = await request(svc.app).post('/tools/db_tables').send({ limit: 1 }).expect(200);
    expect(page.body.result.nextCursor).toBeUndefined();
  });

  it('keeps sandbox data across a restart', async () => {
    await exec({ query: 'CREATE TABLE kept (v TEXT)' }).expect(200);
    await exec({ query: 'INSERT INTO kept VALUES (?)', params: ['survives'] }).expect(200);
    await svc.close();
    svc = await buildApp(testEnv({ DATA_DIR: tmp.dir }));
    const res = await exec({ query: 'SELECT v FROM kept' }).expect(200);
    expect(res.body.result.rows).toEqual([{ v: 'survives' }]);
  });

  it('rejects bad arguments with VALIDATION_ERROR and unknown databases with NOT_FOUND', async () => {
    expect((await exec({}).expect(400)).body.details[0].path).toBe('query');
    await exec({ query: 'SELECT 1', extra: true }).expect(400);
    await exec({ query: 'SELECT 1', params: { a: 1 } }).expect(400);
    await exec({ query: 'SELECT 1', params: [{ nested: true }] }).expect(400);
    await exec({ query: 'SELECT 1', maxRows: 0 }).expect(400);
    await exec({ query: '   ' }).expect(400);
    await exec({ query: '-- only a comment' }).expect(400);
    await exec({ query: 'SELECT ?', params: [[1, 2]] }).expect(400);
    const unknown = await exec({ query: 'SELECT 1', database: 'nope' }).expect(404);
    expect(unknown.body.error).toMatch(/configured: sandbox/);
    await request(svc.app).get('/db/sample/x?limit=1000').expect(400);
    await request(svc.app).get('/db/tables?cursor=garbage').expect(400);
  });

  it('refuses ATTACH, VACUUM INTO and transaction control on the sandbox', async () => {
    const other = path.join(tmp.dir, 'other.sqlite');
    expect((await exec({ query: `ATTACH DATABASE '${other}' AS o` }).expect(403)).body.code).toBe('FORBIDDEN');
    expect((await exec({ query: `attach '${other}' as o` }).expect(403)).body.code).toBe('FORBIDDEN');
    await exec({ query: `VACUUM INTO '${other}'` }).expect(403);
    expect(fs.existsSync(other)).toBe(false);
    await exec({ query: 'BEGIN' }).expect(400);
    await exec({ query: 'COMMIT' }).expect(400);
    // A single giant value is refused instead of filling memory; extensions cannot be loaded.
    expect((await exec({ query: 'SELECT length(randomblob(900000000)) AS n' }).expect(400)).body.details.sqlState).toBe('SQLITE_TOOBIG');
    await exec({ query: "SELECT load_extension('/tmp/nothing.so')" }).expect(400);
  });

  it('refuses a trailing statement hidden after a comment or string, but accepts a trigger body', async () => {
    await exec({ query: 'CREATE TABLE t (a INTEGER)' }).expect(200);
    await exec({ query: "SELECT ';' AS s; DELETE FROM t" }).expect(400);
    await exec({ query: 'SELECT 1 /* ; */ ; -- x\n DELETE FROM t' }).expect(400);
    await exec({ query: 'SELECT 1 -- ; DELETE FROM t' }).expect(200);
    await exec({ query: 'SELECT 1;;  ' }).expect(200);
    await exec({ query: 'CREATE TABLE log (a INTEGER)' }).expect(200);
    await exec({
      query: 'CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log VALUES (new.a); INSERT INTO log VALUES (new.a * 10); END;',
    }).expect(200);
    await exec({ query: 'INSERT INTO t VALUES (?)', params: [2] }).expect(200);
    const res = await exec({ query: 'SELECT a FROM log ORDER BY a' }).expect(200);
    expect(res.body.result.rows).toEqual([{ a: 2 }, { a: 20 }]);
  });

  it('answers constraint violations with CONFLICT', async () => {
    await exec({ query: 'CREATE TABLE u (id INTEGER PRIMARY KEY)' }).expect(200);
    await exec({ query: 'INSERT INTO u VALUES (1)' }).expect(200);
    expect((await exec({ query: 'INSERT INTO u VALUES (1)' }).expect(409)).body.code).toBe('CONFLICT');
  });

  it('reports health; an unreachable external database degrades it without leaking the password', async () => {
    const healthy = await request(svc.app).get('/health').expect(200);
    expect(healthy.body).toMatchObject({ status: 'healthy', checks: { 'database:sandbox': { status: 'ok', required: true } } });
    const other = await buildApp(
      testEnv({ DATA_DIR: tmp.dir, DATABASES: JSON.stringify({ far: { url: 'postgres://app:s3cr3t-pw@127.0.0.1:1/db' } }) }),
    );
    try {
      const degraded = await request(other.app).get('/health').expect(200);
      expect(degraded.body.status).toBe('degraded');
      expect(degraded.body.checks['database:far']).toMatchObject({ status: 'error', required: false });
      const failed = await request(other.app).post('/db/execute').send({ database: 'far', query: 'SELECT 1' }).expect(503);
      expect(failed.body.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(JSON.stringify([degraded.body, failed.body])).not.toMatch(/s3cr3t/);
    } finally {
      await other.close();
    }
  });

  it('fails fast on bad configuration, naming the variable and never the password', () => {
    const bad = (extra: Record<string, string>) => {
      try {
        readConfig(testEnv({ DATA_DIR: tmp.dir, ...extra }));
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('expected a ConfigError');
    };
    expect(bad({ DATABASES: '{not json' })).toMatch(/DATABASES: not valid JSON/);
    expect(bad({ DATABASES: '{"sandbox": {"url": "postgres://h/db"}}' })).toMatch(/sandbox.*taken/);
    expect(bad({ DATABASES: 'x=mysql://u:topsecret@h/db' })).toMatch(/unsupported URL scheme/);
    expect(bad({ DATABASES: 'x=mysql://u:topsecret@h/db' })).not.toMatch(/topsecret/);
    expect(bad({ DATABASES: '{"a": {"url": "postgres://h/db", "writeable": true}}' })).toMatch(/DATABASES/);
    expect(bad({ DB_MAX_ROWS: '20000' })).toMatch(/DB_MAX_ROWS/);
    const ok = readConfig(
      testEnv({
        DATA_DIR: tmp.dir,
        DATABASE_URL: 'postgres://u:pw@h:5432/db',
        DATABASE_WRITABLE: '1',
        DATABASES: 'a=postgres://h/a;b=sqlite:/tmp/b.sqlite',
      }),
    );
    expect(ok.connections.map((c) => [c.name, c.engine, c.writable])).toEqual([
      ['sandbox', 'sqlite', true],
      ['a', 'postgres', false],
      ['b', 'sqlite', false],
      ['main', 'postgres', true],
    ]);
  });
});

describeWithBackend('postgres', 'database-mcp on PostgreSQL', () => {
  let f: EngineFixture;
  beforeEach(async () => {
    f = await postgresFixture();
  });
  afterEach(async () => {
    await f.cleanup();
  });
  const exec = (database: string, query: string, params: unknown[] = []) =>
    request(f.app.app).post('/db/execute').send({ database, query, params });

  it('caps generate_series(1, 100000) without fetching it all', async () => {
    const res = await exec(f.readonly, 'SELECT g, md5(g::text) AS h FROM generate_series(1, 100000) g').expect(200);
    expect(res.body.result).toMatchObject({
      truncated: true,
      rowCount: 500,
      columns: [
        { name: 'g', type: 'integer' },
        { name: 'h', type: 'text' },
      ],
    });
    // The connection is reusable right after a cut result.
    const next = await exec(f.readonly, 'SELECT 41 + $1::int AS n', [1]).expect(200);
    expect(next.body.result.rows).toEqual([{ n: 42 }]);
  });

  it('turns pg_sleep past the statement timeout into TIMEOUT', async () => {
    const res = await exec(f.readonly, 'SELECT pg_sleep(5)').expect(504);
    expect(res.body).toMatchObject({ code: 'TIMEOUT', details: { sqlState: '57014' } });
  });

  it('maps read-only violations to FORBIDDEN with the SQLSTATE, also through functions and CTEs', async () => {
    await exec(f.writable, 'CREATE TABLE acct (id serial PRIMARY KEY, balance int)').expect(200);
    await exec(f.writable, 'INSERT INTO acct (balance) SELECT 100 FROM generate_series(1, 10)').expect(200);
    for (const sql of [
      'WITH d AS (DELETE FROM acct RETURNING *) SELECT count(*) FROM d',
      'TRUNCATE acct',
      'SELECT nextval(pg_get_serial_sequence($$acct$$, $$id$$))',
    ]) {
      expect((await exec(f.readonly, sql).expect(403)).body.code).toBe('FORBIDDEN');
    }
    // Switching the transaction to read-write is too late once the statement runs.
    await exec(f.readonly, "SELECT set_config('transaction_read_only', 'off', true)").expect(400);
    const del = await exec(f.readonly, 'DELETE FROM acct').expect(403);
    expect(del.body.details).toMatchObject({ engine: 'postgres', sqlState: '25006' });
    expect(await f.count('acct')).toBe(10);
    const sum = await exec(f.readonly, 'SELECT sum(balance)::int AS s FROM acct').expect(200);
    expect(sum.body.result.rows).toEqual([{ s: 1000 }]);
  });

  it('does not let session settings leak from one call to the next', async () => {
    await exec(f.readonly, "SET statement_timeout = '1h'").expect(200);
    await exec(f.readonly, 'SET search_path = pg_catalog').expect(200);
    await exec(f.writable, 'CREATE TABLE here (a int)').expect(200);
    await exec(f.writable, 'SET search_path = pg_catalog').expect(200);
    await exec(f.readonly, 'SELECT * FROM here').expect(200);
    await exec(f.writable, 'SELECT * FROM here').expect(200);
    expect((await exec(f.readonly, 'SELECT pg_sleep(5)').expect(504)).body.code).toBe('TIMEOUT');
  });

  it('reports PostgreSQL types, positions and refuses multi-statements with parameters too', async () => {
    const res = await exec(f.readonly, 'SELECT 1::bigint AS b, 2.5::numeric AS n, now() AS t, \'{"a":1}\'::jsonb AS j, true AS f').expect(
      200,
    );
    expect(res.body.result.columns.map((c: { type: string }) => c.type)).toEqual([
      'bigint',
      'numeric',
      'timestamp with time zone',
      'jsonb',
      'boolean',
    ]);
    expect(res.body.result.rows[0]).toMatchObject({ b: '1', n: '2.5', j: { a: 1 }, f: true });
    const err = await exec(f.readonly, 'SELECT 1 +').expect(400);
    expect(err.body.details).toMatchObject({ sqlState: '42601', position: 11 });
    await exec(f.readonly, 'SELECT $1::int; DELETE FROM x', [1]).expect(400);
  });
});
