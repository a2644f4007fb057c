import type http from 'node:http';
import request from 'supertest';
import { serve, tempDir } from '@mcp-fleet/testing';
import type { RunningServer } from '@mcp-fleet/kit';
import { alphaTools, betaTools, startDownstream, startGateway, type Downstream, type RunningGateway } from './helpers';

let tmp: ReturnType<typeof tempDir>;
let alpha: Downstream;
let beta: Downstream;
let g: RunningGateway;
let llm: RunningServer;

beforeAll(async () => {
  tmp = tempDir();
  alpha = await startDownstream('alpha-mcp', alphaTools);
  beta = await startDownstream('beta-mcp', betaTools);
  llm = await serve((_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(404).end('no'));
  g = await startGateway(
    [
      { id: 'alpha-mcp', url: alpha.url, tools: ['echo'] },
      { id: 'beta-mcp', url: beta.url, primaryFor: ['system_info'] },
    ],
    tmp.dir,
    {
      LLM_BASE_URL: `http://user:pa55word@127.0.0.1:${llm.port}/v1?key=sekrit`,
      LLM_API_KEY: 'sk-very-secret',
      SMTP_URL: 'smtp://127.0.0.1:1',
      RESEARCH_SOURCES: 'wikipedia',
      ALLOWED_ORIGINS: 'https://console.example',
    },
  );
});

afterAll(async () => {
  await g.stop();
  await alpha.stop();
  await beta.stop();
  await llm.stop();
  tmp.cleanup();
});

const call = (body: unknown) =>
  request(g.url)
    .post('/mcp')
    .send(body as object);

describe('catalog', () => {
  it('merges healthy tools, lists collisions plain for the primary and qualified for every owner', async () => {
    const res = await request(g.url).get('/tools/list').expect(200);
    const byName = new Map(res.body.tools.map((t: { name: string; service: string }) => [t.name, t.service]));
    expect(res.body.count).toBe(res.body.tools.length);
    expect(byName.get('echo')).toBe('alpha-mcp');
    expect(byName.get('system_info')).toBe('beta-mcp');
    expect(byName.get('alpha-mcp__system_info')).toBe('alpha-mcp');
    expect(byName.get('beta-mcp__system_info')).toBe('beta-mcp');
    expect(byName.has('alpha-mcp__echo')).toBe(false); // unique names are listed plain only
    const echo = res.body.tools.find((t: { name: string }) => t.name === 'echo');
    expect(echo).toMatchObject({
      qualifiedName: 'alpha-mcp__echo',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      annotations: { readOnlyHint: true, idempotentHint: true },
    });
    for (const t of res.body.tools) expect(t.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it('builds the catalog again only when a service’s health or tools change, not on every poll', async () => {
    const gamma = await startDownstream('gamma-mcp', alphaTools);
    const own = tempDir();
    const gg = await startGateway([{ id: 'gamma-mcp', url: gamma.url }], own.dir, { HEALTH_POLL_MS: '600000' });
    const builds = async () => (await request(gg.url).get('/debug/cache').expect(200)).body.catalog.builds as number;
    try {
      const start = await builds();
      const first = gg.gw.registry.catalog;
      for (let i = 0; i < 3; i++) await gg.gw.registry.refresh();
      expect(await builds()).toBe(start);
      expect(gg.gw.registry.catalog).toBe(first);
      // the service goes: a new catalog without its tools
      gamma.failHealth = true;
      await gg.gw.registry.refresh();
      expect(gg.gw.registry.catalog.byName.has('echo')).toBe(false);
      expect(await builds()).toBe(start + 1);
      await gg.gw.registry.refresh();
      expect(await builds()).toBe(start + 1);
      // and comes back: another, with them
      gamma.failHealth = false;
      await gg.gw.registry.refresh();
      expect(gg.gw.registry.catalog.byName.get('echo')?.service).toBe('gamma-mcp');
      expect(await builds()).toBe(start + 2);
    } finally {
      await gg.stop();
      await gamma.stop();
      own.cleanup();
    }
  });

  it('pages /tools/list when asked and refuses a forged cursor', async () => {
    const first = await request(g.url).get('/tools/list?limit=2').expect(200);
    expect(first.body.tools).toHaveLength(2);
    const second = await request(g.url).get(`/tools/list?limit=2&cursor=${first.body.nextCursor}`).expect(200);
    expect(second.body.tools[0].name).not.toBe(first.body.tools[0].name);
    const bad = await request(g.url).get('/tools/list?cursor=nonsense').expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    await request(g.url).get('/tools/list?limit=0').expect(400);
  });
});

describe('native POST /mcp', () => {
  it('routes a call and returns the downstream envelope plus tool, durationMs and the echoed ids', async () => {
    const res = await call({ tool: 'echo', arguments: { text: 'hi' }, session_id: 'sess-1', context_id: 'ctx-1' }).expect(200);
    expect(res.body).toMatchObject({
      success: true,
      result: { text: 'hi' },
      service: 'alpha-mcp',
      tool: 'echo',
      session_id: 'sess-1',
      context_id: 'ctx-1',
    });
    expect(res.body.durationMs).toEqual(expect.any(Number));
    expect(new Date(res.body.timestamp).toISOString()).toBe(res.body.timestamp);
  });

  it('passes X-Request-Id to the downstream', async () => {
    const res = await call({ tool: 'request_id', arguments: {} }).set('X-Request-Id', 'trace-123').expect(200);
    expect(res.body.result.requestId).toBe('trace-123');
    expect(res.headers['x-request-id']).toBe('trace-123');
  });

  it('routes colliding names to the primary and qualified names to their service', async () => {
    expect((await call({ tool: 'system_info', arguments: {} }).expect(200)).body.result.from).toBe('beta-mcp');
    expect((await call({ tool: 'alpha-mcp__system_info', arguments: {} }).expect(200)).body).toMatchObject({
      result: { from: 'alpha-mcp' },
      tool: 'alpha-mcp__system_info',
    });
    expect((await call({ tool: 'beta-mcp__system_info' }).expect(200)).body.result.from).toBe('beta-mcp');
    // The qualified form works for every tool, not only colliding ones.
    expect((await call({ tool: 'alpha-mcp__echo', arguments: { text: 'q' } }).expect(200)).body.result.text).toBe('q');
  });

  it('passes downstream error envelopes through with their status and code', async () => {
    const bad = await call({ tool: 'echo', arguments: { text: 5 } }).expect(400);
    expect(bad.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', service: 'alpha-mcp', tool: 'echo' });
    expect(bad.body.details[0].path).toBe('text');
    const failed = await call({ tool: 'fail', arguments: {} }).expect(500);
    expect(failed.body).toMatchObject({ success: false, code: 'INTERNAL', service: 'alpha-mcp' });
    expect(JSON.stringify(failed.body)).not.toMatch(/boom/);
  });

  it('answers UNKNOWN_TOOL with a hint, and UPSTREAM_UNAVAILABLE for tools of services that are not running', async () => {
    const unknown = await call({ tool: 'no_such_tool', arguments: {} }).expect(404);
    expect(unknown.body).toMatchObject({ success: false, code: 'UNKNOWN_TOOL', service: 'mega-orchestrator' });
    expect(unknown.body.error).toMatch(/GET \/tools\/list/);
    const planned = await call({ tool: 'store_memory', arguments: {} }).expect(503);
    expect(planned.body).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(planned.body.error).toMatch(/memory-mcp \(not yet available\)/);
    await call({ tool: 'beta-mcp__nothing', arguments: {} }).expect(404);
    const qualifiedPlanned = await call({ tool: 'memory-mcp__store_memory', arguments: {} }).expect(503);
    expect(qualifiedPlanned.body.error).toMatch(/not yet available/);
  });

  it.each([
    ['arguments as an array', { tool: 'echo', arguments: ['x'] }, /arguments/],
    ['arguments as a string', { tool: 'echo', arguments: 'text=hi' }, /arguments/],
    ['no tool', { arguments: {} }, /tool/],
    ['tool as a number', { tool: 7 }, /tool/],
    ['an unknown field', { tool: 'echo', argument: {} }, /argument/],
    ['an unknown mode', { tool: 'echo', arguments: { text: 'x' }, mode: 'fast' }, /auto, primary/],
    ['a session_id with spaces', { tool: 'echo', session_id: 'a b' }, /session_id/],
  ])('refuses %s with VALIDATION_ERROR', async (_what, body, pattern) => {
    const res = await call(body).expect(400);
    expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', service: 'mega-orchestrator' });
    expect(JSON.stringify(res.body)).toMatch(pattern);
  });

  it('reads any Content-Type as JSON (curl -d) and refuses bodies that are not objects', async () => {
    const res = await request(g.url)
      .post('/mcp')
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send('{"tool":"echo","arguments":{"text":"curl"}}')
      .expect(200);
    expect(res.body.result.text).toBe('curl');
    const empty = await request(g.url).post('/mcp').expect(400);
    expect(empty.body.code).toBe('VALIDATION_ERROR');
    const scalar = await request(g.url).post('/mcp').set('Content-Type', 'application/json').send('"echo"').expect(400);
    expect(scalar.body.code).toBe('VALIDATION_ERROR');
    // valid JSON, only not an object: said so, not "not valid JSON"
    expect(scalar.body.error).toMatch(/^The request body is a JSON string, not a JSON object; send \{"tool"/);
    for (const [body, kind] of [
      ['5', 'a JSON number'],
      ['null', 'JSON null'],
      [' true ', 'a JSON boolean'],
    ]) {
      const bare = await request(g.url).post('/mcp').set('Content-Type', 'application/json').send(body).expect(400);
      expect(bare.body).toMatchObject({ code: 'VALIDATION_ERROR' });
      expect(bare.body.error).toContain(`is ${kind}, not a JSON object`);
    }
  });

  it('answers malformed JSON with a VALIDATION_ERROR envelope', async () => {
    const res = await request(g.url).post('/mcp').set('Content-Type', 'application/json').send('{"tool": "echo",,}').expect(400);
    expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', service: 'mega-orchestrator' });
    expect(res.body.error).toMatch(/not valid JSON/);
  });

  it('refuses bodies over BODY_LIMIT with PAYLOAD_TOO_LARGE (JSON-RPC clients get a JSON-RPC error)', async () => {
    const big = { tool: 'echo', arguments: { text: 'x'.repeat(1_100_000) } };
    const res = await call(big).expect(413);
    expect(res.body).toMatchObject({ success: false, code: 'PAYLOAD_TOO_LARGE' });
    const rpc = await request(g.url)
      .post('/mcp/rpc')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(1_100_000) } } })
      .expect(413);
    expect(rpc.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32013 } });
  });

  it('refuses browser requests from foreign origins and accepts local and allowed ones', async () => {
    const evil = await call({ tool: 'echo', arguments: { text: 'x' } })
      .set('Origin', 'http://evil.example')
      .expect(403);
    expect(evil.body.code).toBe('FORBIDDEN');
    await call({ tool: 'echo', arguments: { text: 'x' } })
      .set('Origin', 'http://localhost:5173')
      .expect(200);
    await call({ tool: 'echo', arguments: { text: 'x' } })
      .set('Origin', 'https://console.example')
      .expect(200);
    await request(g.url).post('/mcp/alpha-mcp/tools/echo').set('Origin', 'null').send({ text: 'x' }).expect(403);
  });
});

describe('POST /mcp/{service} and the passthrough', () => {
  it('calls one named service', async () => {
    const res = await request(g.url).post('/mcp/alpha-mcp').send({ tool: 'system_info', arguments: {} }).expect(200);
    expect(res.body).toMatchObject({ result: { from: 'alpha-mcp' }, tool: 'system_info', service: 'alpha-mcp' });
    const notThere = await request(g.url).post('/mcp/alpha-mcp').send({ tool: 'ping_beta', arguments: {} }).expect(404);
    expect(notThere.body.code).toBe('UNKNOWN_TOOL');
    const missing = await request(g.url).post('/mcp/nope-mcp').send({ tool: 'echo' }).expect(404);
    expect(missing.body).toMatchObject({ success: false, code: 'NOT_FOUND', service: 'mega-orchestrator' });
    const rpcBody = await request(g.url).post('/mcp/alpha-mcp').send({ jsonrpc: '2.0', id: 1, method: 'ping' }).expect(400);
    expect(rpcBody.body.error).toMatch(/POST \/mcp/);
  });

  it('proxies /mcp/{service}/* unchanged', async () => {
    const health = await request(g.url).get('/mcp/alpha-mcp/health').set('X-Request-Id', 'via-proxy').expect(200);
    expect(health.body).toMatchObject({ status: 'healthy', service: 'alpha-mcp' });
    expect(health.headers['x-request-id']).toBe('via-proxy');
    const tool = await request(g.url).post('/mcp/beta-mcp/tools/ping_beta').send({}).expect(200);
    expect(tool.body).toMatchObject({ success: true, result: { pong: true }, service: 'beta-mcp' });
    const list = await request(g.url).get('/mcp/beta-mcp/tools/list?x=1').expect(200);
    expect(list.body.service).toBe('beta-mcp');
    const downstream404 = await request(g.url).get('/mcp/alpha-mcp/nothing/here').expect(404);
    expect(downstream404.body.service).toBe('alpha-mcp');
    const unknown = await request(g.url).get('/mcp/nope-mcp/health').expect(404);
    expect(unknown.body).toMatchObject({ code: 'NOT_FOUND', service: 'mega-orchestrator' });
  });
});

describe('inventory routes', () => {
  it('GET /health reports the gateway and a downstream summary', async () => {
    const res = await request(g.url).get('/health').expect(200);
    expect(res.body).toMatchObject({
      status: 'healthy',
      service: 'mega-orchestrator',
      downstream: { total: 2, healthy: 2, unhealthy: 0, services: { 'alpha-mcp': 'healthy', 'beta-mcp': 'healthy' } },
      checks: { sessionStore: { status: 'ok' } },
    });
    expect(res.body.tools).toBeGreaterThan(5);
  });

  it('GET /services lists registered services with health and breaker, and the inventory’s planned and excluded ones', async () => {
    const res = await request(g.url).get('/services').expect(200);
    const byId = new Map(res.body.services.map((s: { id: string }) => [s.id, s]));
    expect(byId.get('alpha-mcp')).toMatchObject({
      status: 'healthy',
      url: alpha.url,
      port: alpha.port,
      tools: alphaTools(new Map()).length,
      breaker: { state: 'closed' },
      routable: true,
    });
    expect((byId.get('alpha-mcp') as { lastChecked: string }).lastChecked).toEqual(expect.any(String));
    expect(byId.get('memory-mcp')).toMatchObject({ status: 'not yet available', port: 7005 });
    expect(byId.get('vision-mcp')).toMatchObject({ status: 'excluded' });
    // PORT unset here: the gateway shows its documented port (with PORT, the one it listens on)
    expect(byId.get('mega-orchestrator')).toMatchObject({ status: 'healthy', pattern: 'gateway', port: 7000 });
  });

  it('GET /status, /modes and /mcp/schema', async () => {
    const status = await request(g.url).get('/status').expect(200);
    expect(status.body).toMatchObject({ status: 'healthy', services: { healthy: 2, total: 2, polled: 2 } });
    const modes = await request(g.url).get('/modes').expect(200);
    expect(modes.body.default).toBe('auto');
    expect(modes.body.modes.map((m: { name: string }) => m.name)).toEqual(['auto', 'primary']);
    expect(modes.body.routing).toEqual([
      expect.objectContaining({ tool: 'system_info', primary: 'beta-mcp', owners: ['beta-mcp', 'alpha-mcp'], auto: 'beta-mcp' }),
    ]);
    const schema = await request(g.url).get('/mcp/schema').expect(200);
    expect(schema.body.resources.map((r: { uri: string }) => r.uri)).toEqual(['mega://health', 'mega://services', 'mega://schema']);
    expect(schema.body.tools.length).toBe(schema.body.count);
    expect(schema.body.protocolVersions).toContain('2025-11-25');
  });

  it('GET /stats counts requests, errors by code, tools, services and mode switches', async () => {
    await call({ tool: 'echo', arguments: { text: 'a' }, session_id: 'modes-1', mode: 'auto' }).expect(200);
    const before = (await request(g.url).get('/stats').expect(200)).body;
    await call({ tool: 'echo', arguments: { text: 'a' }, session_id: 'modes-1', mode: 'primary' }).expect(200);
    await call({ tool: 'echo', arguments: { text: 'a' }, session_id: 'modes-1', mode: 'primary' }).expect(200);
    await call({ tool: 'no_such_tool' }).expect(404);
    const after = (await request(g.url).get('/stats').expect(200)).body;
    expect(after.modeSwitches).toBe(before.modeSwitches + 1);
    expect(after.requests.native.total).toBe(before.requests.native.total + 3);
    expect(after.errorsByCode.UNKNOWN_TOOL).toBe((before.errorsByCode.UNKNOWN_TOOL ?? 0) + 1);
    expect(after.tools.echo.calls).toBe(before.tools.echo.calls + 2);
    expect(after.services['alpha-mcp'].calls).toBeGreaterThan(2);
    expect(after).toMatchObject({ uptimeSeconds: expect.any(Number), mcpSessions: expect.any(Number) });
    expect(after.tools.no_such_tool).toBeUndefined();
  });

  it('GET /providers reports configured and reachable providers without any secret', async () => {
    const res = await request(g.url).get('/providers').expect(200);
    const byId = new Map(res.body.providers.map((p: { id: string }) => [p.id, p]));
    expect(byId.get('llm')).toMatchObject({
      configured: true,
      reachable: true,
      url: `http://127.0.0.1:${llm.port}/v1`,
      detail: { apiKeyConfigured: true },
    });
    expect(byId.get('smtp')).toMatchObject({ configured: true, reachable: false });
    expect(byId.get('imap')).toMatchObject({ configured: false, reachable: null });
    expect(byId.get('research-1')).toMatchObject({ configured: true, detail: { source: 'wikipedia' } });
    expect(byId.get('speech-to-text')).toMatchObject({ detail: { backend: 'local' } });
    expect(byId.get('marketplace')).toMatchObject({ configured: false });
    const text = JSON.stringify(res.body);
    expect(text).not.toMatch(/pa55word|sk-very-secret|sekrit/);
  });

  it('GET /memory/stats reports process memory and the memory store’s memory_stats', async () => {
    const res = await request(g.url).get('/memory/stats').expect(200);
    expect(res.body.process.rss).toBeGreaterThan(0);
    expect(res.body.v8.heapSizeLimit).toBeGreaterThan(0);
    expect(res.body.store).toEqual({ service: 'beta-mcp', result: { memories: 3 } });
  });

  it('GET /files/stats, /debug/cache and /metrics', async () => {
    const files = await request(g.url).get('/files/stats').expect(200);
    expect(files.body.sessionsDatabase.file).toBe(`${tmp.dir}/gateway/contexts.sqlite`);
    expect(files.body.sessionsDatabase.bytes).toBeGreaterThan(0);
    expect(files.body.files.files).toBeGreaterThan(0);
    const cache = await request(g.url).get('/debug/cache').expect(200);
    expect(cache.body.catalog).toMatchObject({ collisions: { system_info: { primary: 'beta-mcp' } } });
    expect(cache.body.services['alpha-mcp']).toMatchObject({ status: 'healthy', lastPoll: { ok: true }, breaker: { state: 'closed' } });
    await call({ tool: 'echo', arguments: { text: 'm' } }).expect(200);
    const metrics = await request(g.url).get('/metrics').expect(200);
    expect(metrics.text).toMatch(
      /mcp_fleet_gateway_calls_total\{tool="echo",downstream="alpha-mcp",outcome="ok",service="mega-orchestrator"\} [1-9]/,
    );
    expect(metrics.text).toMatch(/mcp_fleet_gateway_call_duration_seconds_bucket/);
    expect(metrics.text).toMatch(/mcp_fleet_http_requests_total/);
    expect(metrics.text).toMatch(/mcp_fleet_downstream_up\{downstream="alpha-mcp",service="mega-orchestrator"\} 1/);
    expect(metrics.text).toMatch(/mcp_fleet_downstream_breaker_open\{downstream="alpha-mcp",service="mega-orchestrator"\} 0/);
    expect(metrics.text).toMatch(/mcp_fleet_downstream_tools\{downstream="alpha-mcp",service="mega-orchestrator"\} [1-9]/);
  });

  it('unknown routes answer a NOT_FOUND envelope', async () => {
    const res = await request(g.url).get('/nothing').expect(404);
    expect(res.body).toMatchObject({ success: false, code: 'NOT_FOUND', service: 'mega-orchestrator' });
    // a route that exists, asked with a method it does not take, is 405 (mcp.test.ts has the rest)
    await request(g.url).put('/mcp').send({}).expect(405);
  });
});
