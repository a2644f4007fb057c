import request from 'supertest';
import { z } from 'zod';
import { createServiceApp, defineTool } from '../src';
import { mountMcpEndpoint } from '../src/mcp-endpoint';
import { testConfig, testLogger } from '../src/test-support';

const echo = defineTool({
  name: 'echo',
  description: 'Echo the text back.',
  input: z.object({ text: z.string().max(10) }).strict(),
  handler: (a) => ({ text: a.text }),
});

const svc = createServiceApp({
  service: 'kit-mcp-test',
  config: { ...testConfig, ALLOWED_ORIGINS: ['https://app.example.com'] },
  logger: testLogger(),
  tools: [echo],
  defaultMetrics: false,
  extend: (app, handle) => mountMcpEndpoint(app, handle, { name: 'kit-mcp-test', tools: [echo], bodyLimit: '1mb' }),
});

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const post = (origin?: string) => {
  const r = request(svc.app).post('/mcp').set('accept', 'application/json, text/event-stream');
  return (origin ? r.set('origin', origin) : r).send(initialize);
};

describe("the kit's POST /mcp", () => {
  afterAll(() => svc.close());

  it('answers initialize without Origin, from a local page and from an allowed origin', async () => {
    for (const origin of [undefined, 'http://localhost:5173', 'http://127.0.0.1:8080', 'https://app.example.com']) {
      const res = await post(origin);
      expect([origin, res.status, res.body.result?.serverInfo?.name]).toEqual([origin, 200, 'kit-mcp-test']);
    }
  });

  it('refuses a page from another origin with 403 before running anything (DNS rebinding)', async () => {
    for (const origin of ['http://evil.example.com', 'null', 'https://app.example.com.evil.test']) {
      const res = await post(origin);
      expect([origin, res.status, res.body.code]).toEqual([origin, 403, 'FORBIDDEN']);
      expect(res.body.error).toContain('ALLOWED_ORIGINS');
    }
  });
});
