/**
 * Class: one client opening MCP sessions evicts other clients' sessions (issue 33, item 9: up to
 * MCP_MAX_SESSIONS, the least recently used session of anyone was closed). Now a session counts
 * against its owner's share first (MCP_MAX_SESSIONS_PER_OWNER: a principal with authorization on,
 * the client address without it, read through TRUST_PROXY behind a proxy), the least recently
 * used of that owner closed beyond it; beyond MCP_MAX_SESSIONS the owner holding the most gives one
 * up. Attackers open sessions in several ways (raw initialize, a 2025-03-26 batch, the official v1
 * SDK client, forged X-Forwarded-For) with an API key, from other loopback addresses, behind a proxy;
 * the victims' sessions (official v1 SDK clients) all stay usable, and the attacker keeps the
 * share it is allowed, its own least recently used ones closed first.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import {
  alphaTools,
  startDownstream,
  startGateway,
  type Downstream,
  type RunningGateway,
} from '../../services/mega-orchestrator/test/helpers';

const tmp = tempDir('mcp-fleet-fair-share-');
let alpha: Downstream;
const gateways: RunningGateway[] = [];
const keys = { victim: '', third: '', attacker: '' };
const INIT = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fair', version: '0' } },
};

beforeAll(async () => {
  alpha = await startDownstream('alpha-mcp', alphaTools);
  const entries = (['victim', 'third', 'attacker'] as const).map((name) => {
    const k = newApiKey(name, ['tools:all']);
    keys[name] = k.key;
    return k.entry;
  });
  fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify(entries));
});

afterAll(async () => {
  for (const g of gateways) await g.stop();
  await alpha.stop();
  tmp.cleanup();
});

async function gateway(name: string, overrides: Record<string, string>): Promise<RunningGateway> {
  const g = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], path.join(tmp.dir, name), {
    HEALTH_POLL_MS: '600000',
    AUDIT_LOG_FILE: 'off',
    ...overrides,
  });
  gateways.push(g);
  return g;
}

interface From {
  key?: string;
  /** The loopback address the client's connections come from. */
  local?: string;
  headers?: Record<string, string>;
}

/** One raw request to /mcp from `from`: its status, session id header and body. */
function raw(url: string, from: From, body: unknown, sessionId?: string): Promise<{ status: number; sessionId?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/mcp`, {
      method: 'POST',
      localAddress: from.local,
      agent: false,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(from.key ? { authorization: `Bearer ${from.key}` } : {}),
        ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } : {}),
        ...from.headers,
      },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          sessionId: res.headers['mcp-session-id'] as string | undefined,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Opens a session by a raw initialize (or, `batch`, the 2025-03-26 way: initialize in a batch). */
async function openRaw(url: string, from: From, batch = false): Promise<string> {
  const out = batch ? await raw(url, { ...from, headers: { ...from.headers } }, [INIT]) : await raw(url, from, INIT);
  expect(out.status).toBe(200);
  return out.sessionId!;
}

/** Whether the session answers (a live session) or is unknown (404, -32010). */
async function alive(url: string, from: From, sessionId: string): Promise<boolean> {
  const out = await raw(url, from, { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }, sessionId);
  if (out.status === 404) return false;
  expect(out.status).toBe(200);
  return true;
}

/** A victim: the official v1 SDK client, its connections from `from`. */
async function sdkClient(url: string, from: From) {
  const dispatcher = from.local ? new Agent({ connect: { localAddress: from.local } }) : undefined;
  const viaAddress = ((u: string | URL, init?: RequestInit) =>
    undiciFetch(u, { ...(init as object), ...(dispatcher ? { dispatcher } : {}) } as never)) as unknown as typeof fetch;
  const client = new Client({ name: 'victim', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { ...(from.key ? { authorization: `Bearer ${from.key}` } : {}), ...from.headers } },
    fetch: viaAddress,
  });
  await client.connect(transport);
  return {
    sessionId: transport.sessionId!,
    works: async () => {
      const r = await client.callTool({ name: 'echo', arguments: { text: 'mine' } });
      return (r.structuredContent as { text?: string } | undefined)?.text === 'mine';
    },
    close: async () => {
      await client.close();
      await dispatcher?.close();
    },
  };
}

describe('with authorization on: a principal’s share', () => {
  it("an attacker's key opening twenty sessions closes only its own; the victims' clients go on", async () => {
    const g = await gateway('authed', {
      API_KEYS_FILE: path.join(tmp.dir, 'keys.json'),
      MCP_MAX_SESSIONS_PER_OWNER: '3',
      MCP_MAX_SESSIONS: '6',
    });
    const victims = [
      await sdkClient(g.url, { key: keys.victim }),
      await sdkClient(g.url, { key: keys.victim }),
      await sdkClient(g.url, { key: keys.third }),
      await sdkClient(g.url, { key: keys.third }),
    ];
    const attacker = { key: keys.attacker };
    const opened: string[] = [];
    for (let i = 0; i < 20; i++) opened.push(await openRaw(g.url, attacker, i % 2 === 1));
    // the victims' sessions: every one still answers
    for (const v of victims) expect(await v.works()).toBe(true);
    // the attacker: 4 victims' sessions + its own within MCP_MAX_SESSIONS (6): its newest two
    const live = [];
    for (const id of opened) live.push(await alive(g.url, attacker, id));
    expect(live.slice(-2)).toEqual([true, true]);
    expect(live.filter(Boolean)).toHaveLength(2);
    expect(g.gw.mcp.count).toBe(6);
    for (const v of victims) await v.close();
  });

  it("beyond its share, a principal's least recently used session goes first, not its oldest", async () => {
    const g = await gateway('lru', { API_KEYS_FILE: path.join(tmp.dir, 'keys.json'), MCP_MAX_SESSIONS_PER_OWNER: '3' });
    const me = { key: keys.attacker };
    const first = await openRaw(g.url, me);
    const others: string[] = [];
    for (let i = 0; i < 5; i++) {
      others.push(await openRaw(g.url, me));
      // the first session is in use all along
      expect(await alive(g.url, me, first)).toBe(true);
    }
    const states = [];
    for (const id of others) states.push(await alive(g.url, me, id));
    expect(states).toEqual([false, false, false, true, true]);
    // another principal's sessions do not count against it
    const victim = await sdkClient(g.url, { key: keys.victim });
    expect(await alive(g.url, me, first)).toBe(true);
    expect(await victim.works()).toBe(true);
    await victim.close();
  });
});

describe('without authorization: a client address’s share', () => {
  it('sessions from another address, however opened, never close those of 127.0.0.1', async () => {
    const g = await gateway('open', { MCP_MAX_SESSIONS_PER_OWNER: '3', MCP_MAX_SESSIONS: '50' });
    const victim = await sdkClient(g.url, { local: '127.0.0.1' });
    const victim2 = await sdkClient(g.url, { local: '127.0.0.1' });
    const opened: string[] = [];
    // raw, batched, and with a forged X-Forwarded-For naming the victim's address (no TRUST_PROXY: ignored)
    for (let i = 0; i < 10; i++)
      opened.push(
        await openRaw(g.url, { local: '127.0.0.2', headers: i % 3 === 2 ? { 'x-forwarded-for': '127.0.0.1' } : {} }, i % 3 === 1),
      );
    for (let i = 0; i < 5; i++) opened.push(await openRaw(g.url, { local: '127.0.0.3' }));
    expect(await victim.works()).toBe(true);
    expect(await victim2.works()).toBe(true);
    const live = [];
    for (const id of opened) live.push(await alive(g.url, {}, id));
    // each attacking address keeps its newest three
    expect(live).toEqual([...Array(7).fill(false), true, true, true, false, false, true, true, true]);
    await victim.close();
    await victim2.close();
  });

  it('behind a proxy (TRUST_PROXY), each forwarded client has its own share, on the hot path too', async () => {
    const g = await gateway('proxied', { MCP_MAX_SESSIONS_PER_OWNER: '2', TRUST_PROXY: 'loopback' });
    const victim = await sdkClient(g.url, { headers: { 'x-forwarded-for': '10.0.0.1' } });
    const opened: string[] = [];
    for (let i = 0; i < 6; i++) opened.push(await openRaw(g.url, { headers: { 'x-forwarded-for': '10.0.0.66' } }));
    expect(await victim.works()).toBe(true);
    const live = [];
    for (const id of opened) live.push(await alive(g.url, {}, id));
    expect(live).toEqual([false, false, false, false, true, true]);
    await victim.close();
  });
});
