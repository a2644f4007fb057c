/** MCP 2026-07-28 (stateless) beside 2025-11-25 on the same POST /mcp: every rule, by hand-written request. */
import { tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { alphaTools, betaTools, startDownstream, startGateway, type Downstream, type RunningGateway } from './helpers';

let tmp: ReturnType<typeof tempDir>;
let alpha: Downstream;
let beta: Downstream;
let g: RunningGateway;

const V = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} };

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

async function rpc(
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string | undefined> = {},
  id: number | string | null = 1,
): Promise<{ status: number; body: any }> {
  const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const defaults: Record<string, string | undefined> = { 'mcp-protocol-version': V, 'mcp-method': method };
  for (const [k, v] of Object.entries({ ...defaults, ...headers })) if (v !== undefined) h[k] = v;
  const res = await fetch(`${g.url}/mcp`, {
    method: 'POST',
    headers: h,
    body: JSON.stringify({ jsonrpc: '2.0', ...(id === null ? {} : { id }), method, params: { _meta: META, ...params } }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('MCP 2026-07-28 (stateless)', () => {
  it('answers server/discover with the versions, the capabilities served, server info in _meta, resultType and cache hints', async () => {
    const { status, body } = await rpc('server/discover');
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: expect.arrayContaining(['2026-07-28', '2025-11-25']),
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        completions: {},
      },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mega-orchestrator' } },
      ttlMs: expect.any(Number),
      cacheScope: 'public',
    });
    // list changes and resource updates are delivered on subscriptions/listen (test/subscriptions.test.ts);
    // the resource list changes as MCP servers behind the gateway change theirs (test/resource-subscriptions.test.ts).
    expect(body.result.capabilities.resources).toEqual({ subscribe: true, listChanged: true });
  });

  it('aborts the downstream call of a tools/call whose client closes the request (how a 2026-era client cancels)', async () => {
    const timeouts = async () => {
      const text = await (await fetch(`${g.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith('mcp_fleet_gateway_calls_total{tool="sleep"') && l.includes('outcome="TIMEOUT"'));
      return Number(line?.split(' ').pop() ?? 0);
    };
    const before = await timeouts();
    const client = new AbortController();
    const started = Date.now();
    const call = fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': V, 'mcp-method': 'tools/call', 'mcp-name': 'sleep' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { _meta: META, name: 'sleep', arguments: { ms: 5000 } },
      }),
      signal: client.signal,
    }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 150));
    client.abort();
    expect(await call).toMatchObject({ name: 'AbortError' });
    // the dispatcher records the call as ended by the client as soon as the downstream call is aborted
    while ((await timeouts()) === before && Date.now() - started < 4000) await new Promise((r) => setTimeout(r, 25));
    expect(await timeouts()).toBe(before + 1);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('lists tools in pages with resultType, ttlMs and cacheScope, and calls a tool without any session', async () => {
    const first = await rpc('tools/list');
    expect(first.body.result).toMatchObject({ resultType: 'complete', ttlMs: 5000, cacheScope: 'public' });
    expect(first.body.result.tools).toHaveLength(3);
    const second = await rpc('tools/list', { cursor: first.body.result.nextCursor });
    expect(second.body.result.tools[0].name).not.toBe(first.body.result.tools[0].name);
    const call = await rpc('tools/call', { name: 'echo', arguments: { text: 'stateless' } }, { 'mcp-name': 'echo' });
    expect(call.status).toBe(200);
    expect(call.body.result).toMatchObject({ resultType: 'complete', isError: false, structuredContent: { text: 'stateless' } });
    const bad = await rpc('tools/call', { name: 'echo', arguments: { text: 5 } }, { 'mcp-name': 'echo' });
    expect(bad.body.result).toMatchObject({ resultType: 'complete', isError: true, structuredContent: { code: 'VALIDATION_ERROR' } });
  });

  it('answers resources and prompts with resultType and cache hints', async () => {
    expect((await rpc('resources/list')).body.result).toMatchObject({
      resultType: 'complete',
      ttlMs: expect.any(Number),
      cacheScope: 'public',
    });
    const read = await rpc('resources/read', { uri: 'mega://health' }, { 'mcp-name': 'mega://health' });
    expect(read.body.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    expect(JSON.parse(read.body.result.contents[0].text).service).toBe('mega-orchestrator');
    // SEP-2164: an unknown resource is Invalid Params with the URI in data (2025 sessions keep -32002).
    const missing = await rpc('resources/read', { uri: 'mega://nope' }, { 'mcp-name': 'mega://nope' });
    expect(missing.body.error).toMatchObject({ code: -32602, data: { uri: 'mega://nope' } });
    expect((await rpc('prompts/list')).body.result).toEqual({ resultType: 'complete', prompts: [], ttlMs: 5000, cacheScope: 'public' });
  });

  it('refuses a request without the _meta version or capabilities: 400, -32602', async () => {
    const res = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': V, 'mcp-method': 'tools/list' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': V } },
      }),
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toMatchObject({ id: 7, error: { code: -32602, data: { missing: ['io.modelcontextprotocol/clientCapabilities'] } } });
    const none = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-protocol-version': V, 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list' }),
    });
    expect(none.status).toBe(400);
    expect(((await none.json()) as any).error.code).toBe(-32602);
  });

  it('refuses an unsupported version: 400, -32022 with the supported list', async () => {
    const res = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'mcp-protocol-version': '2099-01-01',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/list',
        params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      id: 9,
      error: { code: -32022, data: { supported: expect.arrayContaining(['2026-07-28']), requested: '2099-01-01' } },
    });
  });

  it('refuses a header version that differs from _meta: 400, -32020', async () => {
    const res = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'mcp-protocol-version': '2025-11-25',
        'mcp-method': 'tools/list',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/list', params: { _meta: META } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.code).toBe(-32020);
    // A mismatch is judged before the version itself: a supported header with an unknown _meta version too.
    const unknown = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'server/discover',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 11,
        method: 'server/discover',
        params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'v999.0.0' } },
      }),
    });
    expect([unknown.status, ((await unknown.json()) as any).error.code]).toEqual([400, -32020]);
  });

  it('requires Mcp-Method equal to the method and Mcp-Name equal to the name or URI (trimmed, case-sensitive): 400, -32020', async () => {
    for (const headers of [{ 'mcp-method': undefined }, { 'mcp-method': 'tools/call' }, { 'mcp-method': 'Tools/List' }]) {
      const r = await rpc('tools/list', {}, headers);
      expect([r.status, r.body.error.code]).toEqual([400, -32020]);
    }
    expect((await rpc('tools/list', {}, { 'mcp-method': '  tools/list  ' })).status).toBe(200);
    for (const name of [undefined, 'ECHO', 'other']) {
      const r = await rpc('tools/call', { name: 'echo', arguments: { text: 'x' } }, { 'mcp-name': name });
      expect([r.status, r.body.error.code, r.body.id]).toEqual([400, -32020, 1]);
    }
    expect((await rpc('tools/call', { name: 'echo', arguments: { text: 'x' } }, { 'mcp-name': ' echo ' })).status).toBe(200);
    const uri = await rpc('resources/read', { uri: 'mega://health' }, { 'mcp-name': 'mega://services' });
    expect([uri.status, uri.body.error.code]).toEqual([400, -32020]);
  });

  it('answers unknown and removed methods with 404, -32601 and the request id', async () => {
    for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'no/such']) {
      const r = await rpc(method, {}, {}, `id-${method}`);
      expect([method, r.status, r.body.error.code, r.body.id]).toEqual([method, 404, -32601, `id-${method}`]);
    }
  });

  it('accepts a notification with 202 and no body', async () => {
    const r = await rpc('notifications/cancelled', { requestId: 1 }, {}, null);
    expect(r.status).toBe(202);
    expect(r.body).toBeUndefined();
  });

  it('keeps serving 2025-11-25 clients with initialize and sessions on the same endpoint', async () => {
    const client = new Client({ name: 'old-client', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`));
    await client.connect(transport);
    expect(transport.sessionId).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    const result = await client.callTool({ name: 'echo', arguments: { text: 'old' } });
    expect(result.structuredContent).toEqual({ text: 'old' });
    expect((result as Record<string, unknown>).resultType).toBeUndefined();
    await client.close();
  });

  it.each([
    ['pinned', { mode: { pin: '2026-07-28' } }],
    ['auto', { mode: 'auto' }],
  ] as const)(
    'serves the official v2 SDK client (%s negotiation) over 2026-07-28: discover, tools/list, tools/call',
    async (_label, versionNegotiation) => {
      const sent: string[] = [];
      const recording: typeof fetch = async (url, init) => {
        const h = new Headers(init?.headers);
        sent.push(`${h.get('mcp-protocol-version')} ${h.get('mcp-method')}`);
        return fetch(url, init);
      };
      // The v2 client's options type names versionNegotiation; the cast keeps this test independent of its exact typing.
      const client = new V2Client({ name: 'v2-client', version: '1.0.0' }, { versionNegotiation } as ConstructorParameters<
        typeof V2Client
      >[1]);
      await client.connect(new V2Transport(new URL(`${g.url}/mcp`), { fetch: recording }));
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('echo');
      const result = await client.callTool({ name: 'echo', arguments: { text: 'modern' } });
      expect(result.structuredContent).toEqual({ text: 'modern' });
      // Discovery first, then only 2026-07-28 requests (the client pages through the 3-tool pages).
      expect(sent[0]).toBe('2026-07-28 server/discover');
      expect(sent.every((l) => l.startsWith('2026-07-28 '))).toBe(true);
      expect(sent).toContain('2026-07-28 tools/call');
      await client.close();
    },
  );
});

describe('2025-11-25 sessions: tools/call fast path and no per-request leak', () => {
  const post = (sid: string | undefined, body: unknown) =>
    fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        ...(sid ? { 'mcp-session-id': sid } : {}),
      },
      body: JSON.stringify(body),
    });

  it('answers tools/call in a session as the SDK would, and keeps no stream entry per answered request', async () => {
    const init = await post(undefined, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'leak-test', version: '1' } },
    });
    const sid = init.headers.get('mcp-session-id')!;
    expect(sid).toBeTruthy();
    await post(sid, { jsonrpc: '2.0', method: 'notifications/initialized' });
    for (let i = 1; i <= 60; i++) {
      const list = await post(sid, { jsonrpc: '2.0', id: `l${i}`, method: 'tools/list' });
      expect(list.status).toBe(200);
      const call = await post(sid, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: `n${i}` } } });
      expect(call.headers.get('mcp-session-id')).toBe(sid);
      expect(await call.json()).toEqual({
        jsonrpc: '2.0',
        id: i,
        result: {
          content: [{ type: 'text', text: JSON.stringify({ text: `n${i}` }) }],
          structuredContent: { text: `n${i}` },
          isError: false,
        },
      });
    }
    // The regression: SDK 1.32.2 kept one entry per answered request (typescript-sdk #2559).
    expect(g.gw.mcp.streamEntries(sid)).toBe(0);
    const unknown = (await (
      await post(sid, { jsonrpc: '2.0', id: 'u', method: 'tools/call', params: { name: 'nope', arguments: {} } })
    ).json()) as any;
    expect(unknown).toMatchObject({ id: 'u', error: { code: -32602 } });
    const bad = (await (
      await post(sid, { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'echo', arguments: { text: 1 } } })
    ).json()) as any;
    expect(bad.result).toMatchObject({ isError: true, structuredContent: { code: 'VALIDATION_ERROR' } });
  });
});
