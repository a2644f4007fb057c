import { JSONRPC_CODES } from '@mcp-fleet/kit';
import request from 'supertest';
import { countsAdded, requestCounts, tempDir, unmatchedAs } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  alphaTools,
  betaTools,
  initSession as openSession,
  startDownstream,
  startGateway,
  type Downstream,
  type RunningGateway,
} from './helpers';

let tmp: ReturnType<typeof tempDir>;
let alpha: Downstream;
let beta: Downstream;
let g: RunningGateway;

beforeAll(async () => {
  tmp = tempDir();
  alpha = await startDownstream('alpha-mcp', alphaTools);
  beta = await startDownstream('beta-mcp', betaTools);
  g = await startGateway(
    [
      { id: 'alpha-mcp', url: alpha.url },
      { id: 'beta-mcp', url: beta.url, primaryFor: ['system_info'] },
    ],
    tmp.dir,
    { MCP_PAGE_SIZE: '3' },
  );
});

afterAll(async () => {
  await g.stop();
  await alpha.stop();
  await beta.stop();
  tmp.cleanup();
});

async function connect(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`));
  await client.connect(transport);
  return { client, transport };
}

/** A 2025-era session opened by hand: its Mcp-Session-Id. */
const initSession = () => openSession(g.url);

/** A JSON-RPC request the way curl sends it: no Accept, form Content-Type, no initialize. */
const raw = (body: string, path = '/mcp') => request(g.url).post(path).set('Content-Type', 'application/x-www-form-urlencoded').send(body);

describe('MCP through the official SDK client', () => {
  let client: Client;
  let transport: StreamableHTTPClientTransport;

  beforeAll(async () => {
    ({ client, transport } = await connect());
  });

  afterAll(async () => {
    await client.close();
  });

  it('initializes a session and advertises tools (with listChanged) and resources', () => {
    expect(client.getServerVersion()).toMatchObject({ name: 'mega-orchestrator' });
    expect(client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      completions: {},
    });
    expect(transport.sessionId).toEqual(expect.any(String));
  });

  it('lists tools page by page with nextCursor', async () => {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      expect(page.tools.length).toBeLessThanOrEqual(3);
      names.push(...page.tools.map((t) => t.name));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor);
    const rest = await request(g.url).get('/tools/list').expect(200);
    expect(names).toEqual(rest.body.tools.map((t: { name: string }) => t.name));
    expect(pages).toBe(Math.ceil(names.length / 3));
    expect(names).toEqual(expect.arrayContaining(['echo', 'system_info', 'alpha-mcp__system_info', 'beta-mcp__system_info']));
  });

  it('calls a tool: text content, structuredContent and isError false', async () => {
    const res = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
    expect(res.isError).toBe(false);
    expect(res.structuredContent).toEqual({ text: 'hello' });
    expect(res.content).toEqual([{ type: 'text', text: JSON.stringify({ text: 'hello' }) }]);
    const scalar = await client.callTool({ name: 'scalar', arguments: {} });
    expect(scalar.structuredContent).toEqual({ result: 42 });
    const routed = await client.callTool({ name: 'system_info', arguments: {} });
    expect(routed.structuredContent).toEqual({ from: 'beta-mcp' });
  });

  it('returns bad arguments and downstream failures as isError results carrying the envelope', async () => {
    const bad = await client.callTool({ name: 'echo', arguments: { text: 12 } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ success: false, code: 'VALIDATION_ERROR', service: 'alpha-mcp' });
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(failed.structuredContent).toMatchObject({ code: 'INTERNAL' });
  });

  it('refuses an unknown tool with JSON-RPC error -32602', async () => {
    const err = await client.callTool({ name: 'no_such_tool', arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
  });

  it('takes the routing mode from _meta and refuses an unknown one', async () => {
    const primary = await client.callTool({ name: 'system_info', arguments: {}, _meta: { mode: 'primary' } });
    expect(primary.structuredContent).toEqual({ from: 'beta-mcp' });
    const err = await client.callTool({ name: 'echo', arguments: { text: 'x' }, _meta: { mode: 'fast' } }).catch((e: unknown) => e);
    expect((err as McpError).code).toBe(-32602);
  });

  it('lists and reads the mega:// resources', async () => {
    const list = await client.listResources();
    expect(list.resources.map((r) => r.uri)).toEqual(['mega://health', 'mega://services', 'mega://schema']);
    const health = await client.readResource({ uri: 'mega://health' });
    expect(health.contents[0]).toMatchObject({ uri: 'mega://health', mimeType: 'application/json' });
    expect(JSON.parse((health.contents[0] as { text: string }).text)).toMatchObject({ service: 'mega-orchestrator', status: 'healthy' });
    const services = await client.readResource({ uri: 'mega://services' });
    expect(JSON.parse((services.contents[0] as { text: string }).text).services.length).toBeGreaterThan(2);
    const missing = await client.readResource({ uri: 'mega://nope' }).catch((e: unknown) => e);
    expect((missing as McpError).code).toBe(JSONRPC_CODES.RESOURCE_NOT_FOUND);
  });

  it('answers ping', async () => {
    await expect(client.ping()).resolves.toEqual({});
  });

  it('records the session’s calls under its Mcp-Session-Id', async () => {
    await client.callTool({ name: 'echo', arguments: { text: 'remember me' }, _meta: { context_id: 'ctx-mcp' } });
    const res = await request(g.url).get(`/debug/contexts/${transport.sessionId}`).expect(200);
    expect(res.body).toMatchObject({ transport: 'jsonrpc' });
    expect(res.body.calls[0]).toMatchObject({ tool: 'echo', context_id: 'ctx-mcp', success: true, arguments: { text: 'remember me' } });
    const stats = await request(g.url).get('/stats').expect(200);
    expect(stats.body.mcpSessions).toBeGreaterThanOrEqual(1);
  });
});

describe('catalog changes', () => {
  it('sends notifications/tools/list_changed to connected sessions', async () => {
    const { client } = await connect();
    let notified = false;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      notified = true;
    });
    // The client opens its GET stream just after initialization; a change before that is not seen,
    // so the catalog is changed until the notification arrives (once in practice).
    for (let attempt = 0; attempt < 20 && !notified; attempt++) {
      await beta.stop();
      await g.gw.refresh();
      for (let i = 0; i < 10 && !notified; i++) await new Promise((r) => setTimeout(r, 20));
      if (!notified) {
        await beta.start();
        await g.gw.refresh();
      }
    }
    expect(notified).toBe(true);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain('ping_beta');
    await beta.start();
    await g.gw.refresh();
    await client.close();
  });
});

describe('logging', () => {
  it('answers logging/setLevel and tells a session, at or above its level, that a downstream left', async () => {
    const { client } = await connect();
    expect(client.getServerCapabilities()?.logging).toEqual({});
    await expect(client.setLoggingLevel('warning')).resolves.toEqual({});
    const messages: { level: string; logger?: string; data: any }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
    const left = () => messages.some((m) => m.data?.event === 'service_unhealthy' && m.data.service === 'beta-mcp');
    // As with list_changed: the GET stream opens just after initialization, so repeat until heard.
    for (let attempt = 0; attempt < 20 && !left(); attempt++) {
      await beta.stop();
      await g.gw.refresh();
      for (let i = 0; i < 10 && !left(); i++) await new Promise((r) => setTimeout(r, 20));
      await beta.start();
      await g.gw.refresh();
    }
    expect(messages.find((m) => m.data?.event === 'service_unhealthy')).toMatchObject({
      level: 'warning',
      logger: 'mega-orchestrator',
      data: { service: 'beta-mcp', reason: expect.any(String) },
    });
    // beta rejoined at 'notice', below the session's level: not sent.
    await new Promise((r) => setTimeout(r, 100));
    expect(messages.filter((m) => m.data?.event === 'service_healthy')).toEqual([]);
    await expect(client.setLoggingLevel('info')).resolves.toEqual({});
    await beta.stop();
    await g.gw.refresh();
    await beta.start();
    await g.gw.refresh();
    for (let i = 0; i < 50 && !messages.some((m) => m.data?.event === 'service_healthy'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(messages.find((m) => m.data?.event === 'service_healthy')).toMatchObject({ level: 'notice', data: { service: 'beta-mcp' } });
    await client.close();
  });
});

describe('resource subscriptions (2025 sessions)', () => {
  it('subscribes to the gateway resources, tells the session when one changes, and stops on unsubscribe', async () => {
    const { client } = await connect();
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await expect(client.subscribeResource({ uri: 'mega://health' })).resolves.toEqual({});
    const unknown = await client.subscribeResource({ uri: 'mega://nope' }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: JSONRPC_CODES.RESOURCE_NOT_FOUND, data: { uri: 'mega://nope' } });
    // The GET stream opens just after initialization: change the fleet until the update is heard.
    for (let attempt = 0; attempt < 20 && !updated.includes('mega://health'); attempt++) {
      await beta.stop();
      await g.gw.refresh();
      for (let i = 0; i < 10 && !updated.includes('mega://health'); i++) await new Promise((r) => setTimeout(r, 20));
      await beta.start();
      await g.gw.refresh();
    }
    expect(updated).toContain('mega://health');
    // Only what it subscribed to: mega://schema changed too (the catalog) but was not asked for.
    expect(updated.filter((u) => u !== 'mega://health')).toEqual([]);
    await expect(client.unsubscribeResource({ uri: 'mega://health' })).resolves.toEqual({});
    await new Promise((r) => setTimeout(r, 50));
    const heard = updated.length;
    await beta.stop();
    await g.gw.refresh();
    await beta.start();
    await g.gw.refresh();
    await new Promise((r) => setTimeout(r, 100));
    expect(updated.length).toBe(heard);
    await client.close();
  });
});

describe('sessions over HTTP', () => {
  it('ends a session with DELETE and then answers 404 for it', async () => {
    const { client, transport } = await connect();
    const sid = transport.sessionId!;
    await transport.terminateSession();
    const res = await request(g.url)
      .post('/mcp')
      .set('Mcp-Session-Id', sid)
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
      .expect(404);
    expect(res.body.error.code).toBe(JSONRPC_CODES.SESSION_NOT_FOUND);
    await client.close();
  });

  it('answers 400 (-32022, with the versions it speaks) for an MCP-Protocol-Version it does not speak, with or without a session', async () => {
    const sid = await initSession();
    const post = (version: string, session?: string) => {
      const r = request(g.url).post('/mcp').set('Accept', 'application/json, text/event-stream').set('MCP-Protocol-Version', version);
      return (session ? r.set('Mcp-Session-Id', session) : r).send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    };
    for (const [version, session] of [
      ['1999-01-01', sid],
      ['2025-13-45', undefined],
      ['latest', sid],
      ['', undefined],
    ] as const) {
      const res = await post(version, session);
      expect({ version, status: res.status }).toEqual({ version, status: 400 });
      expect(res.body.error).toMatchObject({
        code: -32022,
        data: { supported: expect.arrayContaining(['2025-11-25', '2026-07-28']), requested: version },
      });
    }
    // GET and DELETE of a session say the same; the versions it speaks are served
    const get = await request(g.url)
      .get('/mcp')
      .set('Accept', 'text/event-stream')
      .set('Mcp-Session-Id', sid)
      .set('MCP-Protocol-Version', '0.1');
    expect(get.status).toBe(400);
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      expect((await post(version, sid)).body.result.tools.length).toBeGreaterThan(0);
      expect((await post(version)).body.result.tools.length).toBeGreaterThan(0);
    }
    // initialize negotiates: its header is not read
    const init = await request(g.url)
      .post('/mcp')
      .set('Accept', 'application/json, text/event-stream')
      .set('MCP-Protocol-Version', '1999-01-01')
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
    expect(init.body.result.protocolVersion).toBe('2025-11-25');
  });

  it('answers concurrent calls in one session and refuses a request id already in flight instead of hanging', async () => {
    const sid = await initSession();
    const call = (id: number, ms: number) =>
      request(g.url)
        .post('/mcp')
        .set('Mcp-Session-Id', sid)
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'sleep', arguments: { ms } } });
    const slow = call(7, 300).then((r) => r); // supertest sends on then()
    await new Promise((r) => setTimeout(r, 50));
    const [reused, ...others] = await Promise.all([call(7, 1), ...[8, 9, 10].map((id) => call(id, 20))]);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toMatchObject({ code: -32600, message: expect.stringMatching(/already in flight/) });
    for (const r of others) expect(r.body.result.isError).toBe(false);
    expect((await slow).body).toMatchObject({ id: 7, result: { isError: false } });
    expect((await call(7, 1)).body).toMatchObject({ id: 7, result: { isError: false } });
  });

  it('aborts a running tools/call when the session sends notifications/cancelled for its id', async () => {
    const sid = await initSession();
    const post = (message: Record<string, unknown>) =>
      request(g.url).post('/mcp').set('Mcp-Session-Id', sid).set('Accept', 'application/json, text/event-stream').send(message);
    const started = Date.now();
    const slow = post({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'sleep', arguments: { ms: 5000 } } }).then(
      (r) => r,
    );
    await new Promise((r) => setTimeout(r, 150));
    // another request's id, or none, cancels nothing
    await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'other' } }).expect(202);
    await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1', reason: 'user' } }).expect(202);
    const answer = await slow;
    expect(Date.now() - started).toBeLessThan(2500);
    expect(answer.body).toMatchObject({ id: 'slow-1', result: { isError: true, structuredContent: { code: 'TIMEOUT' } } });
    // the id is free again, and a call that is not cancelled runs to its end
    expect(
      (await post({ jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'sleep', arguments: { ms: 200 } } })).body,
    ).toMatchObject({
      result: { isError: false },
    });
  });

  it('GET and DELETE /mcp without a session id explain what to do', async () => {
    const get = await request(g.url).get('/mcp').set('Accept', 'text/event-stream').expect(400);
    expect(get.body.error.message).toMatch(/Mcp-Session-Id/);
    await request(g.url).delete('/mcp').expect(400);
    await request(g.url).delete('/mcp').set('Mcp-Session-Id', 'not-a-session').expect(404);
  });

  it('answers 405 with Allow to a method an MCP endpoint does not take, as a JSON-RPC error', async () => {
    const cases: [method: 'put' | 'patch' | 'get' | 'post', path: string, allow: string][] = [
      ['put', '/mcp', 'GET, POST, DELETE'],
      ['patch', '/mcp', 'GET, POST, DELETE'],
      ['get', '/mcp/rpc', 'POST'],
      ['put', '/servers/any/mcp', 'GET, POST, DELETE'],
      ['post', '/sse', 'GET'],
      ['get', '/messages', 'POST'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await request(g.url)[method](path).set('Content-Type', 'application/json').send('{}');
      expect([path, method, res.status, res.headers.allow]).toEqual([path, method, 405, allow]);
      expect(res.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: JSONRPC_CODES.INVALID_REQUEST } });
      expect(res.body.error.message).toContain(`${method.toUpperCase()} ${path} takes`);
    }
    // the methods it does take still reach their handlers
    await request(g.url).delete('/mcp').expect(400);
    await request(g.url).get('/nothing/mcp').expect(404);
  });

  it('answers initialize for current, older and future protocol versions', async () => {
    const init = (protocolVersion: string) =>
      raw(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion, capabilities: {}, clientInfo: { name: 'curl', version: '0' } },
        }),
      ).expect(200);
    const current = await init('2025-11-25');
    expect(current.body.result).toMatchObject({ protocolVersion: '2025-11-25', serverInfo: { name: 'mega-orchestrator' } });
    expect(current.headers['mcp-session-id']).toEqual(expect.any(String));
    expect((await init('2024-11-05')).body.result.protocolVersion).toBe('2024-11-05');
    const future = await init('2026-07-28');
    expect(future.body.result.protocolVersion).toBe('2025-11-25');
    // That client may keep sending its own version header; the gateway still answers.
    const sid = future.headers['mcp-session-id'];
    const list = await request(g.url)
      .post('/mcp')
      .set('Mcp-Session-Id', sid)
      .set('MCP-Protocol-Version', '2026-07-28')
      .send({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
      .expect(200);
    expect(list.body.result.tools.length).toBeGreaterThan(0);
    const initialized = await request(g.url)
      .post('/mcp')
      .set('Mcp-Session-Id', sid)
      .send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(initialized.status).toBe(202);
  });
});

describe('sessionless JSON-RPC (curl)', () => {
  it('runs tools/call without initialize, Accept or a JSON Content-Type', async () => {
    const res = await raw('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"curl"}}}').expect(
      200,
    );
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.headers['mcp-session-id']).toBeUndefined();
    expect(res.body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: '{"text":"curl"}' }], structuredContent: { text: 'curl' }, isError: false },
    });
    const alias = await raw('{"jsonrpc":"2.0","id":"b","method":"tools/list"}', '/mcp/rpc').expect(200);
    expect(alias.body.result.tools).toHaveLength(3);
    expect(alias.body.result.nextCursor).toEqual(expect.any(String));
  });

  it('records sessionless calls under _meta.session_id', async () => {
    await raw(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"k"},"_meta":{"session_id":"curl-1","context_id":"c1"}}}',
    ).expect(200);
    const res = await request(g.url).get('/debug/contexts/curl-1').expect(200);
    expect(res.body).toMatchObject({ transport: 'jsonrpc', calls: [{ tool: 'echo', context_id: 'c1', arguments: { text: 'k' } }] });
  });

  it('answers batches and notifications', async () => {
    const batch = await raw(
      JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'scalar', arguments: {} } },
      ]),
    ).expect(200);
    expect(batch.body).toHaveLength(2);
    expect(batch.body.find((m: { id: number }) => m.id === 2).result.structuredContent).toEqual({ result: 42 });
    const note = await raw('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    expect(note.status).toBe(202);
    // one request in a batch is still answered with an array (the SDK alone sends a bare object)
    const one = await raw(
      JSON.stringify([
        { jsonrpc: '2.0', id: 7, method: 'ping' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ]),
    ).expect(200);
    expect(one.body).toEqual([{ jsonrpc: '2.0', id: 7, result: {} }]);
    expect(Number(one.headers['content-length'])).toBe(Buffer.byteLength(one.text));
    const onlyNotes = await raw(JSON.stringify([{ jsonrpc: '2.0', method: 'notifications/initialized' }]));
    expect(onlyNotes.status).toBe(202);
    // batches were removed in 2025-06-18: a client speaking a later revision is told so
    for (const version of ['2025-06-18', '2025-11-25']) {
      const refused = await raw(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }]))
        .set('MCP-Protocol-Version', version)
        .expect(400);
      expect(refused.body).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining('one message per POST') } });
    }
    const old = await raw(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }]))
      .set('MCP-Protocol-Version', '2025-03-26')
      .expect(200);
    expect(old.body).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
  });

  it('maps errors to JSON-RPC codes: -32601, -32602, -32700, -32600', async () => {
    const method = await raw('{"jsonrpc":"2.0","id":1,"method":"tools/explode"}').expect(200);
    expect(method.body).toMatchObject({ id: 1, error: { code: -32601 } });
    const unknownTool = await raw('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope","arguments":{}}}').expect(200);
    expect(unknownTool.body).toMatchObject({ id: 2, error: { code: -32602 } });
    const badArgs = await raw('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":"x"}}').expect(200);
    expect(badArgs.body.error.code).toBe(-32602);
    const noName = await raw('{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}').expect(200);
    expect(noName.body.error.code).toBe(-32602);
    const noUri = await raw('{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{}}').expect(200);
    expect(noUri.body.error.code).toBe(-32602);
    const badCursor = await raw('{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"cursor":"forged"}}').expect(200);
    expect(badCursor.body.error.code).toBe(-32602);

    const parse = await raw('{"jsonrpc":"2.0","id":1,"method":').expect(400);
    expect(parse.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } });
    const parseAlias = await raw('{{{', '/mcp/rpc').expect(400);
    expect(parseAlias.body.error.code).toBe(-32700);

    for (const body of [
      '{"jsonrpc":"1.0","id":1,"method":"ping"}',
      '{"jsonrpc":"2.0","id":1}',
      '[]',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}',
    ]) {
      const res = await raw(body).expect(400);
      expect(res.body.error.code).toBe(-32600);
    }
    const badMeta = await raw('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","_meta":"x"}}').expect(400);
    expect(badMeta.body).toMatchObject({ id: 8, error: { code: -32600 } });
    const badInit = await raw('{"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}').expect(200);
    expect(badInit.body).toMatchObject({ id: 9, error: { code: -32602, message: expect.stringMatching(/protocolVersion/) } });
    const native = await raw('{"tool":"echo"}', '/mcp/rpc').expect(400);
    expect(native.body.error.code).toBe(-32600);
  });

  it('answers an unknown session id with 404', async () => {
    const res = await request(g.url)
      .post('/mcp')
      .set('Mcp-Session-Id', 'stale')
      .send({ jsonrpc: '2.0', id: 1, method: 'ping' })
      .expect(404);
    expect(res.body.error.code).toBe(JSONRPC_CODES.SESSION_NOT_FOUND);
  });
});

describe('session limits', () => {
  it('closes the least recently used session beyond MCP_MAX_SESSIONS', async () => {
    const small = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], `${tmp.dir}/limits`, { MCP_MAX_SESSIONS: '2' });
    const init = () =>
      request(small.url)
        .post('/mcp')
        .send({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
        })
        .expect(200);
    const ping = (sid: string, status: number) =>
      request(small.url).post('/mcp').set('Mcp-Session-Id', sid).send({ jsonrpc: '2.0', id: 2, method: 'ping' }).expect(status);
    try {
      const first = (await init()).headers['mcp-session-id'];
      const second = (await init()).headers['mcp-session-id'];
      await ping(first, 200); // the first is now the more recently used
      const third = (await init()).headers['mcp-session-id'];
      expect(small.gw.mcp.count).toBe(2);
      await ping(second, 404);
      await ping(first, 200);
      await ping(third, 200);
    } finally {
      await small.stop();
    }
  });
});

describe('the hot path (POST /mcp with a plain JSON body, answered before Express)', () => {
  const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const MALFORMED = '{"jsonrpc":"2.0","id":1,"method":';
  let sent = 0;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 5));
  /** The gateway's HTTP, tool-call and per-transport counts. */
  const counts = async () => {
    const out = await requestCounts(g.gw.ctx.stats.metrics.registry);
    const snapshot = g.gw.ctx.stats.snapshot() as {
      requests: Record<string, { ok: number; error: number }>;
      errorsByCode: Record<string, number>;
    };
    for (const [transport, n] of Object.entries(snapshot.requests))
      Object.assign(out, { [`${transport} ok`]: n.ok, [`${transport} error`]: n.error });
    for (const [code, n] of Object.entries(snapshot.errorsByCode)) out[`error ${code}`] = n;
    return out;
  };
  const post = async (type: string, body: string, headers: Record<string, string> = {}) => {
    const requestId = `hot-${++sent}`;
    const before = await counts();
    const dispatched = jest.spyOn(g.gw.ctx.dispatcher, 'call');
    try {
      const res = await request(g.url)
        .post('/mcp')
        .set({ Accept: 'application/json, text/event-stream', 'X-Request-Id': requestId, traceparent: TRACEPARENT, ...headers })
        .set('Content-Type', type)
        .send(body);
      await settle();
      const call = dispatched.mock.calls[0]?.[0];
      return {
        res,
        requestId,
        counted: countsAdded(before, await counts()),
        call: call && { requestId: call.requestId, traceparent: call.traceparent, sessionId: call.sessionId, transport: call.transport },
      };
    } finally {
      dispatched.mockRestore();
    }
  };
  // The form Content-Type takes the Express routes (any type is read as JSON there): both must
  // agree on status, headers, body, counts and what reaches the dispatcher.
  const same = async (body: string, headers: Record<string, string> = {}) => {
    const fast = await post('application/json', body, headers);
    const slow = await post('application/x-www-form-urlencoded', body, headers);
    const view = ({ res, requestId, counted, call }: Awaited<ReturnType<typeof post>>) => {
      const { date: _d, 'content-length': _l, 'x-request-id': echoed, ...rest } = res.headers;
      const text = JSON.stringify(res.body)
        .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '-')
        .replace(/"durationMs":[\d.]+/g, '"durationMs":0');
      return {
        status: res.status,
        headers: rest,
        body: JSON.parse(text),
        echoed: echoed === requestId,
        call: call && { ...call, requestId: call.requestId === requestId },
        // Express's body parser fails before its route matches: it counts a malformed body as unmatched.
        counted: unmatchedAs(counted, '/mcp'),
      };
    };
    expect(view(fast)).toEqual(view(slow));
    expect(view(fast).echoed).toBe(true);
    expect(fast.res.headers.etag).toBeUndefined();
    expect(Object.keys(fast.counted)).toContainEqual(
      `mcp_fleet_http_requests_total{"method":"POST","route":"/mcp","status":"${fast.res.status}"}`,
    );
    if (fast.call) expect(fast.call).toMatchObject({ requestId: fast.requestId, traceparent: TRACEPARENT });
    return fast.res;
  };

  it('answers every request shape as the Express routes do, sessionless and in a session', async () => {
    for (const body of [
      MALFORMED,
      '{"tool":"echo","arguments":{"text":"n"}}',
      '{"tool":"echo","arguments":{"text":3}}',
      '"scalar"',
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s"}}}',
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}}',
      '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","_meta":"x"}}',
    ]) {
      await same(body);
    }
    // The Origin rule (a browser page the gateway does not allow) holds on both.
    expect((await same('{"tool":"echo","arguments":{"text":"o"}}', { Origin: 'http://evil.example' })).status).toBe(403);
    const { res: init } = await post(
      'application/json',
      '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
    );
    expect(init.status).toBe(200);
    const sid = String(init.headers['mcp-session-id']);
    const session = { 'Mcp-Session-Id': sid, 'Mcp-Protocol-Version': '2025-06-18' };
    const ok = await same('{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"in"}}}', session);
    expect(ok.body).toMatchObject({ id: 10, result: { isError: false, structuredContent: { text: 'in' } } });
    expect(ok.headers['mcp-session-id']).toBe(sid);
    expect(ok.headers.etag).toBeUndefined();
    for (const body of [
      '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"text":"p"},"_meta":{"progressToken":"t1"}}}',
      '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"p"},"_meta":{"progressToken":1.5}}}',
      '{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"echo","_meta":{"other":{"x":1}}}}',
      '{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"echo","arguments":"x"}}',
      '{"jsonrpc":"2.0","id":"15","method":"tools/list"}',
    ]) {
      await same(body, { ...session, Accept: 'application/json' });
    }
  });
});
