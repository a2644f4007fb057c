import type http from 'node:http';
import request from 'supertest';
import type { RunningServer } from '@mcp-fleet/kit';
import { serve, tempDir, testConfig, testLogger, toolCaller } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const tmp = tempDir('advanced-memory-');
const config = configSchema.parse({ ...testConfig, DATA_DIR: tmp.dir });

let service: Awaited<ReturnType<typeof createApp>>;
const call = (name: string, args: Record<string, unknown>) => toolCaller(service.app)(name, args);

const corpus = [
  { content: 'Postgres backups run nightly at 02:00 with pg_dump', type: 'fact', tags: ['ops', 'postgres'], importance: 0.9 },
  {
    content: 'Postgres replication lag alerts fire above 30 seconds; postgres replicas are in eu-west',
    type: 'fact',
    tags: ['postgres', 'alerts'],
  },
  { content: 'Remember to renew the TLS certificate for the gateway', type: 'task', tags: ['ops', 'tls'] },
  { content: 'The team prefers Grafana dashboards for alerts', type: 'note', tags: ['alerts'] },
  { content: 'Bananas are rich in potassium', type: 'note', tags: ['food'] },
];
const ids: string[] = [];

beforeAll(async () => {
  service = await createApp({ config, logger: testLogger() });
  for (const m of corpus) {
    const res = await call('store_memory', m).expect(200);
    ids.push(res.body.result.id);
  }
});

afterAll(async () => {
  await service.close();
  tmp.cleanup();
});

describe('advanced-memory-mcp', () => {
  it('lists its five tools with zod-generated schemas', async () => {
    const res = await request(service.app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual([
      'store_memory',
      'search_memories',
      'semantic_similarity',
      'vector_search',
      'get_context',
    ]);
    const store = res.body.tools[0];
    expect(store.inputSchema.properties.importance).toMatchObject({ minimum: 0, maximum: 1 });
    expect(store.inputSchema.additionalProperties).toBe(false);
  });

  it('stores memories as 384-dimensional points with UUID ids', async () => {
    const res = await call('store_memory', { content: 'a throwaway memory about kites', tags: ['kites', 'kites'] }).expect(200);
    expect(res.body.result).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), dimensions: 384, embedder: 'local' });
    const info = await service.bank.store.collectionInfo('memories');
    expect(info).toMatchObject({ size: 384, distance: 'Cosine', pointsCount: corpus.length + 1 });
    const [p] = await service.bank.store.fetch('memories', [res.body.result.id]);
    expect(p.payload).toMatchObject({
      content: 'a throwaway memory about kites',
      type: 'note',
      tags: ['kites'],
      importance: 0.5,
      metadata: {},
    });
    await service.bank.store.delete('memories', { ids: [res.body.result.id] });
  });

  it('text-searches by term frequency, case-insensitively, with type and tag filters', async () => {
    const res = await call('search_memories', { query: 'POSTGRES alerts' }).expect(200);
    const found = res.body.result.memories.map((m: { id: string }) => m.id);
    // memory 1 has "postgres" twice and "alerts" once; memory 0 has "postgres" once; memory 3 has "alerts" once
    expect(found[0]).toBe(ids[1]);
    expect(new Set(found)).toEqual(new Set([ids[0], ids[1], ids[3]]));
    expect(res.body.result.memories[0].matchedTerms.sort()).toEqual(['alerts', 'postgres']);
    expect(res.body.result.memories[0].score).toBeCloseTo(1 + Math.log(2) + 1, 3);
    expect(res.body.result).toMatchObject({ total: 3, scanned: corpus.length });

    const typed = await call('search_memories', { query: 'alerts', type: 'note' }).expect(200);
    expect(typed.body.result.memories.map((m: { id: string }) => m.id)).toEqual([ids[3]]);
    const tagged = await call('search_memories', { query: 'postgres', tags: ['ops', 'postgres'] }).expect(200);
    expect(tagged.body.result.memories.map((m: { id: string }) => m.id)).toEqual([ids[0]]);
    const none = await call('search_memories', { query: 'zebra' }).expect(200);
    expect(none.body.result).toMatchObject({ memories: [], total: 0 });
    const empty = await call('search_memories', { query: '?!' }).expect(400);
    expect(empty.body.code).toBe('VALIDATION_ERROR');
  });

  it('computes semantic similarity for a pair and a matrix', async () => {
    const pair = await call('semantic_similarity', {
      text_a: 'renew the TLS certificate',
      text_b: 'renew the tls certificates soon',
    }).expect(200);
    const other = await call('semantic_similarity', { text_a: 'renew the TLS certificate', text_b: 'bananas and potassium' }).expect(200);
    expect(pair.body.result.similarity).toBeGreaterThan(other.body.result.similarity);
    expect(pair.body.result).toMatchObject({ embedder: 'local', dimensions: 384 });
    const same = await call('semantic_similarity', { text_a: 'Same words', text_b: 'same WORDS' }).expect(200);
    expect(same.body.result.similarity).toBeCloseTo(1, 6);

    const m = await call('semantic_similarity', { texts: ['grafana dashboards', 'bananas', 'grafana dashboard alerts'] }).expect(200);
    expect(m.body.result.matrix).toHaveLength(3);
    expect(m.body.result.matrix[0][0]).toBeCloseTo(1, 6);
    expect(m.body.result.matrix[0][2]).toBe(m.body.result.matrix[2][0]);
    expect(m.body.result.mostSimilar).toMatchObject({ a: 0, b: 2 });

    await call('semantic_similarity', { text_a: 'only one' }).expect(400);
    await call('semantic_similarity', { text_a: 'a', text_b: 'b', texts: ['c', 'd'] }).expect(400);
    await call('semantic_similarity', { texts: ['one'] }).expect(400);
    await call('semantic_similarity', { text_a: '...', text_b: 'words' }).expect(400);
  });

  it('vector-searches by text or vector with filters and a threshold', async () => {
    const res = await call('vector_search', { query: 'postgres replication lag', limit: 2 }).expect(200);
    expect(res.body.result.memories[0].id).toBe(ids[1]);
    expect(res.body.result.memories[0].score).toBeGreaterThan(res.body.result.memories[1].score);

    const filtered = await call('vector_search', {
      query: 'postgres',
      filter: { must: [{ key: 'type', match: { value: 'task' } }] },
    }).expect(200);
    expect(filtered.body.result.memories.map((m: { id: string }) => m.id)).toEqual([ids[2]]);

    const important = await call('vector_search', {
      query: 'postgres',
      filter: { must: [{ key: 'importance', range: { gte: 0.8 } }] },
    }).expect(200);
    expect(important.body.result.memories.map((m: { id: string }) => m.id)).toEqual([ids[0]]);

    const strict = await call('vector_search', { query: 'bananas potassium', scoreThreshold: 0.5 }).expect(200);
    expect(strict.body.result.memories.map((m: { id: string }) => m.id)).toEqual([ids[4]]);

    const [p] = await service.bank.store.fetch('memories', [ids[4]], { withVectors: true });
    const byVector = await call('vector_search', { vector: p.vector, limit: 1 }).expect(200);
    expect(byVector.body.result.memories[0]).toMatchObject({ id: ids[4] });

    const wrong = await call('vector_search', { vector: [1, 2, 3] }).expect(400);
    expect(wrong.body.error).toMatch(/expects 384/);
    await call('vector_search', { vector: [1, 'NaN'] }).expect(400);
    await call('vector_search', { query: 'x', vector: [1] }).expect(400);
    await call('vector_search', {}).expect(400);
  });

  it('builds a deduplicated context bundle of matches and related memories', async () => {
    const res = await call('get_context', { query: 'postgres backups', limit: 1, depth: 1, relatedPerMemory: 2 }).expect(200);
    const items = res.body.result.items as { id: string; relation: string; via?: string; score: number; depth: number }[];
    expect(items[0]).toMatchObject({ id: ids[0], relation: 'match', depth: 0 });
    expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
    const sharing = items.filter((i) => i.relation === 'shared_tags');
    expect(sharing.length).toBeGreaterThan(0);
    for (const s of sharing) {
      expect(s.via).toBe(ids[0]);
      const tags = corpus[ids.indexOf(s.id)].tags;
      expect(tags.some((t) => ['ops', 'postgres'].includes(t))).toBe(true);
    }
    expect(items.every((i) => typeof i.score === 'number')).toBe(true);

    const around = await call('get_context', { memory_id: ids[2], limit: 2, depth: 0 }).expect(200);
    expect(around.body.result.items[0]).toMatchObject({ id: ids[2], relation: 'anchor', score: 1 });
    expect(around.body.result.items).toHaveLength(3);

    const flat = await call('get_context', { query: 'postgres', limit: 2, depth: 0 }).expect(200);
    expect(flat.body.result.items.every((i: { relation: string }) => i.relation === 'match')).toBe(true);

    await call('get_context', { memory_id: '00000000-0000-4000-8000-000000000000' }).expect(404);
    await call('get_context', { memory_id: 'abc' }).expect(400);
    await call('get_context', { query: 'x', memory_id: ids[0] }).expect(400);
    await call('get_context', { query: 'x', depth: 4 }).expect(400);
  });

  it('refuses oversized and malformed memories with documented codes, storing nothing', async () => {
    const before = (await service.bank.store.collectionInfo('memories')).pointsCount;
    const long = await call('store_memory', { content: 'x'.repeat(16_001) }).expect(400);
    expect(long.body.code).toBe('VALIDATION_ERROR');
    const meta = await call('store_memory', { content: 'ok', metadata: { blob: 'y'.repeat(17_000) } }).expect(413);
    expect(meta.body.code).toBe('PAYLOAD_TOO_LARGE');
    const deep = await request(service.app)
      .post('/tools/store_memory')
      .set('Content-Type', 'application/json')
      .send(`{"content":"ok","metadata":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`)
      .expect(400);
    expect(deep.body.code).toBe('VALIDATION_ERROR');
    await call('store_memory', { content: '!!!' }).expect(400);
    await call('store_memory', { content: 'ok', importance: 2 }).expect(400);
    await call('store_memory', { content: 'ok', type: 'bad type!' }).expect(400);
    await call('store_memory', { content: 'ok', extra: true }).expect(400);
    await request(service.app).post('/tools/store_memory').set('Content-Type', 'application/json').send('{"content": ').expect(400);
    expect((await service.bank.store.collectionInfo('memories')).pointsCount).toBe(before);
  });

  it('keeps memories across a restart', async () => {
    await service.close();
    service = await createApp({ config, logger: testLogger() });
    const res = await call('search_memories', { query: 'bananas' }).expect(200);
    expect(res.body.result.memories.map((m: { id: string }) => m.id)).toEqual([ids[4]]);
    const near = await call('vector_search', { query: 'potassium bananas', limit: 1 }).expect(200);
    expect(near.body.result.memories[0].id).toBe(ids[4]);
  });
});

describe('advanced-memory-mcp with an OpenAI-compatible embeddings endpoint', () => {
  const dir = tempDir('advanced-memory-openai-');
  let upstream: RunningServer;
  let failing = false;
  let app: Awaited<ReturnType<typeof createApp>>;

  beforeAll(async () => {
    upstream = await serve((req: http.IncomingMessage, res: http.ServerResponse) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        if (failing) {
          res.writeHead(503, { 'content-type': 'application/json' });
          return void res.end('{"error":"overloaded"}');
        }
        const { input } = JSON.parse(raw) as { input: string[] };
        const data = input.map((text, index) => ({ index, embedding: text.includes('blue') ? [1, 0, 0, 0] : [0, 1, 0, 0] }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data }));
      });
    });
    const cfg = configSchema.parse({
      ...testConfig,
      DATA_DIR: dir.dir,
      EMBEDDINGS_URL: upstream.url,
      EMBEDDINGS_MODEL: 'fixed',
      EMBEDDINGS_API_KEY: 'sk-test-key',
      EMBEDDINGS_TIMEOUT_MS: '2000',
    });
    app = await createApp({ config: cfg, logger: testLogger() });
  });

  afterAll(async () => {
    await app.close();
    await upstream.stop();
    dir.cleanup();
  });

  it('stores and searches with the remote vectors', async () => {
    const blue = await request(app.app).post('/tools/store_memory').send({ content: 'the sky is blue' }).expect(200);
    expect(blue.body.result).toMatchObject({ dimensions: 4, embedder: 'openai-compatible' });
    await request(app.app).post('/tools/store_memory').send({ content: 'grass is green' }).expect(200);
    const hit = await request(app.app).post('/tools/vector_search').send({ query: 'blue things', limit: 1 }).expect(200);
    expect(hit.body.result.memories[0]).toMatchObject({ id: blue.body.result.id, score: 1 });
    const sim = await request(app.app).post('/tools/semantic_similarity').send({ text_a: 'blue', text_b: 'green' }).expect(200);
    expect(sim.body.result.similarity).toBe(0);
  });

  it('answers UPSTREAM_UNAVAILABLE when the endpoint fails, storing nothing and leaking no key', async () => {
    const before = (await app.bank.store.collectionInfo('memories')).pointsCount;
    failing = true;
    try {
      const res = await request(app.app).post('/tools/store_memory').send({ content: 'the sea is blue' }).expect(503);
      expect(res.body).toMatchObject({ success: false, code: 'UPSTREAM_UNAVAILABLE' });
      expect(JSON.stringify(res.body)).not.toContain('sk-test-key');
      await request(app.app).post('/tools/vector_search').send({ query: 'blue' }).expect(503);
    } finally {
      failing = false;
    }
    expect((await app.bank.store.collectionInfo('memories')).pointsCount).toBe(before);
    const health = await request(app.app).get('/health').expect(200);
    expect(JSON.stringify(health.body)).not.toContain('sk-test-key');
    expect(health.body.checks.embedder.detail).toMatchObject({ kind: 'openai-compatible', model: 'fixed' });
  });
});
