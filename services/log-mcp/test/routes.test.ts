import request from 'supertest';
import { testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema, readConfig } from '../src/config';
import { makeApp } from './helpers';

const h = makeApp();
afterAll(() => h.close());

describe('log-mcp service surface', () => {
  it('lists both tools with zod-generated schemas, caps in the descriptions and read-only annotations', async () => {
    const res = await request(h.app).get('/tools/list').expect(200);
    const tools = res.body.tools as {
      name: string;
      description: string;
      inputSchema: Record<string, unknown>;
      annotations: Record<string, boolean>;
    }[];
    expect(tools.map((t) => t.name).sort()).toEqual(['log_analysis', 'log_search']);
    for (const t of tools) {
      expect(t.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(t.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
      expect(t.description).toMatch(/LOG_MAX_SCAN_BYTES/);
    }
  });

  it('serves health with its log roots and runs tools through /tools/call', async () => {
    const health = await request(h.app).get('/health').expect(200);
    expect(health.body).toMatchObject({ status: 'healthy', tools: 2, checks: { 'log-roots': { status: 'ok' } } });
    h.write('one.log', ['2025-01-01T00:00:00Z INFO hello']);
    const res = await request(h.app)
      .post('/tools/call')
      .send({ name: 'log_search', arguments: { query: 'hello' } })
      .expect(200);
    expect(res.body).toMatchObject({ success: true, service: 'log-mcp', result: { matches: [{ message: 'hello' }] } });
  });

  it('answers a missing LOG_ROOTS directory with NOT_CONFIGURED and never a 500', async () => {
    const config = configSchema.parse({ ...testConfig, DATA_DIR: h.tmp, LOG_ROOTS: '/no/such/logs' });
    const broken = createApp({ config, logger: testLogger() });
    const res = await request(broken.app).post('/tools/log_search').send({}).expect(503);
    expect(res.body.code).toBe('NOT_CONFIGURED');
    expect((await request(broken.app).get('/health').expect(200)).body.status).toBe('degraded');
    await request(broken.app).post('/tools/log_analysis').send({}).expect(503);
  });

  it('answers unknown tools and broken bodies with documented codes', async () => {
    expect((await request(h.app).post('/tools/log_delete').send({}).expect(404)).body.code).toBe('UNKNOWN_TOOL');
    await request(h.app).post('/tools/log_search').set('Content-Type', 'application/json').send('{').expect(400);
  });

  it('fails fast on bad configuration, naming the variable', () => {
    expect(() => readConfig({ LOG_MAX_SCAN_BYTES: 'lots' })).toThrow(/LOG_MAX_SCAN_BYTES/);
    expect(readConfig({ LOG_ROOTS: '/a, /b' }).LOG_ROOTS).toEqual(['/a', '/b']);
  });
});
