import { randomBytes } from 'node:crypto';
import { backendUrl, describeWithBackend, testLogger } from '@mcp-fleet/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { createApp } from '../src/app';
import { cacheBehaviour, suiteConfig as env } from './cache-behaviour';

async function dropPrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length) await client.del(keys);
    cursor = next;
  } while (cursor !== '0');
}

describeWithBackend('redis', 'cache-mcp-wrapper on Redis', () => {
  const ns = `test-${randomBytes(6).toString('hex')}`;
  let raw: Redis;

  beforeAll(async () => {
    raw = new Redis(backendUrl('redis'));
    // A neighbour's data in the same Redis, which no pattern or key may reach.
    await raw.set(`${ns}-other:cache:secret`, 'neighbour');
    await raw.set(`other-${ns}`, 'neighbour');
  });
  afterAll(async () => {
    await dropPrefix(raw, ns);
    await raw.del(`other-${ns}`);
    raw.disconnect();
  });

  cacheBehaviour(() => createApp({ config: env({ REDIS_URL: backendUrl('redis'), CACHE_NAMESPACE: ns }), logger: testLogger() }));

  it('stores under <namespace>:cache: and never reaches the neighbours', async () => {
    const svc = await createApp({ config: env({ REDIS_URL: backendUrl('redis'), CACHE_NAMESPACE: ns }), logger: testLogger() });
    await request(svc.app)
      .post('/tools/cache')
      .send({ action: 'set', key: 'where', value: { a: 1 } })
      .expect(200);
    expect(await raw.get(`${ns}:cache:where`)).toBe('{"a":1}');
    const res = await request(svc.app).post('/tools/cache').send({ action: 'keys', pattern: '*', limit: 1000 }).expect(200);
    expect(res.body.result.keys).not.toContain('secret');
    expect(JSON.stringify(res.body.result.keys)).not.toContain('neighbour');
    const got = await request(svc.app).post('/tools/cache').send({ action: 'get', key: '../../other' }).expect(200);
    expect(got.body.result.found).toBe(false);
    await raw.hset(`${ns}:cache:hash`, 'f', 'v');
    const wrongType = await request(svc.app).post('/tools/cache').send({ action: 'get', key: 'hash' }).expect(409);
    expect(wrongType.body.code).toBe('CONFLICT');
    expect(await raw.get(`${ns}-other:cache:secret`)).toBe('neighbour');
    await svc.close();
  });

  it('pages through more keys than one SCAN batch returns', async () => {
    const svc = await createApp({ config: env({ REDIS_URL: backendUrl('redis'), CACHE_NAMESPACE: `${ns}-many` }), logger: testLogger() });
    const entries = Array.from({ length: 1500 }, (_, i) => ({ key: `k${i}`, value: i }));
    await request(svc.app)
      .post('/tools/cache')
      .send({ action: 'mset', entries: entries.slice(0, 1000) })
      .expect(200);
    await request(svc.app)
      .post('/tools/cache')
      .send({ action: 'mset', entries: entries.slice(1000) })
      .expect(200);
    const seen = new Set<string>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await request(svc.app)
        .post('/tools/cache')
        .send({ action: 'keys', pattern: 'k*', limit: 400, ...(cursor ? { cursor } : {}) })
        .expect(200);
      expect(res.body.result.keys.length).toBeLessThanOrEqual(400);
      res.body.result.keys.forEach((k: string) => seen.add(k));
      cursor = res.body.result.nextCursor;
      pages++;
    } while (cursor && pages < 50);
    expect(seen.size).toBe(1500);
    await svc.close();
  });
});

describe('cache-mcp-wrapper with Redis unreachable', () => {
  it('answers UPSTREAM_UNAVAILABLE and reports unhealthy, without leaking the URL', async () => {
    const svc = await createApp({
      config: env({ REDIS_URL: 'redis://:hunter2@127.0.0.1:1', REDIS_CONNECT_TIMEOUT_MS: '200' }),
      logger: testLogger(),
    });
    const res = await request(svc.app).post('/tools/cache').send({ action: 'get', key: 'k' }).expect(503);
    expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(JSON.stringify(res.body)).not.toContain('hunter2');
    const health = await request(svc.app).get('/health').expect(503);
    expect(health.body.status).toBe('unhealthy');
    expect(JSON.stringify(health.body)).not.toContain('hunter2');
    await svc.close();
  });
});
