/**
 * Class: a server's streams that outlive their call (issue 33, item 3). A malicious MCP server behind
 * the gateway (Streamable HTTP, both eras: test/security/fixtures/hostile-transport-server.ts) keeps
 * an event stream open after the call it belongs to: dripping notifications and never answering
 * (the call times out), dripping after its answer, priming a resumable stream and dripping on, and
 * resuming that stream after the call ended. Its caller gives up (the official v1 SDK client's
 * abort, a 2026-07-28 request cut by its v2-era client, a REST client that hangs up). Every way, the
 * server sees the gateway close that stream at once, no reconnection reaches it, and the
 * legitimate uses (an answer, a resumption the server asks for) still work. The gateway runs with
 * authorization on (two API keys: a victim and an attacker beside it) and off.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { post2026, startGateway, until, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';
import { startHostileServer, type HostileServer } from './fixtures/hostile-transport-server';

const TIMEOUT_MS = 1000;
/** How soon after its call ended a stream must be closed (the gateway closes it at once; this is scheduling slack). */
const PROMPT_MS = 400;

const tmp = tempDir('mcp-fleet-stream-lifetime-');
const hostile: Record<'2025' | '2026', HostileServer> = {} as never;
let authed: RunningGateway;
let open: RunningGateway;
const keys = { victim: '', attacker: '' };

const spec = (era: '2025' | '2026') => ({
  id: `hostile${era.slice(2)}`,
  url: hostile[era].url,
  mcp: {
    transport: 'streamable-http' as const,
    url: hostile[era].url,
    headers: {},
    ...(era === '2026' ? { protocolVersion: '2026-07-28' as const } : {}),
  },
});
const tool = (era: '2025' | '2026', name: string) => `hostile${era.slice(2)}__${name}`;

beforeAll(async () => {
  hostile['2025'] = await startHostileServer('2025');
  hostile['2026'] = await startHostileServer('2026');
  const victim = newApiKey('victim', ['tools:all']);
  const attacker = newApiKey('attacker', ['tools:all']);
  keys.victim = victim.key;
  keys.attacker = attacker.key;
  fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([victim.entry, attacker.entry]));
  const base = {
    DOWNSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
    DOWNSTREAM_MAX_RESPONSE_BYTES: String(4 * 1024 * 1024),
    HEALTH_POLL_MS: '600000',
    AUDIT_LOG_FILE: 'off',
  };
  // (the servers' discovery has a 1 s limit here: on a loaded machine its first try can miss)
  const ready = [tool('2025', 'drip'), tool('2026', 'drip')];
  authed = await startGateway(
    [spec('2025'), spec('2026')],
    path.join(tmp.dir, 'authed'),
    { ...base, API_KEYS_FILE: path.join(tmp.dir, 'keys.json') },
    { ready },
  );
  open = await startGateway([spec('2025'), spec('2026')], path.join(tmp.dir, 'open'), base, { ready });
});

afterAll(async () => {
  await authed?.stop();
  await open?.stop();
  for (const h of Object.values(hostile)) await h?.stop();
  tmp.cleanup();
});

const MODES = ['auth on', 'auth off'] as const;
/** The gateway of a mode, and the key its caller (the attacker beside the victim) uses there. */
const gatewayOf = (mode: (typeof MODES)[number]) => (mode === 'auth on' ? { g: authed, key: keys.attacker } : { g: open, key: undefined });

/** A native REST call; `signal` lets the caller hang up. */
async function native(g: RunningGateway, key: string | undefined, name: string, args: Record<string, unknown> = {}, signal?: AbortSignal) {
  const res = await fetch(`${g.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ tool: name, arguments: args }),
    signal,
  });
  return { status: res.status, body: (await res.json()) as Record<string, any>, at: Date.now() };
}

/** Waits for the next close of `name`'s stream at the server after `count` earlier ones; its time. */
async function closedAt(h: HostileServer, name: string, count: number): Promise<number> {
  await until(() => (h.stats.closed[name]?.length ?? 0) > count, 5000);
  return h.stats.closed[name]![count];
}
const closes = (h: HostileServer, name: string) => h.stats.closed[name]?.length ?? 0;
/** Runs a call and waits for the server to see the next stream of `name` close: the call's outcome, and when that was. */
async function callAndClose<T>(h: HostileServer, name: string, act: () => Promise<T>): Promise<{ out: T; closed: number }> {
  const before = closes(h, name);
  const out = await act();
  return { out, closed: await closedAt(h, name, before) };
}

describe.each(['2025', '2026'] as const)('a %s-era server behind the gateway', (era) => {
  it.each(MODES)('%s: a call that never answers times out, and its dripping stream is closed then', async (mode) => {
    const { g, key } = gatewayOf(mode);
    const h = hostile[era];
    const { out, closed } = await callAndClose(h, 'drip', () => native(g, key, tool(era, 'drip')));
    expect(out.status).toBe(504);
    expect(out.body).toMatchObject({ success: false, code: 'TIMEOUT' });
    expect(closed - out.at).toBeLessThan(PROMPT_MS);
    await until(() => h.stats.open === 0, 2000);
  });

  it('a call whose answer never starts (no headers) times out, and its request is given up at the server', async () => {
    const h = hostile[era];
    const { out, closed } = await callAndClose(h, 'silent', () => native(authed, keys.attacker, tool(era, 'silent')));
    expect(out.body.code).toBe('TIMEOUT');
    expect(closed - out.at).toBeLessThan(PROMPT_MS);
  });

  it.each(MODES)('%s: a stream that drips on after its answer is closed once the answer is read', async (mode) => {
    const { g, key } = gatewayOf(mode);
    const h = hostile[era];
    const { out, closed } = await callAndClose(h, 'answer_then_drip', () => native(g, key, tool(era, 'answer_then_drip')));
    expect(out.status).toBe(200);
    expect(out.body.result).toEqual({ text: 'answered, and I go on talking' });
    expect(closed - out.at).toBeLessThan(PROMPT_MS);
  });

  it('a primed (resumable) stream of a call that timed out is closed and not resumed: no reconnection reaches the server', async () => {
    const h = hostile[era];
    const resumptions = h.stats.resumptions.length;
    const { out, closed } = await callAndClose(h, 'primed_drip', () => native(open, undefined, tool(era, 'primed_drip')));
    expect(out.body.code).toBe('TIMEOUT');
    expect(closed - out.at).toBeLessThan(PROMPT_MS);
    // the server asked for reconnection at once (retry: 0); nothing came back for it
    await new Promise((r) => setTimeout(r, 500));
    expect(h.stats.resumptions.slice(resumptions)).toEqual([]);
    expect(h.stats.open).toBe(0);
  });

  it('a REST caller that hangs up: the call is aborted and the server stream closed at once', async () => {
    const h = hostile[era];
    const before = closes(h, 'drip');
    const ac = new AbortController();
    const pending = native(authed, keys.attacker, tool(era, 'drip'), {}, ac.signal).catch((err: Error) => err);
    await until(() => h.stats.open > 0, 2000);
    const gaveUp = Date.now();
    ac.abort();
    expect(String(await pending)).toMatch(/abort/i);
    const closed = await closedAt(h, 'drip', before);
    expect(closed - gaveUp).toBeLessThan(PROMPT_MS);
  });

  it('the legitimate use: a stream the server closes before answering is resumed, and the answer arrives', async () => {
    const h = hostile[era];
    const resumptions = h.stats.resumptions.length;
    const out = await native(authed, keys.victim, tool(era, 'resumable'));
    expect(out.status).toBe(200);
    expect(out.body.result).toEqual({ text: 'resumed and answered' });
    expect(h.stats.resumptions.slice(resumptions)).toEqual([expect.stringMatching(/^resume-/)]);
    expect((await native(authed, keys.victim, tool(era, 'echo'), { text: 'still here' })).body.result).toEqual({ text: 'still here' });
  });
});

describe('callers that give up, through the official clients', () => {
  it('the v1 SDK client (a 2025-11-25 session) aborts its call: the server stream of the call closes', async () => {
    for (const era of ['2025', '2026'] as const) {
      const h = hostile[era];
      const client = new Client({ name: 'impatient', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${authed.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${keys.attacker}` } },
        }),
      );
      const before = closes(h, 'drip');
      const ac = new AbortController();
      const call = client.callTool({ name: tool(era, 'drip'), arguments: {} }, undefined, { signal: ac.signal }).catch((err: Error) => err);
      await until(() => h.stats.open > 0, 2000);
      const gaveUp = Date.now();
      ac.abort('enough');
      expect(await call).toBeInstanceOf(Error);
      const closed = await closedAt(h, 'drip', before);
      expect([era, closed - gaveUp < PROMPT_MS]).toEqual([era, true]);
      // the session goes on: a normal call answers
      const ok = await client.callTool({ name: tool(era, 'echo'), arguments: { text: 'ok' } });
      expect(ok.content).toEqual([{ type: 'text', text: 'ok' }]);
      await client.close();
    }
  });

  it('a 2026-07-28 request whose client cuts it: the server stream closes', async () => {
    const h = hostile['2026'];
    const before = closes(h, 'drip');
    const ac = new AbortController();
    const pending = post2026(open.url, 'tools/call', { name: tool('2026', 'drip'), arguments: {} }, { signal: ac.signal }).then(
      (r) => r.text(),
      (err: Error) => err,
    );
    await until(() => h.stats.open > 0, 2000);
    const gaveUp = Date.now();
    ac.abort();
    expect(String(await pending)).toMatch(/abort/i);
    const closed = await closedAt(h, 'drip', before);
    expect(closed - gaveUp).toBeLessThan(PROMPT_MS);
  });
});

describe('the gateway shutting down', () => {
  it('closes every stream it holds at the servers', async () => {
    const g = await startGateway([spec('2025'), spec('2026')], path.join(tmp.dir, 'short'), {
      DOWNSTREAM_TIMEOUT_MS: '60000',
      HEALTH_POLL_MS: '600000',
    });
    const pending = [
      native(g, undefined, tool('2025', 'drip')).catch(() => undefined),
      native(g, undefined, tool('2026', 'drip')).catch(() => undefined),
    ];
    await until(() => hostile['2025'].stats.open > 0 && hostile['2026'].stats.open > 0, 3000);
    await g.stop();
    await Promise.all(pending);
    await until(() => hostile['2025'].stats.open === 0 && hostile['2026'].stats.open === 0, 3000);
  });
});
