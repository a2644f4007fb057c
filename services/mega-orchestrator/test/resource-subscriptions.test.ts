/**
 * Resources of an MCP server behind the gateway, watched through the gateway: a 2025-era session's
 * resources/subscribe and a 2026-07-28 listen stream's resourceSubscriptions are one subscription at
 * the server (ResourceWatch), its notifications/resources/updated reach exactly the watchers, and
 * the last watcher to go unsubscribes there. Its resource list changes reach both eras too. The
 * server is the conformance fixture over stdio, which reports what it is subscribed to; then a
 * server of the 2026-07-28 revision (HTTP), where the gateway watches over one subscriptions/listen
 * stream of its own.
 */
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { COUNTER_URI, EXTRA_URI, startModernServer, type ModernServer } from './fixtures/modern-mcp-server';
import { openListen, post2026, sleep, startGateway, startGatewayWithStdioServer, until, type RunningGateway } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'conformance-fixture-server.ts');
const WATCHED = 'test://watched-resource';

/** Calls a fixture tool through the gateway (2026-07-28) and answers its text. */
async function toolText(url: string, name: string): Promise<string> {
  const body = (await (await post2026(url, 'tools/call', { name, arguments: {} })).json()) as {
    result: { content: { text: string }[] };
  };
  return body.result.content[0].text;
}

/** A 2025-era session with the gateway that records the resource updates and list changes it is told of. */
async function watcher(url: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`));
  const client = new Client({ name: 'watcher', version: '1.0.0' });
  const updates: string[] = [];
  let listChanges = 0;
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void (listChanges += 1));
  await client.connect(transport);
  // the session's GET stream, where updates arrive, opens right after initialize
  await sleep(100);
  return { client, transport, updates, listChanges: () => listChanges };
}

describe('resources of an MCP server behind the gateway, watched', () => {
  const tmp = tempDir('mcp-fleet-resource-watch-');
  let g: RunningGateway;

  beforeAll(async () => {
    g = await startGatewayWithStdioServer('watched', FIXTURE, tmp.dir, 'test_touch_resource');
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  const tool = (name: string) => toolText(g.url, name);
  const subscribedThere = async () => JSON.parse(await tool('test_subscriptions')) as string[];

  const session = () => watcher(g.url);

  it('2025 sessions: one subscription at the server for all, updates to the subscribers only, unsubscribed when the last one goes', async () => {
    const a = await session();
    const b = await session();
    const bystander = await session();
    await a.client.subscribeResource({ uri: WATCHED });
    await b.client.subscribeResource({ uri: WATCHED });
    expect(await subscribedThere()).toEqual([WATCHED]);
    expect(g.gw.ctx.watch.watchers(WATCHED)).toBe(2);

    expect(await tool('test_touch_resource')).toBe('version 2');
    await until(() => a.updates.length === 1 && b.updates.length === 1);
    expect(a.updates).toEqual([WATCHED]);
    expect((await a.client.readResource({ uri: WATCHED })).contents[0]).toMatchObject({ text: 'version 2' });

    await a.client.unsubscribeResource({ uri: WATCHED });
    expect(await subscribedThere()).toEqual([WATCHED]);
    await tool('test_touch_resource');
    await until(() => b.updates.length === 2);
    await sleep(100);
    expect(a.updates).toHaveLength(1);
    expect(bystander.updates).toEqual([]);

    // the last watcher's session ends: the gateway unsubscribes at the server
    await b.transport.terminateSession();
    await b.client.close();
    await until(() => g.gw.ctx.watch.size === 0);
    expect(await subscribedThere()).toEqual([]);
    await a.client.close();
    await bystander.client.close();
  });

  it('2026-07-28 listen streams: a server’s resource is acknowledged and watched while the stream is open; unknown ones are left out', async () => {
    // test://nowhere no list shows: asked of the only server behind the gateway, which agrees (as directly);
    // mega://nowhere is the gateway's own scheme and unknown
    const stream = await openListen(g.url, {
      notifications: { resourceSubscriptions: [WATCHED, 'test://nowhere', 'mega://nowhere', 'mega://health'] },
    });
    const ack = await stream.next();
    expect(ack.method).toBe('notifications/subscriptions/acknowledged');
    expect(ack.params.notifications.resourceSubscriptions).toEqual([WATCHED, 'test://nowhere', 'mega://health']);
    expect(await subscribedThere()).toEqual(['test://nowhere', WATCHED]);
    await tool('test_touch_resource');
    let update = await stream.next();
    while (update.params.uri !== WATCHED) update = await stream.next(); // mega://health may change too
    expect(update).toMatchObject({ method: 'notifications/resources/updated', params: { uri: WATCHED } });
    stream.close();
    await until(() => g.gw.ctx.watch.size === 0);
    expect(await subscribedThere()).toEqual([]);
  });

  it('subscribes again when the server restarts (a stdio child killed), and its updates keep coming', async () => {
    const s = await session();
    await s.client.subscribeResource({ uri: WATCHED });
    const upstream = g.gw.registry.get('watched')!.upstream as unknown as { pid?: number; starts: number };
    const starts = upstream.starts;
    process.kill(upstream.pid!, 'SIGKILL');
    await until(() => upstream.starts > starts, 10_000);
    let there: string[] = [];
    for (let i = 0; i < 50 && there.length === 0; i++) {
      there = await subscribedThere().catch(() => []);
      if (there.length === 0) await sleep(100);
    }
    expect(there).toEqual([WATCHED]);
    await tool('test_touch_resource');
    await until(() => s.updates.length === 1);
    await s.transport.terminateSession();
    await s.client.close();
    await until(() => g.gw.ctx.watch.size === 0);
  }, 20_000);

  it('tells both eras when the server’s resource list changes', async () => {
    const s = await session();
    const stream = await openListen(g.url, { notifications: { resourcesListChanged: true } });
    expect((await stream.next()).params.notifications).toEqual({ resourcesListChanged: true });
    expect(await tool('test_toggle_resource')).toBe('added test://extra-resource');
    expect(await stream.next()).toMatchObject({ method: 'notifications/resources/list_changed' });
    await until(() => s.listChanges() === 1);
    const listed = (await s.client.listResources()).resources.map((r) => r.uri);
    expect(listed).toContain('test://extra-resource');
    await tool('test_toggle_resource');
    stream.close();
    await s.client.close();
  });

  it('refuses what cannot be watched: an unknown URI (-32002), no session (-32602)', async () => {
    const s = await session();
    await expect(s.client.subscribeResource({ uri: 'mega://nowhere' })).rejects.toThrow(/Resource not found: mega:\/\/nowhere/);
    await s.client.close();
    const sessionless = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: WATCHED } }),
    });
    const body = (await sessionless.json()) as { error?: { code: number; message: string } };
    expect(body.error).toMatchObject({ code: -32602, message: expect.stringContaining('needs a session') });
    expect(g.gw.ctx.watch.size).toBe(0);
  });
});

describe('resources of a 2026-07-28 server behind the gateway, watched over its listen stream', () => {
  const tmp = tempDir('mcp-fleet-modern-watch-');
  let server: ModernServer;
  let g: RunningGateway;

  beforeAll(async () => {
    server = await startModernServer({ resources: true });
    const mcp = { transport: 'streamable-http' as const, url: server.url, headers: {}, protocolVersion: '2026-07-28' as const };
    g = await startGateway([{ id: 'modern', url: server.url, mcp }], tmp.dir);
  });
  afterAll(async () => {
    await g?.stop();
    await server?.stop();
    tmp.cleanup();
  });

  const tool = (name: string) => toolText(g.url, name);
  const streamsThere = () => server.listening().map((f) => JSON.stringify(f));

  it('listens for its list changes at once, and for a resource while someone watches it: one stream, replaced when that changes', async () => {
    await until(() => streamsThere().length === 1);
    expect(server.listening()).toEqual([{ resourcesListChanged: true }]);

    const s = await watcher(g.url);
    await s.client.subscribeResource({ uri: COUNTER_URI });
    await until(() => streamsThere().length === 1 && streamsThere()[0].includes(COUNTER_URI));
    expect(server.listening()).toEqual([{ resourcesListChanged: true, resourceSubscriptions: [COUNTER_URI] }]);

    expect(await tool('modern_bump')).toBe('count 2');
    await until(() => s.updates.length === 1);
    expect(s.updates).toEqual([COUNTER_URI]);
    expect((await s.client.readResource({ uri: COUNTER_URI })).contents[0]).toMatchObject({ text: 'count 2' });

    // a 2026-07-28 client watches the same resource: still one subscription at the server
    const stream = await openListen(g.url, { notifications: { resourceSubscriptions: [COUNTER_URI] } });
    expect((await stream.next()).params.notifications).toEqual({ resourceSubscriptions: [COUNTER_URI] });
    expect(g.gw.ctx.watch.watchers(COUNTER_URI)).toBe(2);
    expect(streamsThere()).toHaveLength(1);
    await tool('modern_bump');
    expect(await stream.next()).toMatchObject({ method: 'notifications/resources/updated', params: { uri: COUNTER_URI } });
    await until(() => s.updates.length === 2);

    stream.close();
    await s.client.unsubscribeResource({ uri: COUNTER_URI });
    await until(() => g.gw.ctx.watch.size === 0);
    await until(() => streamsThere().length === 1 && !streamsThere()[0].includes(COUNTER_URI));
    await tool('modern_bump');
    await sleep(100);
    expect(s.updates).toHaveLength(2);
    await s.client.close();
  });

  it('tells both eras when its resource list changes, pushed rather than polled', async () => {
    const s = await watcher(g.url);
    const stream = await openListen(g.url, { notifications: { resourcesListChanged: true } });
    expect((await stream.next()).params.notifications).toEqual({ resourcesListChanged: true });
    expect(await tool('modern_toggle_resource')).toBe(`added ${EXTRA_URI}`);
    expect(await stream.next()).toMatchObject({ method: 'notifications/resources/list_changed' });
    await until(() => s.listChanges() >= 1);
    expect((await s.client.listResources()).resources.map((r) => r.uri)).toContain(EXTRA_URI);
    await tool('modern_toggle_resource');
    stream.close();
    await s.client.close();
  });

  it('listens again when the server ends the stream, and tells the watchers their resources may have changed', async () => {
    const s = await watcher(g.url);
    await s.client.subscribeResource({ uri: COUNTER_URI });
    await until(() => streamsThere().some((f) => f.includes(COUNTER_URI)));
    server.dropListeners();
    await until(() => streamsThere().length === 0);
    await until(() => streamsThere().some((f) => f.includes(COUNTER_URI)), 10_000);
    await until(() => s.updates.length >= 1);
    expect(s.updates).toContain(COUNTER_URI);
    const before = s.updates.length;
    await tool('modern_bump');
    await until(() => s.updates.length > before);
    await s.transport.terminateSession();
    await s.client.close();
    await until(() => g.gw.ctx.watch.size === 0);
    await until(() => streamsThere().length === 1 && !streamsThere()[0].includes(COUNTER_URI));
  }, 20_000);
});

describe('a 2026-07-28 server that offers list changes but refuses subscriptions/listen', () => {
  const tmp = tempDir('mcp-fleet-modern-nolisten-');
  let server: ModernServer;
  let g: RunningGateway;

  afterAll(async () => {
    await g?.stop();
    await server?.stop();
    tmp.cleanup();
  });

  it('is asked once, not again and again; its lists are still read and a watcher is refused with the reason', async () => {
    server = await startModernServer({ resources: true, listen: false });
    const mcp = { transport: 'streamable-http' as const, url: server.url, headers: {}, protocolVersion: '2026-07-28' as const };
    g = await startGateway([{ id: 'modern', url: server.url, mcp }], tmp.dir);
    await until(() => server.methods.includes('subscriptions/listen'));
    await sleep(1500); // the first retry would come after 1 s
    expect(server.methods.filter((m) => m === 'subscriptions/listen')).toHaveLength(1);
    expect(await toolText(g.url, 'modern_bump')).toBe('count 2');
    const s = await watcher(g.url);
    // (one "MCP error" prefix, the client's own: the gateway sends the message without one)
    await expect(s.client.subscribeResource({ uri: COUNTER_URI })).rejects.toThrow(
      /^MCP error -32602: modern:\/\/counter is served by modern, behind the gateway, which offers no resource subscriptions/,
    );
    expect(g.gw.ctx.watch.size).toBe(0);
    await s.client.close();
  });
});
