import { randomBytes } from 'node:crypto';
import { backendUrl, describeWithBackend, testLogger } from '@mcp-fleet/testing';
import pg from 'pg';
import request from 'supertest';
import { createApp } from '../src/app';
import { openMemoryStore } from '../src/store';
import { memoryBehaviour, suiteConfig } from './memory-behaviour';

describeWithBackend('postgres', 'memory-mcp on PostgreSQL', () => {
  const schema = `memory_test_${randomBytes(5).toString('hex')}`;
  const config = suiteConfig({ MEMORY_DATABASE_URL: backendUrl('postgres'), MEMORY_PG_SCHEMA: schema });

  afterAll(async () => {
    const client = new pg.Client({ connectionString: backendUrl('postgres') });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  memoryBehaviour(async () => {
    const store = await openMemoryStore(config, testLogger());
    return { svc: await createApp({ config, logger: testLogger(), store }), store };
  });

  it('indexes with a generated tsvector column and GIN indexes', async () => {
    const client = new pg.Client({ connectionString: backendUrl('postgres') });
    await client.connect();
    try {
      const idx = await client.query<{ indexdef: string }>('SELECT indexdef FROM pg_indexes WHERE schemaname = $1', [schema]);
      expect(idx.rows.map((r) => r.indexdef).join('\n')).toMatch(/USING gin \(tsv\)/);
      const col = await client.query('SELECT is_generated FROM information_schema.columns WHERE table_schema = $1 AND column_name = $2', [
        schema,
        'tsv',
      ]);
      expect(col.rows[0].is_generated).toBe('ALWAYS');
    } finally {
      await client.end();
    }
  });
});

describe('memory-mcp with PostgreSQL unreachable', () => {
  it('answers UPSTREAM_UNAVAILABLE, reports unhealthy and never shows the URL', async () => {
    const config = suiteConfig({ MEMORY_DATABASE_URL: 'postgres://postgres:s3cretpw@127.0.0.1:1/none' });
    const svc = await createApp({ config, logger: testLogger() });
    const res = await request(svc.app).post('/memory/store').send({ content: 'x' }).expect(503);
    expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(JSON.stringify(res.body)).not.toContain('s3cretpw');
    const health = await request(svc.app).get('/health').expect(503);
    expect(JSON.stringify(health.body)).not.toContain('s3cretpw');
    await svc.close();
  });
});
