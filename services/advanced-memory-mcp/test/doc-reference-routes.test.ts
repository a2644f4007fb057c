/** Regression: docs/services/advanced-memory-mcp.md said the reference's routes were not provided while the service (and the reference profile's port 8006) served them. */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { REFERENCE_PORTS } from '@mcp-fleet/inventory';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const doc = fs.readFileSync(path.resolve(__dirname, '../../../docs/services/advanced-memory-mcp.md'), 'utf8');
const tmp = tempDir('advanced-memory-doc-');
let service: Awaited<ReturnType<typeof createApp>>;

beforeAll(async () => {
  service = await createApp({ config: configSchema.parse({ ...testConfig, DATA_DIR: tmp.dir }), logger: testLogger() });
});
afterAll(async () => {
  await service.close();
  tmp.cleanup();
});

describe("the advanced-memory-mcp doc and the reference's routes", () => {
  it.each([
    ['/memories', { content: 'doc check', metadata: {} }],
    ['/search', { query: 'doc check', limit: 1, threshold: 0 }],
  ])('POST %s is served, and the doc lists it and says nowhere that it is not', async (route, body) => {
    expect((await request(service.app).post(route).send(body)).status).toBe(200);
    expect(doc).toContain(`| POST   | \`${route}\``);
    for (const sentence of doc.split(/(?<=\.)\s+/).filter((s) => s.includes(`\`${route}\``)))
      expect({ sentence, denies: /not (provided|served|available)/i.test(sentence) }).toEqual({ sentence, denies: false });
  });

  it('names the reference port the reference profile serves it on', () => {
    expect(REFERENCE_PORTS['advanced-memory-mcp']).toBe(8006);
    expect(doc).toMatch(/--profile reference` serves this service on the reference's port 8006/);
  });
});
