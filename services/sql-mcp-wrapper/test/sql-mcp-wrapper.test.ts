import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '@mcp-fleet/kit';
import { SqliteDb } from '@mcp-fleet/kit/sqlite';
import { tempDir } from '@mcp-fleet/testing';
import request from 'supertest';
import { readConfig } from '../src/config';
import { buildApp, testEnv } from './fixtures';

describe('sql-mcp-wrapper', () => {
  let tmp: { dir: string; cleanup: () => void };
  beforeEach(() => {
    tmp = tempDir('sql-wrapper-');
  });
  afterEach(() => tmp.cleanup());

  it('starts with no PostgreSQL and no sandbox file: creates it empty and every tool answers', async () => {
    const svc = await buildApp(testEnv({ DATA_DIR: tmp.dir }));
    try {
      expect(fs.existsSync(path.join(tmp.dir, 'database-mcp', 'sandbox.sqlite'))).toBe(true);
      const list = await request(svc.app).get('/tools/list').expect(200);
      expect(list.body.tools.map((t: { name: string }) => t.name)).toEqual(['query', 'schema', 'connection']);
      for (const t of list.body.tools) expect(t.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      const q = list.body.tools[0].inputSchema;
      expect(q.properties.filters.items.properties.op.enum).toContain('ilike');
      expect(q.properties.limit).toMatchObject({ maximum: 500, default: 50 });
      const schema = await request(svc.app).post('/tools/schema').send({ action: 'list' }).expect(200);
      expect(schema.body.result).toMatchObject({ engine: 'sqlite', tables: [], total: 0 });
      const status = await request(svc.app).post('/tools/connection').send({}).expect(200);
      expect(status.body.result).toMatchObject({ name: 'sandbox', engine: 'sqlite', readOnly: true, connected: true });
      await request(svc.app).post('/tools/connection').send({ action: 'test' }).expect(200);
      await request(svc.app)
        .post('/tools/call')
        .send({ name: 'query', arguments: { table: 'nothing' } })
        .expect(404);
      expect((await request(svc.app).get('/health').expect(200)).body.status).toBe('healthy');
    } finally {
      await svc.close();
    }
  });

  it('sees tables that database-mcp writes into the shared sandbox, also after a restart', async () => {
    const file = path.join(tmp.dir, 'database-mcp', 'sandbox.sqlite');
    const svc = await buildApp(testEnv({ DATA_DIR: tmp.dir }));
    const writer = await SqliteDb.open(file);
    try {
      await writer.exec("CREATE TABLE later (v TEXT); INSERT INTO later VALUES ('new')");
      const res = await request(svc.app).post('/tools/query').send({ table: 'later' }).expect(200);
      expect(res.body.result.rows).toEqual([{ v: 'new' }]);
      await svc.close();
      // Data persists across a restart of the wrapper.
      const again = await buildApp(testEnv({ DATA_DIR: tmp.dir }));
      try {
        expect((await request(again.app).post('/tools/query').send({ table: 'later' }).expect(200)).body.result.rows).toEqual([
          { v: 'new' },
        ]);
      } finally {
        await again.close();
      }
    } finally {
      await svc.close();
      await writer.close();
    }
  });

  it('caches the schema for SQL_SCHEMA_CACHE_MS', async () => {
    const file = path.join(tmp.dir, 'database-mcp', 'sandbox.sqlite');
    const svc = await buildApp(testEnv({ DATA_DIR: tmp.dir, SQL_SCHEMA_CACHE_MS: '600000' }));
    const writer = await SqliteDb.open(file);
    try {
      expect((await request(svc.app).post('/tools/schema').send({ action: 'list' }).expect(200)).body.result.total).toBe(0);
      await writer.exec('CREATE TABLE t (a INTEGER)');
      expect((await request(svc.app).post('/tools/schema').send({ action: 'list' }).expect(200)).body.result.total).toBe(0);
    } finally {
      await svc.close();
      await writer.close();
    }
  });

  it('reports an unreachable PostgreSQL as unhealthy without the password', async () => {
    const svc = await buildApp(testEnv({ DATA_DIR: tmp.dir, SQL_DATABASE_URL: 'postgres://app:hunter2-secret@127.0.0.1:1/db' }));
    try {
      const health = await request(svc.app).get('/health').expect(503);
      expect(health.body.status).toBe('unhealthy');
      const status = await request(svc.app).post('/tools/connection').send({ action: 'status' }).expect(200);
      expect(status.body.result).toMatchObject({ engine: 'postgres', connected: false, target: 'postgres://app:***@127.0.0.1:1/db' });
      const q = await request(svc.app).post('/tools/query').send({ table: 'x' }).expect(503);
      expect(q.body.code).toBe('UPSTREAM_UNAVAILABLE');
      const stats = await request(svc.app).post('/tools/connection').send({ action: 'stats' }).expect(200);
      expect(JSON.stringify([health.body, status.body, q.body, stats.body])).not.toMatch(/hunter2/);
    } finally {
      await svc.close();
    }
  });

  it('reads configuration: SQL_DATABASE_URL, then DATABASE_URL, else the sandbox', () => {
    const base = testEnv({ DATA_DIR: tmp.dir });
    expect(readConfig(base).connection).toMatchObject({
      engine: 'sqlite',
      writable: false,
      file: path.join(tmp.dir, 'database-mcp', 'sandbox.sqlite'),
    });
    expect(readConfig({ ...base, DATABASE_URL: 'postgres://h/a' }).connection).toMatchObject({
      engine: 'postgres',
      url: 'postgres://h/a',
      writable: false,
    });
    expect(readConfig({ ...base, DATABASE_URL: 'postgres://h/a', SQL_DATABASE_URL: 'postgresql://h/b' }).connection.url).toBe(
      'postgresql://h/b',
    );
    for (const env of [
      { SQL_DATABASE_URL: 'mysql://u:pw-secret@h/db' },
      { SQL_DATABASE_URL: 'sqlite:/tmp/x.sqlite' },
      { SQL_SCHEMA_CACHE_MS: '-1' },
    ]) {
      expect(() => readConfig({ ...base, ...env })).toThrow(ConfigError);
    }
    expect(() => readConfig({ ...base, SQL_DATABASE_URL: 'mysql://u:pw-secret@h/db' })).toThrow(/SQL_DATABASE_URL/);
    try {
      readConfig({ ...base, SQL_DATABASE_URL: 'mysql://u:pw-secret@h/db' });
    } catch (err) {
      expect((err as Error).message).not.toMatch(/pw-secret/);
    }
  });
});
