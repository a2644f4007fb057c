import request from 'supertest';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const U1 = '550e8400-e29b-41d4-a716-446655440000';
const tmp = tempDir('vector-wrapper-');
const config = configSchema.parse({
  ...testConfig,
  BODY_LIMIT: '1mb',
  DATA_DIR: tmp.dir,
  VECTOR_MAX_PAYLOAD_BYTES: '2048',
  VECTOR_MAX_POINTS_PER_CALL: '50',
});

let service: Awaited<ReturnType<typeof createApp>>;
const call = (tool: string, args: unknown) =>
  request(service.app)
    .post(`/tools/${tool}`)
    .send(args as object);

beforeAll(async () => {
  service = await createApp({ config, logger: testLogger() });
});

afterAll(async () => {
  await service.close();
  tmp.cleanup();
});

describe('vector-mcp-wrapper', () => {
  it('lists collection, vector and search with object JSON Schemas generated from zod', async () => {
    const res = await request(service.app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(['collection', 'vector', 'search']);
    const collection = res.body.tools[0];
    // one plain object per tool (model APIs refuse a top-level oneOf): the action an enum, its fields optional
    expect(collection.inputSchema).toMatchObject({ type: 'object', required: ['action'], additionalProperties: false });
    expect(collection.inputSchema.oneOf).toBeUndefined();
    expect(collection.inputSchema.properties.action.enum).toEqual(['create', 'delete', 'list', 'info']);
    expect(collection.inputSchema.properties.size.description).toMatch(/For create \(required\)\.$/);
    const vector = res.body.tools[1].inputSchema;
    expect(vector.properties.action.enum).toEqual(['upsert', 'insert', 'update', 'delete', 'fetch', 'scroll', 'count']);
    expect(vector.properties.action.description).toMatch(/insert: Insert new points; CONFLICT if any id exists/);
    // the points of update are another shape than those of upsert/insert: both are listed
    expect(vector.properties.points.anyOf).toHaveLength(2);
    expect(res.body.tools[2].annotations).toMatchObject({ readOnlyHint: true });
    expect(res.body.tools[1].description).toMatch(/At most 50 points/);
  });

  it('creates, describes, lists and deletes collections with CONFLICT and NOT_FOUND', async () => {
    const created = await call('collection', { action: 'create', name: 'docs', size: 3 }).expect(200);
    expect(created.body.result.created).toEqual({ name: 'docs', size: 3, distance: 'Cosine', pointsCount: 0 });
    const dup = await call('collection', { action: 'create', name: 'docs', size: 3 }).expect(409);
    expect(dup.body).toMatchObject({ success: false, code: 'CONFLICT', service: 'vector-mcp-wrapper' });
    await call('collection', { action: 'create', name: 'tmp1', size: 2, distance: 'Dot' }).expect(200);
    const list = await call('collection', { action: 'list', limit: 1 }).expect(200);
    expect(list.body.result).toMatchObject({ collections: ['docs'], total: 2, nextCursor: expect.any(String) });
    const next = await call('collection', { action: 'list', limit: 1, cursor: list.body.result.nextCursor }).expect(200);
    expect(next.body.result.collections).toEqual(['tmp1']);
    await call('collection', { action: 'delete', name: 'tmp1' }).expect(200);
    const gone = await call('collection', { action: 'info', name: 'tmp1' }).expect(404);
    expect(gone.body.code).toBe('NOT_FOUND');
    await call('collection', { action: 'delete', name: 'tmp1' }).expect(404);
    const bad = await call('collection', { action: 'create', name: '../etc', size: 3 }).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    await call('collection', { action: 'create', name: 'big', size: 4097 }).expect(400);
    await call('collection', { action: 'explode', name: 'docs' }).expect(400);
  });

  it('upserts, fetches and searches with filters, thresholds and score order', async () => {
    const up = await call('vector', {
      action: 'upsert',
      collection: 'docs',
      points: [
        { id: 1, vector: [1, 0, 0], payload: { lang: 'en', year: 2020 } },
        { id: 2, vector: [0.9, 0.1, 0], payload: { lang: 'de', year: 2022 } },
        { id: U1, vector: [0, 1, 0], payload: { lang: 'en', year: 2024 } },
      ],
    }).expect(200);
    expect(up.body.result).toEqual({ upserted: 3 });
    const fetched = await call('vector', { action: 'fetch', collection: 'docs', ids: [U1.toUpperCase(), 42] }).expect(200);
    expect(fetched.body.result).toEqual({ points: [{ id: U1, payload: { lang: 'en', year: 2024 } }], notFound: [42] });

    const all = await call('search', { collection: 'docs', vector: [1, 0, 0] }).expect(200);
    expect(all.body.result).toMatchObject({ collection: 'docs', distance: 'Cosine', scoreOrder: 'higher_is_better' });
    expect(all.body.result.hits.map((h: { id: unknown }) => h.id)).toEqual([1, 2, U1]);
    expect(all.body.result.hits[0].score).toBeCloseTo(1, 5);

    const filtered = await call('search', {
      collection: 'docs',
      vector: [1, 0, 0],
      filter: { must: [{ key: 'lang', match: { value: 'en' } }], must_not: [{ key: 'year', range: { lt: 2021 } }] },
    }).expect(200);
    expect(filtered.body.result.hits.map((h: { id: unknown }) => h.id)).toEqual([U1]);

    const threshold = await call('search', { collection: 'docs', vector: [1, 0, 0], scoreThreshold: 0.5, withPayload: false }).expect(200);
    expect(threshold.body.result.hits.map((h: { id: unknown }) => h.id)).toEqual([1, 2]);
    expect(threshold.body.result.hits[0].payload).toBeUndefined();
  });

  it('inserts only new ids, updates, counts, scrolls and deletes', async () => {
    await call('collection', { action: 'create', name: 'ops', size: 2, distance: 'Euclid' }).expect(200);
    await call('vector', {
      action: 'insert',
      collection: 'ops',
      points: [
        { id: 1, vector: [0, 0] },
        { id: 2, vector: [3, 4] },
      ],
    }).expect(200);
    const clash = await call('vector', {
      action: 'insert',
      collection: 'ops',
      points: [
        { id: 3, vector: [1, 1] },
        { id: 2, vector: [1, 1] },
      ],
    }).expect(409);
    expect(clash.body.error).toMatch(/2 already exists/);
    expect((await call('vector', { action: 'count', collection: 'ops' }).expect(200)).body.result).toEqual({ count: 2 });

    await call('vector', { action: 'update', collection: 'ops', points: [{ id: 2, payload: { tag: 'far' } }] }).expect(200);
    const missing = await call('vector', { action: 'update', collection: 'ops', points: [{ id: 9, payload: { tag: 'x' } }] }).expect(404);
    expect(missing.body.code).toBe('NOT_FOUND');

    const near = await call('search', { collection: 'ops', vector: [0, 0], scoreThreshold: 5 }).expect(200);
    expect(near.body.result.scoreOrder).toBe('lower_is_better');
    expect(near.body.result.hits.map((h: { id: number; score: number }) => [h.id, h.score])).toEqual([
      [1, 0],
      [2, 5],
    ]);

    const page = await call('vector', { action: 'scroll', collection: 'ops', limit: 1 }).expect(200);
    expect(page.body.result).toEqual({ points: [{ id: 1, payload: {} }], nextOffset: 2 });

    await call('vector', { action: 'delete', collection: 'ops' }).expect(400);
    await call('vector', { action: 'delete', collection: 'ops', ids: [1], filter: { must: [{ has_id: [1] }] } }).expect(400);
    const byFilter = await call('vector', {
      action: 'delete',
      collection: 'ops',
      filter: { must: [{ key: 'tag', match: { value: 'far' } }] },
    }).expect(200);
    expect(byFilter.body.result).toEqual({ deleted: 1 });
    expect((await call('vector', { action: 'delete', collection: 'ops', ids: [1, 2] }).expect(200)).body.result).toEqual({ deleted: 1 });
  });

  describe('hostile input', () => {
    beforeAll(async () => {
      await call('collection', { action: 'create', name: 'guard', size: 3, distance: 'Dot' }).expect(200);
      await call('vector', { action: 'upsert', collection: 'guard', points: [{ id: 7, vector: [1, 2, 3], payload: { v: 1 } }] }).expect(
        200,
      );
    });

    afterEach(async () => {
      const res = await call('vector', { action: 'fetch', collection: 'guard', ids: [7, 8], withVectors: true }).expect(200);
      expect(res.body.result).toEqual({ points: [{ id: 7, payload: { v: 1 }, vector: [1, 2, 3] }], notFound: [8] });
    });

    it('names the expected size on a dimension mismatch', async () => {
      const res = await call('vector', { action: 'upsert', collection: 'guard', points: [{ id: 8, vector: [1, 2] }] }).expect(400);
      expect(res.body).toMatchObject({
        code: 'VALIDATION_ERROR',
        error: expect.stringMatching(/has 2 dimensions but collection "guard" expects 3/),
      });
      const search = await call('search', { collection: 'guard', vector: [1, 2, 3, 4] }).expect(400);
      expect(search.body.error).toMatch(/expects 3/);
    });

    it.each([
      ['"NaN" as a string', '[1, "NaN", 3]'],
      ['null', '[1, null, 3]'],
      ['a number beyond float32', '[1, 1e39, 3]'],
      ['a number that parses to Infinity', '[1, 1e999, 3]'],
      ['-Infinity', '[1, -1e999, 3]'],
    ])('refuses %s in a vector', async (_title, vector) => {
      const body = `{"action":"upsert","collection":"guard","points":[{"id":7,"vector":[9,9,9],"payload":{"v":2}},{"id":8,"vector":${vector}}]}`;
      const res = await request(service.app).post('/tools/vector').set('Content-Type', 'application/json').send(body).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      const search = `{"collection":"guard","vector":${vector}}`;
      await request(service.app).post('/tools/search').set('Content-Type', 'application/json').send(search).expect(400);
    });

    it.each([-1, 1.5, 'abc', '12', 'not-a-uuid-at-all-0000-000000000000', 2 ** 60, true])('refuses the bad id %p', async (id) => {
      const res = await call('vector', { action: 'upsert', collection: 'guard', points: [{ id, vector: [1, 1, 1] }] }).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(JSON.stringify(res.body.details)).toMatch(/unsigned integer/);
      await call('vector', { action: 'fetch', collection: 'guard', ids: [id] }).expect(400);
      await call('vector', { action: 'delete', collection: 'guard', ids: [id] }).expect(400);
    });

    it('answers payloads over the cap with 413 and bodies over BODY_LIMIT with 413', async () => {
      const res = await call('vector', {
        action: 'upsert',
        collection: 'guard',
        points: [{ id: 8, vector: [1, 1, 1], payload: { text: 'x'.repeat(3000) } }],
      }).expect(413);
      expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', error: expect.stringMatching(/2048 bytes/) });
      const merged = await call('vector', {
        action: 'update',
        collection: 'guard',
        points: [{ id: 7, payload: { text: 'y'.repeat(3000) } }],
      }).expect(413);
      expect(merged.body.code).toBe('PAYLOAD_TOO_LARGE');
      const huge = await call('vector', {
        action: 'upsert',
        collection: 'guard',
        points: [{ id: 8, vector: [1, 1, 1], payload: { text: 'z'.repeat(2 * 1024 * 1024) } }],
      }).expect(413);
      expect(huge.body.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it('refuses more points than the per-call cap', async () => {
      const points = Array.from({ length: 51 }, (_, i) => ({ id: 100 + i, vector: [1, 1, 1] }));
      const res = await call('vector', { action: 'upsert', collection: 'guard', points }).expect(400);
      expect(res.body.details[0].path).toBe('points');
    });

    it('refuses deeply nested filters and payloads without a 500', async () => {
      const deepFilter = '{"must":[' + '{"must":['.repeat(5000) + ']}'.repeat(5000) + ']}';
      const res = await request(service.app)
        .post('/tools/search')
        .set('Content-Type', 'application/json')
        .send(`{"collection":"guard","vector":[1,1,1],"filter":${deepFilter}}`)
        .expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      const deepPayload = '{"a":'.repeat(20000) + '1' + '}'.repeat(20000);
      await request(service.app)
        .post('/tools/vector')
        .set('Content-Type', 'application/json')
        .send(`{"action":"upsert","collection":"guard","points":[{"id":8,"vector":[1,1,1],"payload":${deepPayload}}]}`)
        .expect(400);
    });

    it('treats prototype-looking payload keys as plain data', async () => {
      await call('vector', {
        action: 'upsert',
        collection: 'guard',
        points: [{ id: 8, vector: [0, 0, 1], payload: JSON.parse('{"__proto__": {"polluted": 1}, "constructor": 5}') }],
      }).expect(200);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      const hits = await call('search', {
        collection: 'guard',
        vector: [1, 1, 1],
        filter: { must: [{ key: 'constructor', match: { value: 5 } }] },
      }).expect(200);
      expect(hits.body.result.hits.map((h: { id: number }) => h.id)).toEqual([8]);
      await call('vector', { action: 'delete', collection: 'guard', ids: [8] }).expect(200);
    });
  });

  it('keeps collections and points across a restart of the service', async () => {
    await call('collection', { action: 'create', name: 'durable', size: 2, distance: 'Dot' }).expect(200);
    await call('vector', {
      action: 'upsert',
      collection: 'durable',
      points: [{ id: U1, vector: [0.25, -2], payload: { note: 'kept' } }],
    }).expect(200);
    await service.close();
    service = await createApp({ config, logger: testLogger() });
    const info = await call('collection', { action: 'info', name: 'durable' }).expect(200);
    expect(info.body.result.collection).toEqual({ name: 'durable', size: 2, distance: 'Dot', pointsCount: 1 });
    const res = await call('vector', { action: 'fetch', collection: 'durable', ids: [U1], withVectors: true }).expect(200);
    expect(res.body.result.points).toEqual([{ id: U1, payload: { note: 'kept' }, vector: [0.25, -2] }]);
  });

  it('reports the store in /health', async () => {
    const health = await request(service.app).get('/health').expect(200);
    expect(health.body.checks['vector-store:embedded']).toMatchObject({ status: 'ok', detail: { backend: 'embedded' } });
  });
});
