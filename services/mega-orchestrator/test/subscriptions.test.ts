/**
 * MCP 2026-07-28 subscriptions/listen on the gateway: list changes of tools and prompts on an SSE
 * stream, by hand-written requests for every rule and with the official v2 client's listen().
 */
import type { PromptListing } from '@mcp-fleet/kit';
import { serve, tempDir } from '@mcp-fleet/testing';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PromptListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  alphaTools,
  betaTools,
  openListen,
  promptService,
  startDownstream,
  startGateway,
  until,
  type Downstream,
  type RunningGateway,
} from './helpers';

const V = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': V, 'io.modelcontextprotocol/clientCapabilities': {} };
const SUB = 'io.modelcontextprotocol/subscriptionId';

let tmp: ReturnType<typeof tempDir>;
let alpha: Downstream;
let beta: Downstream;
let g: RunningGateway;
// A kit service whose prompts the test changes.
const prompts: PromptListing[] = [{ name: 'first', description: 'The first prompt.' }];
const notes = promptService('notes-mcp', prompts);
let notesServer: Awaited<ReturnType<typeof serve>>;

beforeAll(async () => {
  tmp = tempDir();
  alpha = await startDownstream('alpha-mcp', alphaTools);
  beta = await startDownstream('beta-mcp', betaTools);
  notesServer = await serve(notes.app);
  g = await startGateway(
    [
      { id: 'alpha-mcp', url: alpha.url },
      { id: 'beta-mcp', url: beta.url },
      { id: 'notes-mcp', url: notesServer.url },
    ],
    tmp.dir,
    { MCP_MAX_LISTEN_STREAMS: '3', MCP_LISTEN_KEEPALIVE_MS: '100' },
  );
});

afterAll(async () => {
  await g.stop();
  await alpha.stop();
  await beta.stop();
  await notesServer.stop();
  tmp.cleanup();
});

/** POSTs a listen request to this suite's gateway and reads its SSE stream frame by frame. */
const listen = (params: Record<string, unknown>, opts: { id?: string | number | null; headers?: Record<string, string> } = {}) =>
  openListen(g.url, params, opts);

describe('subscriptions/listen (2026-07-28)', () => {
  it('server/discover advertises listChanged for tools and prompts, and resource subscriptions', async () => {
    const res = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': V, 'mcp-method': 'server/discover' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } }),
    });
    const { result } = (await res.json()) as any;
    expect(result.capabilities).toEqual({
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
      // the tasks extension (test/tasks.test.ts), whose notifications/tasks also arrive on listen streams, and skills (src/skills.ts)
      extensions: { 'io.modelcontextprotocol/tasks': {}, 'io.modelcontextprotocol/skills': { directoryRead: true } },
    });
  });

  it('acknowledges the honored subset first, then delivers only the list changes each stream asked for', async () => {
    const both = await listen({
      notifications: {
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
        resourceSubscriptions: ['test://not-ours'],
      },
    });
    expect(both.res.status).toBe(200);
    expect(both.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(both.res.headers.get('x-accel-buffering')).toBe('no');
    expect(both.res.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(both.res.headers.get('mcp-protocol-version')).toBe(V);
    // Updates of resources nobody serves are not acknowledged.
    expect(await both.next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true },
        _meta: { [SUB]: 'listen-1' },
      },
    });
    const toolsOnly = await listen({ notifications: { toolsListChanged: true, promptsListChanged: false } }, { id: 7 });
    expect((await toolsOnly.next()).params).toEqual({ notifications: { toolsListChanged: true }, _meta: { [SUB]: 7 } });

    // Prompts change: only the stream that asked hears it.
    prompts.push({ name: 'second', description: 'The second prompt.' });
    await g.gw.refresh();
    expect(await both.next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/prompts/list_changed',
      params: { _meta: { [SUB]: 'listen-1' } },
    });

    // Tools change (beta goes unhealthy): both hear it; the tools-only stream's first message is this one.
    beta.failHealth = true;
    await g.gw.refresh();
    expect(await both.next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { [SUB]: 'listen-1' } },
    });
    expect(await toolsOnly.next()).toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [SUB]: 7 } } });
    beta.failHealth = false;
    await g.gw.refresh();
    expect((await toolsOnly.next()).method).toBe('notifications/tools/list_changed');

    // A refresh that changes nothing sends nothing: the next frame is a keep-alive comment.
    await g.gw.refresh();
    expect(await toolsOnly.frame()).toEqual({ comment: true });

    // The client closing its stream ends the subscription on the gateway.
    expect(g.gw.ctx.listen.count).toBe(2);
    both.close();
    toolsOnly.close();
    await until(() => g.gw.ctx.listen.count === 0);
  });

  it("sends notifications/resources/updated for the gateway's resources a stream subscribed to, once per change", async () => {
    const stream = await listen(
      { notifications: { resourceSubscriptions: ['mega://services', 'mega://services', 'mega://nope'] } },
      { id: 'res' },
    );
    expect(await stream.next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { resourceSubscriptions: ['mega://services'] }, _meta: { [SUB]: 'res' } },
    });
    // beta leaves: its health and the catalog change in one refresh, mega://services is updated once.
    beta.failHealth = true;
    await g.gw.refresh();
    expect(await stream.next()).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/resources/updated',
      params: { uri: 'mega://services', _meta: { [SUB]: 'res' } },
    });
    beta.failHealth = false;
    await g.gw.refresh();
    expect((await stream.next()).params.uri).toBe('mega://services');
    // Nothing else was sent for those two changes: the next frame is a keep-alive.
    expect(await stream.frame()).toEqual({ comment: true });
    stream.close();
    await until(() => g.gw.ctx.listen.count === 0);
  });

  it('refuses bad params with -32602, a missing id with -32600, and headers and _meta as every request', async () => {
    const post = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const res = await fetch(`${g.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'mcp-protocol-version': V, 'mcp-method': 'subscriptions/listen', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'subscriptions/listen', ...body }),
      });
      return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
    };
    for (const params of [
      {},
      { notifications: true },
      { notifications: { toolsListChanged: 'yes' } },
      { notifications: { resourceSubscriptions: 'mega://health' } },
      { notifications: { resourceSubscriptions: [1] } },
    ]) {
      const r = await post({ id: 'bad', params: { _meta: META, ...params } });
      expect([JSON.stringify(params), r.status, r.body.error.code, r.body.id]).toEqual([JSON.stringify(params), 200, -32602, 'bad']);
      expect(r.type).toMatch(/application\/json/);
    }
    expect((await post({ id: 1, params: { _meta: META } })).body.error.message).toMatch(/params\.notifications/);
    const nullId = await post({ id: null, params: { _meta: META, notifications: { toolsListChanged: true } } });
    expect([nullId.status, nullId.body.error.code]).toEqual([400, -32600]);
    const noMeta = await post({ id: 2, params: { notifications: { toolsListChanged: true } } });
    expect([noMeta.status, noMeta.body.error.code]).toEqual([400, -32602]);
    const wrongHeader = await post({ id: 3, params: { _meta: META, notifications: {} } }, { 'mcp-method': 'tools/list' });
    expect([wrongHeader.status, wrongHeader.body.error.code]).toEqual([400, -32020]);
    expect(g.gw.ctx.listen.count).toBe(0);
  });

  it('an empty filter is acknowledged as empty and sends nothing but keep-alives', async () => {
    const s = await listen({ notifications: {} }, { id: 'quiet' });
    expect((await s.next()).params.notifications).toEqual({});
    beta.failHealth = true;
    await g.gw.refresh();
    beta.failHealth = false;
    await g.gw.refresh();
    expect(await s.frame()).toEqual({ comment: true });
    s.close();
    await until(() => g.gw.ctx.listen.count === 0);
  });

  it('refuses one stream beyond MCP_MAX_LISTEN_STREAMS with 503, -32603', async () => {
    const open = await Promise.all([1, 2, 3].map((i) => listen({ notifications: { toolsListChanged: true } }, { id: i })));
    for (const s of open) await s.next();
    const refused = await listen({ notifications: { toolsListChanged: true } }, { id: 4 });
    expect(refused.res.status).toBe(503);
    expect(await refused.res.json()).toMatchObject({
      id: 4,
      error: { code: -32603, message: expect.stringMatching(/MCP_MAX_LISTEN_STREAMS=3/) },
    });
    for (const s of open) s.close();
    await until(() => g.gw.ctx.listen.count === 0);
  });

  it('serves the official v2 client: listen() is acknowledged and a tools/list_changed reaches its handler', async () => {
    const client = new V2Client({ name: 'v2-listener', version: '1.0.0' }, {
      versionNegotiation: { mode: { pin: V } },
    } as ConstructorParameters<typeof V2Client>[1]);
    const statuses: string[] = [];
    const recording: typeof fetch = async (url, init) => {
      const res = await fetch(url, init);
      statuses.push(`${new Headers(init?.headers).get('mcp-method')} ${res.status}`);
      return res;
    };
    await client.connect(new V2Transport(new URL(`${g.url}/mcp`), { fetch: recording }));
    let changed = 0;
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      changed += 1;
    });
    const sub = await client.listen({ toolsListChanged: true, resourcesListChanged: true });
    expect(sub.honoredFilter).toEqual({ toolsListChanged: true, resourcesListChanged: true });
    expect(g.gw.ctx.listen.count).toBe(1);
    beta.failHealth = true;
    await g.gw.refresh();
    await until(() => changed === 1);
    beta.failHealth = false;
    await g.gw.refresh();
    await until(() => changed === 2);
    await sub.close();
    expect(await sub.closed).toBe('local');
    await until(() => g.gw.ctx.listen.count === 0);
    await client.close();
    // Its close() also POSTs notifications/cancelled, which the gateway accepts (202).
    expect(statuses).toContain('subscriptions/listen 200');
    expect(statuses.filter((l) => !/ 20[02]$/.test(l))).toEqual([]);
  });

  it('2025-11-25 sessions get notifications/prompts/list_changed on their GET stream (prompts.listChanged)', async () => {
    const client = new Client({ name: 'v1', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
    expect(client.getServerCapabilities()?.prompts).toEqual({ listChanged: true });
    let notified = false;
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
      notified = true;
    });
    // The client opens its GET stream just after initialization: change the prompts until it hears one.
    for (let i = 0; i < 20 && !notified; i++) {
      prompts.push({ name: `extra-${i}` });
      await g.gw.refresh();
      await until(() => notified, 200).catch(() => undefined);
    }
    expect(notified).toBe(true);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('extra-0');
    await client.close();
  });

  it('on shutdown every stream gets the listen result (graceful closure) and ends; new ones are refused', async () => {
    const s = await listen({ notifications: { promptsListChanged: true } }, { id: 'last' });
    await s.next();
    await g.gw.mcp.close();
    expect(await s.next()).toEqual({
      jsonrpc: '2.0',
      id: 'last',
      result: {
        resultType: 'complete',
        _meta: { [SUB]: 'last', 'io.modelcontextprotocol/serverInfo': { name: 'mega-orchestrator', version: expect.any(String) } },
      },
    });
    expect(await s.next()).toBeUndefined();
    expect(g.gw.ctx.listen.count).toBe(0);
    const late = await listen({ notifications: { toolsListChanged: true } }, { id: 'late' });
    expect(late.res.status).toBe(503);
  });
});
