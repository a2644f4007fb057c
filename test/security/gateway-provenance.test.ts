/**
 * Class: spoofed updates and answers (issue 33, item 8). A server behind the gateway could announce
 * notifications/resources/updated for another server's URIs or the gateway's own mega:// resources,
 * and the gateway relayed it; a resources/read answer naming a URI other than the one asked for was
 * passed on. Now an update is passed on only from the server the gateway subscribed to that URI at
 * (the one that serves it: listed it, or matched it with a template); everything else is dropped and
 * counted in /services. A read answered with content of another URI is that call's UPSTREAM_ERROR
 * (-32012), whatever the other URI is.
 *
 * Malicious servers over HTTP and stdio, both protocol eras; the official SDK client (a 2025-11-25
 * session) and a 2026-07-28 subscriptions/listen stream as the victims, authorization off and on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { openListen, post2026 } from '../../services/mega-orchestrator/test/helpers';
import { startMaliciousServer, type Behaviour, type MaliciousServer } from './fixtures/malicious-catalog-server';
import { httpEntry, sleep, startCatalogGateway, stdioEntry, until, victim, type CatalogGateway } from './fixtures/catalog-gateway';

const tmp = tempDir('mcp-fleet-provenance-');
const EVERYONE = ['a://notes', 'b://secret', 'c://doc', 'd://page', 'mega://services', 'mega://health', 'mega://schema', 'z://nobody'];
const server = (era: '2025' | '2026', own: string, readAs: Record<string, string>): Behaviour => ({
  era,
  resources: [{ uri: own, name: 'own' }, ...Object.keys(readAs).map((uri) => ({ uri, name: 'spoofing' }))],
  readAs,
  // each announces every URI there is: its own, the others', the gateway's, one nobody serves
  announce: EVERYONE,
});

let a: MaliciousServer;
let c: MaliciousServer;
let g: CatalogGateway;
const key = newApiKey('agent', ['tools:all']);
const auth = { authorization: `Bearer ${key.key}` };

beforeAll(async () => {
  a = await startMaliciousServer(server('2025', 'a://notes', { 'a://readme': 'mega://services', 'a://other': 'b://secret' }));
  c = await startMaliciousServer(server('2026', 'c://doc', { 'c://readme': 'a://notes' }));
  fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([key.entry]));
  g = await startCatalogGateway(
    path.join(tmp.dir, 'gw'),
    {
      mcpServers: {
        a: httpEntry(a.url, { era: '2025' }),
        b: stdioEntry(server('2025', 'b://secret', { 'b://readme': 'b://secret/../a' })),
        c: httpEntry(c.url, { era: '2026' }),
        d: stdioEntry(server('2026', 'd://page', { 'd://readme': 'D://PAGE' })),
      },
    },
    (gw) => ['a', 'b', 'c', 'd'].every((id) => gw.registry.get(id)!.healthy),
  );
}, 60_000);

afterAll(async () => {
  await g.stop();
  await a.stop();
  await c.stop();
  tmp.cleanup();
});

describe('resources/updated', () => {
  it('a 2025 session hears each URI only from the server that serves it, never mega:// or a stranger’s URI from another server', async () => {
    const client = await victim(g.url);
    const heard: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void heard.push(n.params.uri));
    for (const uri of ['a://notes', 'b://secret', 'c://doc', 'd://page', 'mega://services', 'mega://health'])
      await client.subscribeResource({ uri });
    const before = Object.fromEntries(['a', 'b', 'c', 'd'].map((id) => [id, g.gw.registry.get(id)!.provenance.refusedUpdates]));
    // every server announces every URI (HTTP and stdio, both eras)
    for (const id of ['a', 'b', 'c', 'd']) await client.callTool({ name: `${id}__announce`, arguments: {} });
    await until('the legitimate updates', () => ['a://notes', 'b://secret', 'c://doc', 'd://page'].every((u) => heard.includes(u)));
    await sleep(300);
    expect([...heard].sort()).toEqual(['a://notes', 'b://secret', 'c://doc', 'd://page']);
    await client.close();
    // each server's seven other announcements were dropped and counted
    for (const id of ['a', 'b', 'c', 'd']) expect([id, g.gw.registry.get(id)!.provenance.refusedUpdates - before[id]]).toEqual([id, 7]);
    const entry = ((await (await fetch(`${g.url}/services`)).json()) as { services: Record<string, any>[] }).services.find(
      (s) => s.id === 'a',
    )!;
    expect(entry.provenance.refusedUpdates).toBeGreaterThanOrEqual(7);
    expect(entry.notice).toMatch(/of URIs it does not own refused/);
  }, 30_000);

  it('a 2026-07-28 listen stream likewise', async () => {
    const stream = await openListen(g.url, {
      notifications: { resourceSubscriptions: ['a://notes', 'c://doc', 'mega://health', 'mega://services'] },
    });
    const ack = await stream.next();
    expect(ack.method).toBe('notifications/subscriptions/acknowledged');
    const heard: string[] = [];
    void (async () => {
      for (let m = await stream.next(); m; m = await stream.next().catch(() => undefined))
        if (m.method === 'notifications/resources/updated') heard.push(m.params.uri);
    })();
    for (const tool of ['c__announce', 'd__announce', 'a__announce', 'b__announce'])
      await post2026(g.url, 'tools/call', { name: tool, arguments: {} }, { id: tool });
    await until('the legitimate updates', () => heard.includes('a://notes') && heard.includes('c://doc'));
    await sleep(300);
    stream.close();
    expect([...heard].sort()).toEqual(['a://notes', 'c://doc']);
  }, 30_000);
});

describe('resources/read', () => {
  it('an answer naming another URI is the call’s UPSTREAM_ERROR (-32012), in a 2025 session, with authorization off and on', async () => {
    const spoofs = ['a://readme', 'a://other', 'b://readme', 'c://readme', 'd://readme'];
    const sessions = [await victim(g.url)];
    const authed = await startCatalogGateway(
      path.join(tmp.dir, 'authed'),
      {
        mcpServers: { a: httpEntry(a.url, { era: '2025' }), c: httpEntry(c.url, { era: '2026' }) },
        overrides: { API_KEYS_FILE: path.join(tmp.dir, 'keys.json') },
      },
      (gw) => ['a', 'c'].every((id) => gw.registry.get(id)!.healthy),
    );
    try {
      sessions.push(await victim(authed.url, auth));
      for (const [i, client] of sessions.entries()) {
        for (const uri of i === 0 ? spoofs : ['a://readme', 'c://readme']) {
          const err = await client.readResource({ uri }).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect([uri, err instanceof McpError ? err.code : err]).toEqual([uri, -32012]);
          expect((err as Error).message).toMatch(/with content for another URI .*the gateway refuses it/);
        }
        // its own resource reads fine
        const own = await client.readResource({ uri: 'a://notes' });
        expect(own.contents).toEqual([expect.objectContaining({ uri: 'a://notes', text: 'content of a://notes' })]);
        await client.close();
      }
    } finally {
      await authed.stop();
    }
  }, 60_000);

  it('the same over 2026-07-28', async () => {
    for (const uri of ['c://readme', 'a://readme', 'd://readme']) {
      const body = (await (await post2026(g.url, 'resources/read', { uri }, { headers: { 'mcp-name': uri } })).json()) as {
        error?: { code: number; message: string };
      };
      expect([uri, body.error?.code]).toEqual([uri, -32012]);
    }
    const own = (await (await post2026(g.url, 'resources/read', { uri: 'c://doc' }, { headers: { 'mcp-name': 'c://doc' } })).json()) as {
      result: { contents: { uri: string }[] };
    };
    expect(own.result.contents.map((x) => x.uri)).toEqual(['c://doc']);
    expect(g.gw.registry.get('c')!.provenance.refusedReads).toBeGreaterThan(0);
  });
});
