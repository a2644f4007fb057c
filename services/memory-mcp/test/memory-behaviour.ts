import type { ServiceApp } from '@mcp-fleet/kit';
import { testConfig, toolCaller } from '@mcp-fleet/testing';
import request from 'supertest';
import { configSchema, type Config } from '../src/config';
import type { MemoryStore } from '../src/store/memory-store';

export function suiteConfig(extra: Record<string, string> = {}): Config {
  return configSchema.parse({ ...testConfig, DATA_DIR: '/tmp/unused', MEMORY_MAX_PAGE_CHARS: '5000', ...extra });
}

export interface Opened {
  svc: ServiceApp;
  store: MemoryStore;
}

interface Result {
  id: string;
  key?: string;
  content: string;
  type: string;
  tags: string[];
  createdAt: string;
  updatedAt: string;
  score?: number;
  snippet?: string;
}

/**
 * What both backends must do, written once: sqlite.test.ts runs it on the embedded store,
 * postgres.test.ts on the machine's PostgreSQL. Each test works in its own `type`, so tests stay
 * independent inside one store.
 */
export function memoryBehaviour(open: () => Promise<Opened>): void {
  let svc: ServiceApp;
  let store: MemoryStore;
  const call = (name: string, args: Record<string, unknown>) => toolCaller(svc.app)(name, args);
  const ok = async (name: string, args: Record<string, unknown>) => {
    const res = await call(name, args);
    if (res.status !== 200) throw new Error(`${name} ${JSON.stringify(args).slice(0, 200)} -> ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.result;
  };
  const put = (type: string, content: string, extra: Record<string, unknown> = {}) =>
    ok('store_memory', { type, content, ...extra }).then((r) => r.memory as Result);
  const search = (query: string, extra: Record<string, unknown> = {}) => ok('search_memories', { query, ...extra });

  beforeAll(async () => {
    ({ svc, store } = await open());
  });
  afterAll(async () => {
    await svc.close();
  });

  it('lists its five tools and serves the documented routes', async () => {
    const res = await request(svc.app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'delete_memory',
      'list_memories',
      'memory_stats',
      'search_memories',
      'store_memory',
    ]);
    const stored = await request(svc.app)
      .post('/memory/store')
      .send({ content: 'Routes store this', type: 'routes', tags: ['r'] })
      .expect(200);
    expect(stored.body).toMatchObject({
      success: true,
      service: 'memory-mcp',
      result: { created: true, memory: { content: 'Routes store this' } },
    });
    const list = await request(svc.app).get('/memory/list').query({ type: 'routes', limit: '5' }).expect(200);
    expect(list.body.result.memories.map((m: Result) => m.id)).toEqual([stored.body.result.memory.id]);
    const found = await request(svc.app).get('/memory/search').query({ query: 'routes', type: 'routes', tags: 'r' }).expect(200);
    expect(found.body.result.results[0].id).toBe(stored.body.result.memory.id);
    const stats = await request(svc.app).get('/memory/stats').expect(200);
    expect(stats.body.result.byType.routes).toBe(1);
    await request(svc.app).delete(`/memory/${stored.body.result.memory.id}`).expect(200);
    const gone = await request(svc.app).delete(`/memory/${stored.body.result.memory.id}`).expect(404);
    expect(gone.body.code).toBe('NOT_FOUND');
    expect((await request(svc.app).delete('/memory/not-a-uuid').expect(400)).body.code).toBe('VALIDATION_ERROR');
  });

  it('stores entries with defaults and every field, and accepts the coordinator shape {key, content}', async () => {
    const before = Date.now();
    const full = await ok('store_memory', {
      content: 'Ada prefers dark mode',
      type: 'defaults',
      tags: ['ui', 'prefs', 'ui'],
      importance: 0.9,
      metadata: { source: 'chat', nested: { n: [1, 2] } },
    });
    expect(full.created).toBe(true);
    expect(full.memory).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      content: 'Ada prefers dark mode',
      type: 'defaults',
      tags: ['ui', 'prefs'],
      importance: 0.9,
      metadata: { source: 'chat', nested: { n: [1, 2] } },
    });
    expect(Date.parse(full.memory.createdAt)).toBeGreaterThanOrEqual(before - 5);
    const coordinator = await ok('store_memory', { key: 'coord-1', content: 'from the coordinator' });
    expect(coordinator.memory).toMatchObject({ key: 'coord-1', type: 'note', tags: [], importance: 0.5, metadata: {} });
    await ok('delete_memory', { memory_id: coordinator.memory.id });
  });

  it('updates the entry in place when a key is stored again', async () => {
    const first = await ok('store_memory', { key: 'upsert-key', content: 'original zebra text', type: 'upsert', tags: ['a'] });
    const second = await ok('store_memory', {
      key: 'upsert-key',
      content: 'replaced giraffe text',
      type: 'upsert',
      tags: ['b'],
      importance: 1,
    });
    expect(second.created).toBe(false);
    expect(second.memory.id).toBe(first.memory.id);
    expect(second.memory.createdAt).toBe(first.memory.createdAt);
    expect(Date.parse(second.memory.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first.memory.updatedAt));
    expect(second.memory).toMatchObject({ content: 'replaced giraffe text', tags: ['b'], importance: 1 });
    const listed = await ok('list_memories', { type: 'upsert' });
    expect(listed.memories).toHaveLength(1);
    expect((await search('zebra', { type: 'upsert' })).results).toEqual([]);
    expect((await search('giraffe', { type: 'upsert' })).results.map((r: Result) => r.id)).toEqual([first.memory.id]);
  });

  it('lists newest or oldest first, filtered, page by page with nextCursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await put('paging', `entry number ${i}`, { tags: i % 2 ? ['odd'] : ['even'] })).id);
    const pages: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await ok('list_memories', { type: 'paging', limit: 3, ...(cursor ? { cursor } : {}) });
      pages.push(page.memories.map((m: Result) => m.id));
      cursor = page.nextCursor;
    } while (cursor && pages.length < 10);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat()).toEqual([...ids].reverse());
    const oldest = await ok('list_memories', { type: 'paging', order: 'oldest', limit: 500 });
    expect(oldest.memories.map((m: Result) => m.id)).toEqual(ids);
    expect(oldest.nextCursor).toBeUndefined();
    const odd = await ok('list_memories', { type: 'paging', tag: 'odd' });
    expect(odd.memories.map((m: Result) => m.id).sort()).toEqual([ids[1], ids[3], ids[5]].sort());
    // A page stays stable when newer entries arrive between requests.
    const first = await ok('list_memories', { type: 'paging', limit: 2 });
    await put('paging', 'arrived later');
    const second = await ok('list_memories', { type: 'paging', limit: 2, cursor: first.nextCursor });
    expect(second.memories.map((m: Result) => m.id)).toEqual([ids[4], ids[3]]);
  });

  it('ranks the more relevant entry first, with scores and marked snippets', async () => {
    const filler = 'the quarterly planning notes cover budgets travel hiring and office moves '.repeat(6);
    const weak = await put('ranking', `${filler} and someone once mentioned kubernetes in passing ${filler}`);
    const strong = await put('ranking', 'Kubernetes cluster upgrade: drain kubernetes nodes, upgrade the kubernetes control plane.');
    await put('ranking', 'Nothing to see about containers here.');
    const res = await search('kubernetes', { type: 'ranking' });
    expect(res.results.map((r: Result) => r.id)).toEqual([strong.id, weak.id]);
    expect(res.results[0].score).toBeGreaterThan(res.results[1].score);
    expect(res.results[0].snippet).toMatch(/\*\*Kubernetes\*\*/i);
    // Stemming works alike in both backends: "upgrades" finds "upgrade".
    expect((await search('upgrades', { type: 'ranking' })).results.map((r: Result) => r.id)).toEqual([strong.id]);
  });

  it('understands phrases, OR and exclusions', async () => {
    const whale = await put('syntax', 'the blue whale is the largest animal');
    const blueCar = await put('syntax', 'a whale of a time with the blue car');
    const cat = await put('syntax', 'my cat is a small animal');
    const dog = await put('syntax', 'the dog is a loyal animal');
    const ids = async (q: string) => ((await search(q, { type: 'syntax' })).results as Result[]).map((r) => r.id).sort();
    expect(await ids('"blue whale"')).toEqual([whale.id]);
    expect(await ids('blue whale')).toEqual([whale.id, blueCar.id].sort());
    expect(await ids('cat OR dog')).toEqual([cat.id, dog.id].sort());
    expect(await ids('animal -cat')).toEqual([whale.id, dog.id].sort());
    expect(await ids('animal -"blue whale"')).toEqual([cat.id, dog.id].sort());
  });

  it('paginates search results without repeats and filters by type and tags', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await put('searchpage', `lighthouse keeper log ${i}`, { tags: i < 2 ? ['coast', 'night'] : ['coast'] })).id);
    await put('elsewhere', 'lighthouse in another type');
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await search('lighthouse', { type: 'searchpage', limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.results.length).toBeLessThanOrEqual(2);
      seen.push(...page.results.map((r: Result) => r.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual([...ids].sort());
    const tagged = await search('lighthouse', { tags: ['coast', 'night'] });
    expect(tagged.results.map((r: Result) => r.id).sort()).toEqual([ids[0], ids[1]].sort());
  });

  it('cuts pages at the text budget and says truncated', async () => {
    const big = 'budget '.repeat(400);
    for (let i = 0; i < 3; i++) await put('budget', `${big} ${i}`);
    const page = await ok('list_memories', { type: 'budget', limit: 10 });
    expect(page.truncated).toBe(true);
    expect(page.memories.length).toBeLessThan(3);
    expect(page.nextCursor).toEqual(expect.any(String));
    const found = await search('budget', { type: 'budget', limit: 10 });
    expect(found.truncated).toBe(true);
    expect(found.results.length).toBeLessThan(3);
    const rest = await search('budget', { type: 'budget', limit: 10, cursor: found.nextCursor });
    expect(new Set([...found.results, ...rest.results].map((r: Result) => r.id)).size).toBe(found.results.length + rest.results.length);
  });

  it('never fails on FTS syntax in queries: quotes, stars, NEAR(, OR, -, : and SQL', async () => {
    const target = await put('hostile', 'plain text about near misses and stars');
    const countBefore = (await ok('memory_stats', {})).total;
    const queries = [
      '"',
      '"unterminated phrase',
      '*',
      'star*',
      'NEAR(',
      'NEAR(near misses, 2)',
      'OR',
      'OR OR OR',
      'AND',
      'NOT',
      'near NOT',
      '-',
      '--',
      ':',
      'content:near',
      'content : near',
      '^near',
      '{content}: near',
      'near + misses',
      "'; DROP TABLE memories; --",
      "') OR 1=1 --",
      'near) OR (1=1',
      '\\',
      '%_%',
      '!!near',
      'near & misses | stars',
      'near <-> misses',
      '\u0000near',
      '""""',
      '(((',
    ];
    for (const query of queries) {
      for (const res of [
        await call('search_memories', { query, type: 'hostile' }),
        await request(svc.app).get('/memory/search').query({ query }),
      ]) {
        expect([query, res.status]).toEqual([query, expect.any(Number)]);
        expect([query, res.status < 500]).toEqual([query, true]);
        if (res.status !== 200) expect([query, res.body.code]).toEqual([query, 'VALIDATION_ERROR']);
      }
    }
    expect((await search('near:misses', { type: 'hostile' })).results.map((r: Result) => r.id)).toEqual([target.id]);
    expect((await search('"near" AND stars*', { type: 'hostile' })).results.map((r: Result) => r.id)).toEqual([target.id]);
    const empty = await call('search_memories', { query: '*** : ---' });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatch(/no words/);
    expect((await ok('memory_stats', {})).total).toBe(countBefore);
  });

  it('stores SQL-looking values verbatim and changes nothing else', async () => {
    const nasty = '\'); DROP TABLE memories; -- " \\ %_ $1 ?';
    const stored = await ok('store_memory', {
      key: "k' OR '1'='1",
      content: nasty,
      type: 'sqlvalues',
      tags: ["t'--", 'x"y'],
      metadata: { "a'": 'b"', $1: ['?', null] },
    });
    const listed = await ok('list_memories', { type: 'sqlvalues' });
    expect(listed.memories).toEqual([stored.memory]);
    expect(listed.memories[0]).toMatchObject({
      key: "k' OR '1'='1",
      content: nasty,
      tags: ["t'--", 'x"y'],
      metadata: { "a'": 'b"', $1: ['?', null] },
    });
    expect((await ok('list_memories', { tag: "t'--" })).memories.map((m: Result) => m.id)).toEqual([stored.memory.id]);
    expect((await ok('list_memories', { type: 'sqlvalues', tag: "' OR 1=1 --" })).memories).toEqual([]);
    expect((await ok('memory_stats', {})).total).toBeGreaterThan(0);
  });

  it('refuses bad input with VALIDATION_ERROR and field details', async () => {
    const before = (await ok('memory_stats', {})).total;
    const cases: [string, Record<string, unknown>][] = [
      ['store_memory', {}],
      ['store_memory', { content: '' }],
      ['store_memory', { content: 'x'.repeat(100_001) }],
      ['store_memory', { content: 'nul \u0000 inside' }],
      ['store_memory', { content: 'x', metadata: { k: 'nul \u0000' } }],
      ['store_memory', { content: 'x', metadata: { big: 'm'.repeat(17_000) } }],
      ['store_memory', { content: 'x', metadata: [1] }],
      ['store_memory', { content: 'x', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }],
      ['store_memory', { content: 'x', tags: ['a,b'] }],
      ['store_memory', { content: 'x', tags: [''] }],
      ['store_memory', { content: 'x', importance: 1.5 }],
      ['store_memory', { content: 'x', type: 'has space' }],
      ['store_memory', { content: 'x', key: '' }],
      ['store_memory', { content: 'x', surprise: true }],
      ['list_memories', { limit: 0 }],
      ['list_memories', { limit: 501 }],
      ['list_memories', { cursor: 'bogus' }],
      ['list_memories', { order: 'random' }],
      ['search_memories', {}],
      ['search_memories', { query: '' }],
      ['search_memories', { query: 'q'.repeat(1001) }],
      ['search_memories', { query: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ') }],
      ['search_memories', { query: 'x', cursor: 'bogus' }],
      ['search_memories', { query: 'x', tags: 'notarray' }],
      ['delete_memory', {}],
      ['delete_memory', { memory_id: "1' OR '1'='1" }],
      ['memory_stats', { extra: 1 }],
    ];
    for (const [name, args] of cases) {
      const res = await call(name, args);
      expect([name, JSON.stringify(args).slice(0, 80), res.status]).toEqual([name, JSON.stringify(args).slice(0, 80), 400]);
      expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    }
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const deepRes = await request(svc.app)
      .post('/memory/store')
      .set('content-type', 'application/json')
      .send(`{"content":"x","metadata":{"d":${deep}}}`);
    expect([deepRes.status, deepRes.body.code]).toEqual([400, 'VALIDATION_ERROR']);
    const notFound = await call('delete_memory', { memory_id: '00000000-0000-4000-8000-000000000000' });
    expect(notFound.status).toBe(404);
    expect((await ok('memory_stats', {})).total).toBe(before);
  });

  it('bulk-stores in one transaction, last write per key winning', async () => {
    const inputs = Array.from({ length: 1200 }, (_, i) => ({
      key: i < 10 ? `bulk-${i % 5}` : undefined,
      content: `bulk entry ${i} about ${i % 3 === 0 ? 'walruses' : 'penguins'}`,
      type: 'bulk',
      tags: [`g${i % 4}`],
      importance: 0.5,
      metadata: { i },
    }));
    expect(await store.storeMany(inputs)).toEqual({ created: 1195, updated: 0 });
    expect(
      await store.storeMany([{ key: 'bulk-0', content: 'bulk key zero replaced', type: 'bulk', tags: [], importance: 1, metadata: {} }]),
    ).toEqual({
      created: 0,
      updated: 1,
    });
    const stats = await ok('memory_stats', {});
    expect(stats.byType.bulk).toBe(1195);
    const walrus = new Set<string>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await search('walruses', { type: 'bulk', limit: 500, ...(cursor ? { cursor } : {}) });
      page.results.forEach((r: Result) => walrus.add(r.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 100);
    // 400 walrus entries, less i=0 and i=3 whose keys were rewritten later in the same batch.
    expect(walrus.size).toBe(398);
    const keyed = await search('replaced', { type: 'bulk' });
    expect(keyed.results).toHaveLength(1);
    expect(keyed.results[0]).toMatchObject({ key: 'bulk-0' });
  });

  it('reports statistics by type with a time span and storage size', async () => {
    await put('statsA', 'one');
    await put('statsA', 'two');
    await put('statsB', 'three');
    const stats = await ok('memory_stats', {});
    expect(stats).toMatchObject({ backend: store.backend, byType: expect.objectContaining({ statsA: 2, statsB: 1 }) });
    expect(stats.total).toBe(Object.values(stats.byType as Record<string, number>).reduce((a, b) => a + b, 0));
    expect(Date.parse(stats.oldest)).toBeLessThanOrEqual(Date.parse(stats.newest));
    expect(stats.storageBytes).toBeGreaterThan(0);
  });

  it('reports healthy', async () => {
    const res = await request(svc.app).get('/health').expect(200);
    expect(res.body).toMatchObject({ status: 'healthy', service: 'memory-mcp', tools: 5 });
    expect(res.body.checks[store.backend].status).toBe('ok');
  });
}
