import request from 'supertest';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

/** The reference's direct interface, shaped as Qdrant shapes it: GET /collections/{name}, POST /collections/{name}/points/search. */
const tmp = tempDir('vector-qdrant-iface-');
let service: Awaited<ReturnType<typeof createApp>>;

beforeAll(async () => {
  service = await createApp({ config: configSchema.parse({ ...testConfig, DATA_DIR: tmp.dir }), logger: testLogger() });
  await service.store.createCollection({ name: 'docs', size: 3, distance: 'Cosine' });
  await service.store.upsert('docs', [
    { id: 1, vector: [1, 0, 0], payload: { title: 'x axis', lang: 'en' } },
    { id: 2, vector: [0.9, 0.1, 0], payload: { title: 'near x', lang: 'de' } },
    { id: 3, vector: [0, 0, 1], payload: { title: 'z axis', lang: 'en' } },
  ]);
});

afterAll(async () => {
  await service.close();
  tmp.cleanup();
});

describe('vector-mcp-wrapper Qdrant-shaped interface', () => {
  it('describes a collection as Qdrant does', async () => {
    const res = await request(service.app).get('/collections/docs').expect(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      time: expect.any(Number),
      result: { status: 'green', points_count: 3, config: { params: { vectors: { size: 3, distance: 'Cosine' } } } },
    });
  });

  it('searches points and answers [{id, version, score, payload, vector}]', async () => {
    const res = await request(service.app)
      .post('/collections/docs/points/search')
      .send({ vector: [1, 0, 0], limit: 2 })
      .expect(200);
    expect(res.body.status).toBe('ok');
    expect(res.body.result).toEqual([
      { id: 1, version: 0, score: expect.closeTo(1, 5), payload: { title: 'x axis', lang: 'en' }, vector: null },
      { id: 2, version: 0, score: expect.closeTo(0.9939, 3), payload: { title: 'near x', lang: 'de' }, vector: null },
    ]);
    const filtered = await request(service.app)
      .post('/collections/docs/points/search')
      .send({
        vector: [1, 0, 0],
        limit: 5,
        filter: { must: [{ key: 'lang', match: { value: 'en' } }] },
        score_threshold: 0.5,
        with_vector: true,
      })
      .expect(200);
    expect(filtered.body.result).toEqual([
      { id: 1, version: 0, score: expect.closeTo(1, 5), payload: { title: 'x axis', lang: 'en' }, vector: [1, 0, 0] },
    ]);
  });

  it('answers errors as Qdrant writes them', async () => {
    const missing = await request(service.app).get('/collections/nope').expect(404);
    expect(missing.body).toEqual({ status: { error: expect.stringContaining('nope') }, time: expect.any(Number) });
    const wrongDim = await request(service.app)
      .post('/collections/docs/points/search')
      .send({ vector: [1, 0], limit: 1 });
    expect(wrongDim.status).toBe(400);
    expect(wrongDim.body.status.error).toEqual(expect.any(String));
    await request(service.app).post('/collections/docs/points/search').send({ limit: 1 }).expect(400);
    await request(service.app).post('/collections/docs/points/search').set('content-type', 'application/json').send('[1,2]').expect(400);
    await request(service.app).post('/collections/docs/points/search').set('content-type', 'application/json').send('{bad').expect(400);
    await request(service.app).get('/collections/..%2F..%2Fetc').expect(400);
  });
});
