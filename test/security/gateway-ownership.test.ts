/**
 * Class: reaching or writing what another caller created through the gateway (issue 33, item 1):
 * call history and its contexts, MCP sessions and their resumable streams. The base rules are tested
 * in sessions-and-budgets.test.ts (issue 27); here the ways in that remain once ownership exists.
 * Authorization on (two API keys, a victim and an attacker) and off, one session store shared by
 * both gateways; the official v1 SDK client as the victim, hand-written requests as the attacker:
 *
 * - writing into the victim's history by naming its MCP session's id: as a native `session_id`
 *   (with a context_id), as a sessionless 2025 request's `_meta.session_id`, as a 2026-07-28
 *   request's: each lands in the attacker's own namespace, never in the victim's;
 * - reading it back under every spelling of the stored key, from either gateway;
 * - resuming the victim's tool-call event stream (its Last-Event-ID) from the attacker's session;
 * - listing: there is no route that enumerates sessions;
 * - a malicious MCP server (test/security/fixtures/hostile-transport-server.ts) announcing that a URL
 *   elicitation another server put to the victim's session finished: the victim is not told, and
 *   the real server's notice still reaches it.
 * Every attempt is answered as for an id that never existed, and the victim's own use goes on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { createServiceApp, defineTool } from '@mcp-fleet/kit';
import { serve, tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitationCompleteNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import {
  META_2026,
  initSession,
  post2026,
  sleep,
  startGateway,
  until,
  type RunningGateway,
} from '../../services/mega-orchestrator/test/helpers';
import { startHostileServer } from './fixtures/hostile-transport-server';

const REPO = path.resolve(__dirname, '../..');
const ASKING_SERVER = path.join(REPO, 'services', 'mega-orchestrator', 'test', 'fixtures', 'conformance-fixture-server.ts');

const tmp = tempDir('mcp-fleet-ownership-');
const keys = { victim: '', attacker: '' };
let authed: RunningGateway;
let open: RunningGateway;
let stopService: () => Promise<void>;
const as = (key: string | undefined): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});

beforeAll(async () => {
  const service = createServiceApp({
    service: 'notes-mcp',
    config: testConfig,
    logger: testLogger('notes-mcp'),
    defaultMetrics: false,
    tools: [
      defineTool({
        name: 'note',
        description: 'Keeps a note (echoes it).',
        input: z.object({ text: z.string().max(200) }).strict(),
        annotations: { readOnlyHint: true },
        handler: ({ text }) => ({ text }),
      }),
      defineTool({
        name: 'slow_steps',
        description: 'Reports five steps, 150 ms apart.',
        input: z.object({}).strict(),
        annotations: { readOnlyHint: true },
        handler: async (_args, ctx) => {
          for (let i = 1; i <= 5; i++) {
            await sleep(150, ctx.signal);
            ctx.progress(i, 5, `step ${i}`);
          }
          return { done: true };
        },
      }),
    ],
  });
  const running = await serve(service.app);
  stopService = async () => {
    running.server.closeAllConnections();
    await running.stop();
  };
  const victim = newApiKey('victim', ['tools:all']);
  const attacker = newApiKey('attacker', ['tools:all']);
  keys.victim = victim.key;
  keys.attacker = attacker.key;
  fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([victim.entry, attacker.entry]));
  const spec = [{ id: 'notes-mcp', url: running.url }];
  const shared = {
    SESSION_DB: path.join(tmp.dir, 'contexts.sqlite'),
    HEALTH_POLL_MS: '600000',
    AUDIT_LOG_FILE: 'off',
    MCP_SSE_RETRY_MS: '100',
  };
  authed = await startGateway(spec, path.join(tmp.dir, 'authed'), { ...shared, API_KEYS_FILE: path.join(tmp.dir, 'keys.json') });
  open = await startGateway(spec, path.join(tmp.dir, 'open'), shared);
});

afterAll(async () => {
  await authed?.stop();
  await open?.stop();
  await stopService?.();
  tmp.cleanup();
});

async function victimClient(g: RunningGateway, key: string | undefined) {
  const client = new Client({ name: 'victim', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: as(key) } });
  await client.connect(transport);
  return { client, sessionId: transport.sessionId! };
}

const contexts = async (g: RunningGateway, key: string | undefined, id: string) => {
  const res = await fetch(`${g.url}/debug/contexts/${encodeURIComponent(id)}`, { headers: as(key) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};
const texts = (body: Record<string, any>) => JSON.stringify(body.calls ?? []);

describe('writing into another principal’s history by naming its session', () => {
  it('a native session_id, a 2025 _meta.session_id and a 2026-07-28 one naming the victim’s MCP session land in the attacker’s own', async () => {
    const victim = await victimClient(authed, keys.victim);
    await victim.client.callTool({ name: 'note', arguments: { text: 'victim-private' } });
    const sid = victim.sessionId;
    // native, with a context
    await fetch(`${authed.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as(keys.attacker) },
      body: JSON.stringify({ tool: 'note', arguments: { text: 'forged-native' }, session_id: sid, context_id: 'planted' }),
    });
    // a sessionless 2025 JSON-RPC request
    await fetch(`${authed.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...as(keys.attacker) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'note', arguments: { text: 'forged-2025' }, _meta: { session_id: sid, context_id: 'planted' } },
      }),
    });
    // a 2026-07-28 request
    await post2026(
      authed.url,
      'tools/call',
      { name: 'note', arguments: { text: 'forged-2026' } },
      {
        meta: { ...META_2026, session_id: sid },
        headers: as(keys.attacker),
      },
    );
    const mine = await contexts(authed, keys.victim, sid);
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ session_id: sid, totalCalls: 1 });
    expect(texts(mine.body)).toContain('victim-private');
    expect(texts(mine.body)).not.toMatch(/forged|planted/);
    // the attacker wrote into a label of its own that happens to read the same: it sees its calls, never the victim's
    const theirs = await contexts(authed, keys.attacker, sid);
    expect(theirs.status).toBe(200);
    expect(texts(theirs.body)).not.toContain('victim-private');
    // (every forged call was recorded: the writes happened, in the attacker's namespace)
    for (const forged of ['forged-native', 'forged-2025', 'forged-2026']) expect(texts(theirs.body)).toContain(forged);
    // the victim's session goes on
    expect((await victim.client.callTool({ name: 'note', arguments: { text: 'still mine' } })).structuredContent).toEqual({
      text: 'still mine',
    });
    await victim.client.close();
  });

  it('no spelling of the stored key reads it, from the gateway with authorization or the one without on the same store', async () => {
    const victim = await victimClient(authed, keys.victim);
    await victim.client.callTool({ name: 'note', arguments: { text: 'victim-only' } });
    const sid = victim.sessionId;
    const unknown = await contexts(authed, keys.attacker, 'never-used');
    const spellings = [
      `${sid} api-key:victim`,
      `${sid}\tapi-key:victim`,
      `${sid}%20api-key:victim`,
      `${sid}+api-key:victim`,
      `${sid} `,
      sid.toUpperCase(),
      `${sid}/`,
      `../${sid}`,
    ];
    for (const id of spellings) {
      const out = await contexts(authed, keys.attacker, id);
      expect([id, out.status, out.body.code]).toEqual([id, 404, unknown.body.code]);
    }
    // without authorization nobody owns anything, but what a principal owns is no one's to read there
    for (const id of [sid, ...spellings]) expect([id, (await contexts(open, undefined, id)).status]).toEqual([id, 404]);
    // no route enumerates sessions
    for (const route of ['/debug/contexts', '/debug/contexts/', '/debug/contexts/*', '/debug/contexts/%25'])
      expect([route, (await fetch(`${authed.url}${route}`, { headers: as(keys.attacker) })).status]).toEqual([route, 404]);
    expect((await contexts(authed, keys.victim, sid)).status).toBe(200);
    await victim.client.close();
  });

  it('without authorization an MCP session’s history is reached only by its unguessable id', async () => {
    const victim = await victimClient(open, undefined);
    await victim.client.callTool({ name: 'note', arguments: { text: 'anonymous' } });
    expect(victim.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await contexts(open, undefined, victim.sessionId)).status).toBe(200);
    for (const near of [victim.sessionId.slice(0, -1), victim.sessionId.replace(/^./, (c) => (c === '0' ? '1' : '0')), '1', 'session'])
      expect((await contexts(open, undefined, near)).status).toBe(404);
    await victim.client.close();
  });
});

describe('resuming another session’s stream', () => {
  interface SseEvent {
    id?: string;
    data?: string;
  }
  /** The first events of a tool call's event stream (priming event, first progress), then the connection is dropped. */
  async function firstEvents(g: RunningGateway, key: string | undefined, sid: string): Promise<SseEvent[]> {
    const cut = new AbortController();
    const res = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      signal: cut.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-11-25',
        ...as(key),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'tools/call',
        params: { name: 'slow_steps', arguments: {}, _meta: { progressToken: 't' } },
      }),
    });
    const reader = res.body!.getReader();
    let text = '';
    const events: SseEvent[] = [];
    while (events.length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      let end: number;
      while ((end = text.indexOf('\n\n')) >= 0) {
        const raw = text.slice(0, end);
        text = text.slice(end + 2);
        const e: SseEvent = {};
        for (const line of raw.split('\n')) {
          if (line.startsWith('id:')) e.id = line.slice(3).trim();
          if (line.startsWith('data:')) e.data = line.slice(5).trim();
        }
        events.push(e);
      }
    }
    cut.abort();
    return events;
  }
  const resume = (g: RunningGateway, key: string | undefined, sid: string, lastEventId: string) =>
    fetch(`${g.url}/mcp`, {
      headers: {
        accept: 'text/event-stream',
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-11-25',
        'last-event-id': lastEventId,
        ...as(key),
      },
    });

  it.each([
    ['authorization on', 'authed'],
    ['authorization off', 'open'],
  ] as const)('%s: the attacker’s own session cannot resume the victim’s call stream; the victim can', async (_, which) => {
    const g = which === 'authed' ? authed : open;
    const victimKey = which === 'authed' ? keys.victim : undefined;
    const attackerKey = which === 'authed' ? keys.attacker : undefined;
    const victimSid = await initSessionAs(g, victimKey);
    const seen = await firstEvents(g, victimKey, victimSid);
    const lastEventId = seen.at(-1)!.id!;
    expect(lastEventId).toEqual(expect.any(String));
    const attackerSid = await initSessionAs(g, attackerKey);
    const stolen = await resume(g, attackerKey, attackerSid, lastEventId);
    expect(stolen.status).toBe(400);
    expect(await stolen.text()).not.toContain('step');
    // the victim resumes its own and gets the rest, to the answer
    const own = await resume(g, victimKey, victimSid, lastEventId);
    expect(own.status).toBe(200);
    const rest = await own.text();
    expect(rest).toContain('step 5');
    expect(rest).toContain('"done":true');
  });

  async function initSessionAs(g: RunningGateway, key: string | undefined): Promise<string> {
    if (!key) return initSession(g.url);
    const res = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...as(key) },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
      }),
    });
    expect(res.status).toBe(200);
    return res.headers.get('mcp-session-id')!;
  }
});

describe('a server announcing the end of another server’s URL elicitation', () => {
  it('the session that was asked is not told by the stranger, and is told by the server that asked', async () => {
    const hostile = await startHostileServer('2025');
    const g = await startGateway(
      [
        {
          id: 'asker',
          url: 'stdio:asker',
          mcp: { transport: 'stdio', command: process.execPath, args: ['--import', 'tsx', ASKING_SERVER], cwd: REPO, env: {} },
        },
        { id: 'hostile', url: hostile.url, mcp: { transport: 'streamable-http', url: hostile.url, headers: {} } },
      ],
      path.join(tmp.dir, 'elicitations'),
      { API_KEYS_FILE: path.join(tmp.dir, 'keys.json'), HEALTH_POLL_MS: '600000', HEALTH_TIMEOUT_MS: '5000', AUDIT_LOG_FILE: 'off' },
    );
    try {
      // both servers in the catalog (the stdio one takes a moment to start)
      const listed = () => ['needs_connect', 'spoof_complete'].every((n) => g.gw.registry.catalog.byName.has(n));
      for (let i = 0; i < 100 && !listed(); i++) {
        await g.gw.refresh();
        await sleep(200);
      }
      expect(listed()).toBe(true);
      const victim = new Client({ name: 'victim', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
      await victim.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: as(keys.victim) } }));
      const completed: string[] = [];
      victim.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => void completed.push(n.params.elicitationId));
      await sleep(100); // its GET stream opens
      const failure = await victim.callTool({ name: 'needs_connect', arguments: {} }).catch((err: unknown) => err);
      expect(failure).toMatchObject({ code: -32042, data: { elicitations: [{ elicitationId: 'connect-1' }] } });
      // the stranger says connect-1 finished (called by the attacker, and by the victim itself)
      for (const key of [keys.attacker, keys.victim]) {
        const spoof = await fetch(`${g.url}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...as(key) },
          body: JSON.stringify({ tool: 'spoof_complete', arguments: { id: 'connect-1' } }),
        });
        expect(((await spoof.json()) as { result?: unknown }).result).toEqual({ text: 'announced connect-1' });
      }
      await sleep(300);
      expect(completed).toEqual([]);
      // the server that asked says so: the victim is told, once
      await victim.callTool({ name: 'complete_connect', arguments: {} });
      await until(() => completed.length === 1);
      expect(completed).toEqual(['connect-1']);
      await victim.close();
    } finally {
      await g.stop();
      await hostile.stop();
    }
  }, 40_000);
});
