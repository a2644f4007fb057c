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

  it("answers a request's bad params -32602 naming the field, not the SDK's -32603 with zod's dump", async () => {
    const rpc = (body: object) =>
      request(svc.app)
        .post('/mcp')
        .set('accept', 'application/json, text/event-stream')
        .set('mcp-protocol-version', '2025-11-25')
        .send({ jsonrpc: '2.0', id: 7, ...body });
    for (const [body, message] of [
      [{ method: 'tools/call' }, 'Invalid params for tools/call: params:'],
      [{ method: 'tools/call', params: { name: 42 } }, 'Invalid params for tools/call: params.name:'],
      [{ method: 'initialize', params: { protocolVersion: 1 } }, 'Invalid params for initialize: params.protocolVersion:'],
    ] as const) {
      const res = await rpc(body);
      expect({ body, code: res.body.error?.code }).toEqual({ body, code: -32602 });
      expect(res.body.error.message).toContain(message);
      expect(res.body.error.message).not.toMatch(/\[\s*\{/);
    }
    // good params still reach the tool (its own validation is an isError result)
    const ok = await rpc({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } });
    expect(ok.body.result.structuredContent).toEqual({ text: 'hi' });
  });

  it('refuses a page from another origin with 403 before running anything (DNS rebinding)', async () => {
    for (const origin of ['http://evil.example.com', 'null', 'https://app.example.com.evil.test']) {
      const res = await post(origin);
      expect([origin, res.status, res.body.code]).toEqual([origin, 403, 'FORBIDDEN']);
      expect(res.body.error).toContain('ALLOWED_ORIGINS');
    }
  });
});
