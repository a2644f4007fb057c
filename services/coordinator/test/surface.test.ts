import request from 'supertest';
import { getService, polledByGateway } from '@mcp-fleet/inventory';
import { serve } from '@mcp-fleet/testing';
import { FORWARDED } from '../src/tools';
import { coordinator, echo, startFakeGateway, type FakeGateway } from './fake-gateway';

/** platform-interface.md, "Tool arguments on the alternate coordinator surface": every tool and its argument names. */
const CONTRACT: Record<string, string[]> = {
  file_read: ['path'],
  file_write: ['path', 'content'],
  file_list: ['path'],
  git_status: ['repository'],
  git_log: ['repository', 'limit'],
  git_diff: ['repository', 'commit1', 'commit2'],
  execute_command: ['command'],
  system_info: [],
  db_query: ['query', 'database'],
  db_schema: ['database'],
  store_memory: ['key', 'content'],
  search_memories: ['query'],
  list_memories: [],
  memory_stats: [],
  transcribe_audio: ['file_path'],
  transcribe_url: ['url'],
  research_query: ['query', 'sources'],
};

let gateway: FakeGateway;
let app: ReturnType<typeof coordinator>;

beforeAll(async () => {
  gateway = await startFakeGateway();
  app = coordinator(gateway.url, { COORDINATOR_RATE_LIMIT: '0', COORDINATOR_CALL_TIMEOUT_MS: '1000' });
});
afterAll(async () => {
  await app.close();
  await gateway.close();
});
beforeEach(() => {
  gateway.seen.length = 0;
  gateway.reply = echo;
});

const call = (body: unknown) =>
  request(app.app)
    .post('/mcp')
    .send(body as object);
const toolCalls = () => gateway.seen.filter((s) => s.url.startsWith('/mcp/'));

describe('coordinator: the contract tools', () => {
  it('lists exactly the contract tools with exactly its argument names, each schema an object with described properties', async () => {
    const res = await request(app.app).get('/tools/list').expect(200);
    const listed = Object.fromEntries(res.body.tools.map((t: any) => [t.name, Object.keys(t.inputSchema.properties ?? {}).sort()]));
    expect(listed).toEqual(Object.fromEntries(Object.entries(CONTRACT).map(([k, v]) => [k, [...v].sort()])));
    for (const tool of res.body.tools) {
      expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      for (const key of ['oneOf', 'anyOf', 'allOf']) expect(tool.inputSchema[key]).toBeUndefined();
      for (const [name, prop] of Object.entries<any>(tool.inputSchema.properties ?? {}))
        expect([tool.name, name, typeof prop.description, prop.type !== undefined]).toEqual([tool.name, name, 'string', true]);
      expect(tool.description).toMatch(/through the gateway/);
    }
  });

  it('maps every tool onto a service the gateway routes to and that offers a tool of that name', () => {
    for (const spec of FORWARDED) {
      const entry = getService(spec.service);
      expect([spec.name, entry?.tools.includes(spec.name), entry && polledByGateway(entry)]).toEqual([spec.name, true, true]);
    }
  });

  it('answers POST /mcp {tool, arguments} in the envelope, forwarding to POST /mcp/{service} with the same names and the caller headers', async () => {
    const res = await call({ tool: 'git_diff', arguments: { repository: 'repo', commit1: 'HEAD~1', commit2: 'HEAD' } })
      .set('Authorization', 'Bearer caller-token')
      .set('X-Request-Id', 'req-123')
      .expect(200);
    expect(res.body).toEqual({
      success: true,
      result: { echoed: { tool: 'git_diff', arguments: { repository: 'repo', commit1: 'HEAD~1', commit2: 'HEAD' } }, service: 'git-mcp' },
      timestamp: expect.any(String),
      service: 'coordinator',
    });
    expect(new Date(res.body.timestamp).toISOString()).toBe(res.body.timestamp);
    const [seen] = toolCalls();
    expect(seen).toMatchObject({ method: 'POST', url: '/mcp/git-mcp' });
    expect(seen.headers.authorization).toBe('Bearer caller-token');
    expect(seen.headers['x-request-id']).toBe('req-123');
    expect(res.headers['x-request-id']).toBe('req-123');
  });

  it('takes tools without arguments with or without {}, and reads a body sent without Content-Type (curl -d)', async () => {
    expect((await call({ tool: 'system_info' }).expect(200)).body.result.echoed).toEqual({ tool: 'system_info', arguments: {} });
    const res = await request(app.app)
      .post('/mcp')
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send('{"tool":"memory_stats","arguments":{}}')
      .expect(200);
    expect(res.body.result.service).toBe('memory-mcp');
  });

  it('also serves the tools through /tools/call and /tools/{tool}, as every fleet service does', async () => {
    const viaCall = await request(app.app)
      .post('/tools/call')
      .send({ name: 'file_read', arguments: { path: 'a.txt' } })
      .expect(200);
    expect(viaCall.body.result.service).toBe('filesystem-mcp');
    await request(app.app).post('/tools/list_memories').send({}).expect(200);
  });
});

describe('coordinator: bad input is the caller’s 4xx, named, and never reaches the gateway', () => {
  it.each([
    ['a missing required argument', { tool: 'file_read', arguments: {} }, 'path'],
    ['a wrong type', { tool: 'git_log', arguments: { repository: 'r', limit: 'ten' } }, 'limit'],
    ['a number out of range', { tool: 'research_query', arguments: { query: 'x', sources: 500 } }, 'sources'],
    ['an empty string', { tool: 'execute_command', arguments: { command: '' } }, 'command'],
    ['a URL that is not http(s)', { tool: 'transcribe_url', arguments: { url: 'file:///etc/passwd' } }, 'url'],
    ['arguments that are not an object', { tool: 'file_list', arguments: ['.'] }, 'arguments'],
    ['a missing tool', { arguments: {} }, 'tool'],
    ['a tool that is not a string', { tool: 42 }, 'tool'],
  ])('%s: VALIDATION_ERROR 400 naming the field', async (_what, body, field) => {
    const res = await call(body).expect(400);
    expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', service: 'coordinator', timestamp: expect.any(String) });
    expect(res.body.details.map((d: any) => d.path)).toContain(field);
    expect(res.body.error).toContain(field);
    expect(toolCalls()).toHaveLength(0);
  });

  it('refuses arguments the contract does not name, naming them (no option smuggled to the service)', async () => {
    const res = await call({ tool: 'file_read', arguments: { path: 'a', maxBytes: 1 } }).expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(JSON.stringify(res.body)).toContain('maxBytes');
    expect(toolCalls()).toHaveLength(0);
  });

  it('refuses unknown body fields, JSON-RPC bodies, non-objects and broken JSON with VALIDATION_ERROR', async () => {
    expect((await call({ tool: 'system_info', argument: {} }).expect(400)).body.error).toMatch(/argument/);
    expect((await call({ jsonrpc: '2.0', id: 1, method: 'tools/list' }).expect(400)).body.error).toMatch(/gateway's POST \/mcp/);
    await call([{ tool: 'system_info' }]).expect(400);
    const broken = await request(app.app).post('/mcp').set('Content-Type', 'application/json').send('{"tool": ').expect(400);
    expect(broken.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    expect(toolCalls()).toHaveLength(0);
  });

  it('answers an unknown tool 404 UNKNOWN_TOOL pointing at GET /tools/list', async () => {
    const res = await call({ tool: 'file_delete', arguments: { path: 'x' } }).expect(404);
    expect(res.body).toMatchObject({ success: false, code: 'UNKNOWN_TOOL', service: 'coordinator' });
    expect(res.body.error).toMatch(/GET \/tools\/list/);
  });

  it('answers a body over BODY_LIMIT with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await call({ tool: 'file_write', arguments: { path: 'big', content: 'x'.repeat(1_100_000) } }).expect(413);
    expect(res.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(toolCalls()).toHaveLength(0);
  });
});

describe('coordinator: what the gateway answers', () => {
  const envelope = (code: string, service: string, error = 'said no') => ({
    success: false,
    error,
    code,
    timestamp: new Date().toISOString(),
    service,
  });

  it('passes a service error through with its code, status, details and Retry-After', async () => {
    gateway.reply = () => ({ status: 404, body: envelope('NOT_FOUND', 'filesystem-mcp', 'File "nope.txt" does not exist.') });
    const missing = await call({ tool: 'file_read', arguments: { path: 'nope.txt' } }).expect(404);
    expect(missing.body).toMatchObject({
      success: false,
      code: 'NOT_FOUND',
      error: 'File "nope.txt" does not exist.',
      service: 'coordinator',
    });

    gateway.reply = () => ({
      status: 400,
      body: { ...envelope('VALIDATION_ERROR', 'git-mcp'), details: [{ path: 'commit2', message: 'needs commit1' }] },
    });
    const bad = await call({ tool: 'git_diff', arguments: { repository: 'r', commit2: 'HEAD' } }).expect(400);
    expect(bad.body.details).toEqual([{ path: 'commit2', message: 'needs commit1' }]);

    gateway.reply = () => ({ status: 503, body: envelope('UPSTREAM_UNAVAILABLE', 'mega-orchestrator'), headers: { 'Retry-After': '7' } });
    const down = await call({ tool: 'system_info' }).expect(503);
    expect(down.body.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(down.headers['retry-after']).toBe('7');
  });

  it('reads the gateway’s own NOT_FOUND (a service it does not route to) as UPSTREAM_UNAVAILABLE 503 with Retry-After', async () => {
    gateway.reply = () => ({ status: 404, body: envelope('NOT_FOUND', 'mega-orchestrator', 'No downstream service "database-mcp".') });
    const res = await call({ tool: 'db_schema', arguments: {} }).expect(503);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(res.body.error).toMatch(/database-mcp.*start it/);
    expect(res.headers['retry-after']).toBe('5');
  });

  it('turns a service’s INTERNAL into UPSTREAM_ERROR 502 (the coordinator’s 500 is its own fault only)', async () => {
    gateway.reply = () => ({
      status: 500,
      body: envelope('INTERNAL', 'memory-mcp', 'An unexpected error occurred; the cause is in the service log.'),
    });
    const res = await call({ tool: 'memory_stats' }).expect(502);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(res.body.error).toMatch(/^memory-mcp failed on memory_stats/);
  });

  it('answers UPSTREAM_ERROR 502 for an answer that is not an envelope', async () => {
    gateway.reply = () => ({ status: 502, raw: '<html>Bad Gateway</html>' });
    expect((await call({ tool: 'system_info' }).expect(502)).body.code).toBe('UPSTREAM_ERROR');
    gateway.reply = () => ({ status: 200, body: { hello: 'world' } });
    expect((await call({ tool: 'system_info' }).expect(502)).body.code).toBe('UPSTREAM_ERROR');
  });

  it('answers TIMEOUT 504 when the gateway does not answer within COORDINATOR_CALL_TIMEOUT_MS', async () => {
    gateway.reply = () => 'hang';
    const started = Date.now();
    const res = await call({ tool: 'system_info' }).expect(504);
    expect(res.body.code).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe('coordinator: health, status and metrics', () => {
  it('is healthy with the gateway, and says which services can answer its tools (GET /status)', async () => {
    const health = await request(app.app).get('/health').expect(200);
    expect(health.body).toMatchObject({ status: 'healthy', service: 'coordinator', tools: 17, checks: { gateway: { status: 'ok' } } });
    const status = await request(app.app).get('/status').set('Authorization', 'Bearer t').expect(200);
    expect(status.body).toMatchObject({ success: true, service: 'coordinator', result: { status: 'degraded', tools: 17 } });
    const byId = Object.fromEntries(status.body.result.services.map((s: any) => [s.id, s]));
    expect(byId['filesystem-mcp']).toEqual({
      id: 'filesystem-mcp',
      status: 'healthy',
      routable: true,
      tools: ['file_read', 'file_write', 'file_list'],
    });
    expect(byId['git-mcp']).toMatchObject({ status: 'unhealthy', routable: false, reason: 'connection refused' });
    expect(byId['memory-mcp']).toMatchObject({ status: 'unknown', routable: false });
    expect(status.body.result.rateLimit).toEqual({ limit: 0, windowMs: 60_000, store: 'off' });
    expect(gateway.seen.find((s) => s.url === '/services')!.headers.authorization).toBe('Bearer t');
  });

  it('serves Prometheus metrics with the tool calls counted', async () => {
    await call({ tool: 'system_info' }).expect(200);
    const res = await request(app.app).get('/metrics').expect(200);
    expect(res.text).toMatch(/mcp_fleet_tool_calls_total\{[^}]*tool="system_info"[^}]*outcome="ok"[^}]*\} \d+/);
  });
});

describe('coordinator without its gateway', () => {
  it('stays up, degraded, and answers every call UPSTREAM_UNAVAILABLE 503 naming what to do', async () => {
    const gone = await serve((_req, res) => res.end());
    const url = gone.url;
    await gone.stop();
    const lonely = coordinator(url, { COORDINATOR_RATE_LIMIT: '0' });
    try {
      const health = await request(lonely.app).get('/health').expect(200);
      expect(health.body).toMatchObject({ status: 'degraded', checks: { gateway: { status: 'error' } } });
      const res = await request(lonely.app)
        .post('/mcp')
        .send({ tool: 'file_read', arguments: { path: 'a' } })
        .expect(503);
      expect(res.body).toMatchObject({ success: false, code: 'UPSTREAM_UNAVAILABLE', service: 'coordinator' });
      expect(res.body.error).toMatch(/ECONNREFUSED.*\.\/fleet up/);
      expect(res.headers['retry-after']).toBe('5');
      const status = await request(lonely.app).get('/status').expect(200);
      expect(status.body.result).toMatchObject({ status: 'degraded', gateway: { url, reachable: false } });
    } finally {
      await lonely.close();
    }
  });
});
