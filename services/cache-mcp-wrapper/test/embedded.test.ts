import { testLogger } from '@mcp-fleet/testing';
import request from 'supertest';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';
import { compileGlob } from '../src/store/glob';
import { MemoryKvStore } from '../src/store/memory-kv';
import { cacheBehaviour, suiteConfig as env } from './cache-behaviour';

describe('cache-mcp-wrapper on the embedded store', () => {
  cacheBehaviour(() => createApp({ config: env(), logger: testLogger() }));
});

describe('embedded store specifics', () => {
  it('sweeps expired keys without being asked', async () => {
    let now = 1_000;
    const store = new MemoryKvStore({ maxBytes: 10_000, sweepIntervalMs: 60_000, now: () => now });
    await store.set('a', '1', { ttlMs: 10 });
    await store.set('b', '2');
    now += 11;
    expect(store.sweep()).toBe(1);
    expect(await store.ping()).toMatchObject({ keys: 1 });
    await store.close();
  });

  it('refuses writes past its memory budget and keeps what it had', async () => {
    const svc = await createApp({ config: env({ CACHE_EMBEDDED_MAX_BYTES: '2048' }), logger: testLogger() });
    await request(svc.app)
      .post('/tools/cache')
      .send({ action: 'set', key: 'a', value: 'x'.repeat(900) })
      .expect(200);
    await request(svc.app)
      .post('/tools/cache')
      .send({ action: 'set', key: 'b', value: 'x'.repeat(900) })
      .expect(200);
    const full = await request(svc.app)
      .post('/tools/cache')
      .send({ action: 'set', key: 'c', value: 'x'.repeat(900) })
      .expect(413);
    expect(full.body.error).toMatch(/CACHE_EMBEDDED_MAX_BYTES/);
    await request(svc.app).post('/tools/cache').send({ action: 'delete', key: 'a' }).expect(200);
    await request(svc.app)
      .post('/tools/cache')
      .send({ action: 'set', key: 'c', value: 'x'.repeat(900) })
      .expect(200);
    await svc.close();
  });

  it('matches globs like Redis, in linear time on hostile patterns', () => {
    const cases: [string, string, boolean][] = [
      ['a*b', 'aXXb', true],
      ['a*b', 'aXXc', false],
      ['a?c', 'abc', true],
      ['a?c', 'ac', false],
      ['[a-c]x', 'bx', true],
      ['[c-a]x', 'bx', true],
      ['[^a-c]x', 'bx', false],
      ['\\*', '*', true],
      ['\\*', 'a', false],
      ['*', '', true],
    ];
    for (const [p, k, want] of cases) expect([p, k, compileGlob(p).match(k)]).toEqual([p, k, want]);
    const evil = compileGlob(`${'a*'.repeat(60)}b`);
    expect(evil.match('a'.repeat(512))).toBe(false);
  });

  it('fails fast on bad configuration, naming the variable', () => {
    expect(() => readConfig({ CACHE_NAMESPACE: 'has space' })).toThrow(/CACHE_NAMESPACE/);
    expect(() => readConfig({ REDIS_URL: 'http://x', CACHE_MAX_VALUE_BYTES: '1' })).toThrow(/REDIS_URL[\s\S]*CACHE_MAX_VALUE_BYTES/);
    expect(readConfig({})).toMatchObject({ CACHE_NAMESPACE: 'mcp-fleet', CACHE_MAX_VALUE_BYTES: 524_288 });
    expect(readConfig({}).REDIS_URL).toBeUndefined();
  });
});
