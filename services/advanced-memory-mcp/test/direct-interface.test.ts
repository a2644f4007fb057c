import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { REFERENCE_PORTS } from '@mcp-fleet/inventory';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

/** The reference's direct interface (platform-interface.md, "Alternate coordinator surface"): POST /memories and POST /search. */
const tmp = tempDir('advanced-memory-direct-');
let service: Awaited<ReturnType<typeof createApp>>;

beforeAll(async () => {
  service = await createApp({ config: configSchema.parse({ ...testConfig, DATA_DIR: tmp.dir }), logger: testLogger() });
});

afterAll(async () => {
  await service.close();
  tmp.cleanup();
});

describe('advanced-memory-mcp direct interface', () => {
  it('stores with POST /memories {content, metadata} and finds it with POST /search {query, limit, threshold}', async () => {
    const stored = await request(service.app)
      .post('/memories')
      .send({ content: 'the nightly postgres backup runs pg_dump at two', metadata: { source: 'runbook' } })
      .expect(200);
    expect(stored.body).toMatchObject({ success: true, service: 'advanced-memory-mcp', result: { id: expect.any(String) } });
    await request(service.app).post('/memories').send({ content: 'bananas are rich in potassium' }).expect(200);

    const found = await request(service.app)
      .post('/search')
      .send({ query: 'postgres backup pg_dump', limit: 5, threshold: 0.1 })
      .expect(200);
    const memories = found.body.result.memories;
    expect(memories[0]).toMatchObject({ id: stored.body.result.id, metadata: { source: 'runbook' } });
    expect(memories.every((m: any) => m.score >= 0.1)).toBe(true);

    // a threshold above every score leaves nothing
    const none = await request(service.app).post('/search').send({ query: 'postgres backup', threshold: 0.999 }).expect(200);
    expect(none.body.result.memories.filter((m: any) => m.id !== stored.body.result.id)).toEqual([]);
  });

  it('refuses bad bodies in the error envelope', async () => {
    const missing = await request(service.app).post('/memories').send({ metadata: {} }).expect(400);
    expect(missing.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    await request(service.app).post('/search').send({ query: 'x', threshold: 5 }).expect(400);
    await request(service.app).post('/search').send({ query: 'x', limit: 'ten' }).expect(400);
  });
});

// Regression: the service's doc said these routes were not provided while the service (and the reference profile's port 8006) served them.
describe('docs/services/advanced-memory-mcp.md on the direct interface', () => {
  const doc = fs.readFileSync(path.resolve(__dirname, '../../../docs/services/advanced-memory-mcp.md'), 'utf8');

  it.each(['/memories', '/search'])('lists POST %s, which the service answers, and says nowhere that it is not provided', async (route) => {
    expect((await request(service.app).post(route).send({ content: 'doc check', query: 'doc check' })).status).not.toBe(404);
    expect(doc).toContain(`| POST   | \`${route}\``);
    for (const sentence of doc.split(/(?<=\.)\s+/).filter((s) => s.includes(`\`${route}\``)))
      expect({ sentence, denies: /not (provided|served|available)/i.test(sentence) }).toEqual({ sentence, denies: false });
  });

  it('names the port the reference profile serves it on', () => {
    expect(REFERENCE_PORTS['advanced-memory-mcp']).toBe(8006);
    expect(doc).toMatch(/--profile reference` serves this service on the reference's port 8006/);
  });
});
