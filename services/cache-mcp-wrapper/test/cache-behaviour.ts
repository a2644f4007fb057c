import type { ServiceApp } from '@mcp-fleet/kit';
import { testConfig } from '@mcp-fleet/testing';
import request from 'supertest';
import { configSchema, type Config } from '../src/config';

/**
 * The behaviour both backends must share, written once: embedded.test.ts runs it on the in-process
 * store, redis.test.ts on the machine's Redis. `open` builds an app with these limits.
 */
export function suiteConfig(extra: Record<string, string> = {}): Config {
  return configSchema.parse({ ...testConfig, DATA_DIR: '/tmp', CACHE_MAX_VALUE_BYTES: '1024', CACHE_MAX_RESPONSE_BYTES: '2048', ...extra });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function cacheBehaviour(open: () => Promise<ServiceApp>): void {
  let svc: ServiceApp;
  const cache = (args: Record<string, unknown>) => request(svc.app).post('/tools/cache').send(args);
  const session = (args: Record<string, unknown>) => request(svc.app).post('/tools/session').send(args);
  const ok = async (args: Record<string, unknown>, tool = cache) => {
    const res = await tool(args);
    if (res.status !== 200) throw new Error(`${JSON.stringify(args)} -> ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.result;
  };

  beforeAll(async () => {
    svc = await open();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('lists cache and session as one object each, every field documented with the actions that take it', async () => {
    const res = await request(svc.app).get('/tools/list').expect(200);
    const byName = Object.fromEntries(res.body.tools.map((t: { name: string }) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(['cache', 'session']);
    const schema = byName.cache.inputSchema;
    // one plain object (model APIs refuse a top-level oneOf), the action an enum
    expect(schema).toMatchObject({ type: 'object', required: ['action'], additionalProperties: false });
    expect(schema.oneOf ?? schema.anyOf ?? schema.allOf).toBeUndefined();
    expect(schema.properties.action.enum).toEqual(['get', 'set', 'delete', 'exists', 'expire', 'ttl', 'incr', 'mget', 'mset', 'keys']);
    const forSet = Object.keys(schema.properties).filter((k) => /For [^.;]*\bset\b/.test(schema.properties[k].description));
    expect(forSet.sort()).toEqual(['key', 'nx', 'ttlSeconds', 'value', 'xx']);
    expect(schema.properties.value.description).toMatch(/For set \(required\)\.$/);
    expect(schema.properties.ttlSeconds.description).toMatch(
      /^set: .* mset: TTL applied to every entry.* For set, expire, mset; required for expire\.$/,
    );
    expect(byName.session.inputSchema.properties.action.enum).toHaveLength(5);
    expect(byName.cache.annotations).toMatchObject({ destructiveHint: true, openWorldHint: false });
  });

  it('validates each action by its own fields: required per action, unknown to the action refused, defaults applied', async () => {
    for (const args of [{ action: 'set', key: 'k' }, { action: 'get', key: 'k', nx: true }, { action: 'get' }, { action: 'mset' }]) {
      const res = await cache(args);
      expect([args, res.status, res.body.code]).toEqual([args, 400, 'VALIDATION_ERROR']);
    }
    expect(await ok({ action: 'set', key: 'defaults', value: 1 })).toEqual({ key: 'defaults', stored: true });
    // nx and xx defaulted to false: a second plain set overwrites
    expect(await ok({ action: 'set', key: 'defaults', value: 2 })).toEqual({ key: 'defaults', stored: true });
    expect(await ok({ action: 'incr', key: 'defaults' })).toMatchObject({ value: 3 });
    await ok({ action: 'delete', key: 'defaults' });
  });

  it('stores and reads back JSON values of every kind', async () => {
    for (const [key, value] of [
      ['obj', { a: [1, 2, { b: 'ü' }] }],
      ['num', 42.5],
      ['str', 'hello'],
      ['nul', null],
      ['bool', false],
    ] as const) {
      expect(await ok({ action: 'set', key, value })).toEqual({ key, stored: true });
      expect(await ok({ action: 'get', key })).toEqual({ key, found: true, value });
    }
    expect(await ok({ action: 'get', key: 'never-set' })).toEqual({ key: 'never-set', found: false });
    expect(await ok({ action: 'exists', key: 'obj' })).toEqual({ key: 'obj', exists: true });
    expect(await ok({ action: 'exists', key: 'never-set' })).toEqual({ key: 'never-set', exists: false });
    const viaCall = await request(svc.app)
      .post('/tools/call')
      .send({ name: 'cache', arguments: { action: 'get', key: 'num' } })
      .expect(200);
    expect(viaCall.body).toMatchObject({ success: true, service: 'cache-mcp-wrapper', result: { value: 42.5 } });
  });

  it('honours NX and XX', async () => {
    expect(await ok({ action: 'set', key: 'cond', value: 1, xx: true })).toMatchObject({ stored: false });
    expect(await ok({ action: 'get', key: 'cond' })).toMatchObject({ found: false });
    expect(await ok({ action: 'set', key: 'cond', value: 1, nx: true })).toMatchObject({ stored: true });
    expect(await ok({ action: 'set', key: 'cond', value: 2, nx: true })).toMatchObject({
      stored: false,
      reason: expect.stringContaining('nx'),
    });
    expect(await ok({ action: 'set', key: 'cond', value: 3, xx: true })).toMatchObject({ stored: true });
    expect(await ok({ action: 'get', key: 'cond' })).toMatchObject({ value: 3 });
    const both = await cache({ action: 'set', key: 'cond', value: 4, nx: true, xx: true }).expect(400);
    expect(both.body.code).toBe('VALIDATION_ERROR');
    expect(await ok({ action: 'get', key: 'cond' })).toMatchObject({ value: 3 });
  });

  it('expires keys by TTL and reports the time left', async () => {
    await ok({ action: 'set', key: 'short', value: 'x', ttlSeconds: 1 });
    await ok({ action: 'set', key: 'forever', value: 'y' });
    const ttl = await ok({ action: 'ttl', key: 'short' });
    expect(ttl).toMatchObject({ exists: true, expires: true, ttlSeconds: 1 });
    expect(ttl.ttlMs).toBeGreaterThan(0);
    expect(ttl.ttlMs).toBeLessThanOrEqual(1000);
    expect(await ok({ action: 'ttl', key: 'forever' })).toEqual({ key: 'forever', exists: true, expires: false });
    expect(await ok({ action: 'ttl', key: 'never-set' })).toEqual({ key: 'never-set', exists: false });
    expect(await ok({ action: 'expire', key: 'forever', ttlSeconds: 100 })).toEqual({ key: 'forever', updated: true });
    expect((await ok({ action: 'ttl', key: 'forever' })).ttlSeconds).toBe(100);
    expect(await ok({ action: 'expire', key: 'never-set', ttlSeconds: 5 })).toEqual({ key: 'never-set', updated: false });
    // A plain set drops the TTL, as in Redis.
    await ok({ action: 'set', key: 'forever', value: 'z' });
    expect(await ok({ action: 'ttl', key: 'forever' })).toMatchObject({ expires: false });
    await sleep(1150);
    expect(await ok({ action: 'get', key: 'short' })).toMatchObject({ found: false });
    expect(await ok({ action: 'exists', key: 'short' })).toMatchObject({ exists: false });
    expect((await ok({ action: 'keys', pattern: 'short' })).keys).toEqual([]);
  });

  it('increments integers, keeps the TTL, and refuses non-integers without changing them', async () => {
    expect(await ok({ action: 'incr', key: 'counter' })).toEqual({ key: 'counter', value: 1 });
    expect(await ok({ action: 'incr', key: 'counter', by: 10 })).toEqual({ key: 'counter', value: 11 });
    expect(await ok({ action: 'incr', key: 'counter', by: -20 })).toEqual({ key: 'counter', value: -9 });
    expect(await ok({ action: 'get', key: 'counter' })).toMatchObject({ value: -9 });
    await ok({ action: 'expire', key: 'counter', ttlSeconds: 50 });
    await ok({ action: 'incr', key: 'counter' });
    expect(await ok({ action: 'ttl', key: 'counter' })).toMatchObject({ expires: true });
    for (const value of ['5', 1.5, { n: 1 }, 'abc']) {
      await ok({ action: 'set', key: 'notint', value });
      const res = await cache({ action: 'incr', key: 'notint' }).expect(409);
      expect(res.body).toMatchObject({ success: false, code: 'CONFLICT' });
      expect(await ok({ action: 'get', key: 'notint' })).toMatchObject({ value });
    }
    await ok({ action: 'set', key: 'big', value: Number.MAX_SAFE_INTEGER - 1 });
    expect(await ok({ action: 'incr', key: 'big' })).toMatchObject({ value: Number.MAX_SAFE_INTEGER });
    expect((await cache({ action: 'incr', key: 'big' }).expect(409)).body.code).toBe('CONFLICT');
    expect(await ok({ action: 'get', key: 'big' })).toMatchObject({ value: Number.MAX_SAFE_INTEGER });
    await cache({ action: 'incr', key: 'big', by: 1.5 }).expect(400);
  });

  it('writes and reads many keys at once, all or nothing', async () => {
    expect(
      await ok({
        action: 'mset',
        entries: [
          { key: 'm:1', value: 1 },
          { key: 'm:2', value: { two: 2 } },
        ],
        ttlSeconds: 60,
      }),
    ).toEqual({ stored: 2 });
    expect(await ok({ action: 'mget', keys: ['m:1', 'm:missing', 'm:2'] })).toEqual({
      items: [
        { key: 'm:1', found: true, value: 1 },
        { key: 'm:missing', found: false },
        { key: 'm:2', found: true, value: { two: 2 } },
      ],
    });
    expect(await ok({ action: 'ttl', key: 'm:2' })).toMatchObject({ expires: true });
    const tooBig = await cache({
      action: 'mset',
      entries: [
        { key: 'm:1', value: 'changed' },
        { key: 'm:3', value: 'x'.repeat(2000) },
      ],
    }).expect(413);
    expect(tooBig.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await ok({ action: 'mget', keys: ['m:1', 'm:3'] })).toEqual({
      items: [
        { key: 'm:1', found: true, value: 1 },
        { key: 'm:3', found: false },
      ],
    });
  });

  it('cuts mget answers over the response cap and names what it left out', async () => {
    const big = 'y'.repeat(900);
    await ok({ action: 'mset', entries: ['r1', 'r2', 'r3'].map((key) => ({ key, value: big })) });
    const res = await ok({ action: 'mget', keys: ['r1', 'r2', 'r3'] });
    expect(res.truncated).toBe(true);
    expect(res.items.map((i: { key: string }) => i.key)).toEqual(['r1', 'r2']);
    expect(res.omitted).toEqual(['r3']);
  });

  it('deletes one or many keys and counts the ones that existed', async () => {
    await ok({ action: 'mset', entries: ['d1', 'd2', 'd3'].map((key) => ({ key, value: key })) });
    expect(await ok({ action: 'delete', key: 'd1' })).toEqual({ deleted: 1 });
    expect(await ok({ action: 'delete', keys: ['d1', 'd2', 'd3', 'd4'] })).toEqual({ deleted: 2 });
    expect((await cache({ action: 'delete' }).expect(400)).body.code).toBe('VALIDATION_ERROR');
  });

  it('refuses values over the size cap and keeps the old value', async () => {
    await ok({ action: 'set', key: 'huge', value: 'small' });
    const res = await cache({ action: 'set', key: 'huge', value: 'z'.repeat(5000) }).expect(413);
    expect(res.body).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE', error: expect.stringContaining('1024') });
    expect(await ok({ action: 'get', key: 'huge' })).toMatchObject({ value: 'small' });
    // Over the HTTP body limit: refused by the kit before the tool runs.
    const body = await cache({ action: 'set', key: 'huge', value: 'z'.repeat(1_100_000) }).expect(413);
    expect(body.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('lists keys by glob, page by page, inside the namespace only', async () => {
    const names = ['user:1', 'user:2', 'user:3', 'user:10', 'usr:x', 'item:[1]', 'star*key'];
    await ok({ action: 'mset', entries: names.map((key) => ({ key, value: key })) });
    const collected: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await ok({ action: 'keys', pattern: 'user:*', limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.keys.length).toBeLessThanOrEqual(2);
      if (page.nextCursor) expect(page.truncated).toBe(true);
      collected.push(...page.keys);
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect([...new Set(collected)].sort()).toEqual(['user:1', 'user:10', 'user:2', 'user:3']);
    expect((await ok({ action: 'keys', pattern: 'user:?' })).keys.sort()).toEqual(['user:1', 'user:2', 'user:3']);
    expect((await ok({ action: 'keys', pattern: 'us[^e]*' })).keys).toEqual(['usr:x']);
    expect((await ok({ action: 'keys', pattern: 'item:\\[1\\]' })).keys).toEqual(['item:[1]']);
    expect((await ok({ action: 'keys', pattern: 'star\\*key' })).keys).toEqual(['star*key']);
    // Nothing outside the caller's key space: sessions share the namespace but not the prefix.
    const created = await ok({ action: 'create', data: { secret: 1 } }, session);
    const all = (await ok({ action: 'keys', limit: 1000 })).keys as string[];
    expect(all.some((k) => k.includes(created.sessionId))).toBe(false);
    for (const pattern of ['*session*', '../*', '*:session:*', '\\*']) {
      expect((await ok({ action: 'keys', pattern })).keys.filter((k: string) => k.includes('session'))).toEqual([]);
    }
    expect(await ok({ action: 'get', key: `../session:${created.sessionId}` })).toMatchObject({ found: false });
    expect(await ok({ action: 'get', key: `:session:${created.sessionId}` })).toMatchObject({ found: false });
    for (const pattern of ['user:[', 'abc\\']) {
      expect((await cache({ action: 'keys', pattern }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    }
    expect((await cache({ action: 'keys', cursor: 'not-a-cursor' }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    await cache({ action: 'keys', limit: 1001 }).expect(400);
  });

  it('answers bad arguments with VALIDATION_ERROR and field details', async () => {
    const cases: Record<string, unknown>[] = [
      {},
      { action: 'flushall' },
      { action: 'get' },
      { action: 'get', key: '' },
      { action: 'get', key: 'a'.repeat(513) },
      { action: 'get', key: 'bad\nkey' },
      { action: 'get', key: 'nul\u0000' },
      { action: 'get', key: 'k', extra: true },
      { action: 'set', key: 'k' },
      { action: 'set', key: 'k', value: 1, ttlSeconds: -1 },
      { action: 'set', key: 'k', value: 1, ttlSeconds: 0 },
      { action: 'mget', keys: [] },
      { action: 'mget', keys: Array.from({ length: 1001 }, (_, i) => `k${i}`) },
      { action: 'incr', key: 'k', by: 'one' },
    ];
    for (const args of cases) {
      const res = await cache(args);
      expect([args, res.status]).toEqual([args, 400]);
      expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', details: expect.any(Array) });
    }
  });

  it('refuses hostile nesting in values (100k levels) with 400, not a stack overflow', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    for (const [tool, body] of [
      ['cache', `{"action":"set","key":"deep","value":${deep}}`],
      ['session', `{"action":"create","data":${deep}}`],
    ]) {
      const res = await request(svc.app).post(`/tools/${tool}`).set('content-type', 'application/json').send(body);
      expect([tool, res.status, res.body.code]).toEqual([tool, 400, 'VALIDATION_ERROR']);
    }
    const ok64 = '['.repeat(64) + ']'.repeat(64);
    await request(svc.app)
      .post('/tools/cache')
      .set('content-type', 'application/json')
      .send(`{"action":"set","key":"deep","value":${ok64}}`)
      .expect(200);
    await ok({ action: 'delete', key: 'deep' });
  });

  it('creates, reads, updates, lists and deletes sessions', async () => {
    const created = await ok({ action: 'create', data: { user: 'ada', n: 1 }, ttlSeconds: 120 }, session);
    expect(created.sessionId).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(created).toMatchObject({ data: { user: 'ada', n: 1 }, ttlSeconds: 120, sliding: true });
    const other = await ok({ action: 'create' }, session);
    expect(other.sessionId).not.toBe(created.sessionId);
    expect(other).toMatchObject({ data: {}, ttlSeconds: 3600, sliding: true });
    expect(await ok({ action: 'read', sessionId: created.sessionId }, session)).toMatchObject({ data: { user: 'ada', n: 1 } });
    const merged = await ok({ action: 'update', sessionId: created.sessionId, data: { n: 2, role: 'admin' }, merge: true }, session);
    expect(merged.data).toEqual({ user: 'ada', n: 2, role: 'admin' });
    const replaced = await ok({ action: 'update', sessionId: created.sessionId, data: ['list'] }, session);
    expect(replaced.data).toEqual(['list']);
    expect(await ok({ action: 'read', sessionId: created.sessionId }, session)).toMatchObject({ data: ['list'] });

    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok({ action: 'list', limit: 1, ...(cursor ? { cursor } : {}) }, session);
      ids.push(...page.sessions.map((s: { sessionId: string }) => s.sessionId));
      expect(page.sessions.every((s: Record<string, unknown>) => !('data' in s))).toBe(true);
      cursor = page.nextCursor;
    } while (cursor);
    expect(ids).toEqual(expect.arrayContaining([created.sessionId, other.sessionId]));

    expect(await ok({ action: 'delete', sessionId: created.sessionId }, session)).toEqual({ sessionId: created.sessionId, deleted: true });
    expect((await session({ action: 'read', sessionId: created.sessionId }).expect(404)).body.code).toBe('NOT_FOUND');
    expect((await session({ action: 'delete', sessionId: created.sessionId }).expect(404)).body.code).toBe('NOT_FOUND');
    await session({ action: 'update', sessionId: created.sessionId, data: 1 }).expect(404);
    await ok({ action: 'delete', sessionId: other.sessionId }, session);
  });

  it('slides the expiry of sliding sessions on every read, and not of fixed ones', async () => {
    const sliding = await ok({ action: 'create', data: 's', ttlSeconds: 1.5 }, session);
    const fixed = await ok({ action: 'create', data: 'f', ttlSeconds: 1.5, sliding: false }, session);
    await sleep(800);
    await ok({ action: 'read', sessionId: sliding.sessionId }, session);
    await ok({ action: 'read', sessionId: fixed.sessionId }, session);
    await sleep(900);
    // 1.7 s after creation: the fixed session is gone, the sliding one was renewed at 0.8 s.
    await session({ action: 'read', sessionId: fixed.sessionId }).expect(404);
    expect(await ok({ action: 'read', sessionId: sliding.sessionId }, session)).toMatchObject({ data: 's' });
    await sleep(1700);
    await session({ action: 'read', sessionId: sliding.sessionId }).expect(404);
  });

  it('refuses bad session ids, oversized data and unknown actions', async () => {
    for (const sessionId of ['short', '../../cache:x*', 'a'.repeat(200), 'has space in it 123456']) {
      expect((await session({ action: 'read', sessionId }).expect(400)).body.code).toBe('VALIDATION_ERROR');
    }
    await session({ action: 'read', sessionId: 'A'.repeat(32) }).expect(404);
    expect((await session({ action: 'create', data: 'q'.repeat(2000) }).expect(413)).body.code).toBe('PAYLOAD_TOO_LARGE');
    const s = await ok({ action: 'create', data: 1 }, session);
    await session({ action: 'update', sessionId: s.sessionId, data: 'q'.repeat(2000) }).expect(413);
    expect(await ok({ action: 'read', sessionId: s.sessionId }, session)).toMatchObject({ data: 1 });
    await session({ action: 'create', ttlSeconds: 31 * 24 * 3600 }).expect(400);
    await session({ action: 'destroy_all' }).expect(400);
    await ok({ action: 'delete', sessionId: s.sessionId }, session);
  });

  it('reports healthy with its backend check', async () => {
    const res = await request(svc.app).get('/health').expect(200);
    expect(res.body).toMatchObject({ status: 'healthy', service: 'cache-mcp-wrapper', tools: 2 });
  });
}
