/**
 * Class: state one caller created, used by another; and a tool call the gateway gives up on while the
 * tool runs on (issue 27, item 8).
 *
 * Sessions: on a gateway with authorization on (two API keys), whatever a principal created is
 * answered to another principal exactly as an id that does not exist (same status, same body): an
 * MCP session (POST, GET stream, DELETE; ids in other spellings, duplicated headers, a session of a
 * gateway without authorization), a recorded call history (GET /debug/contexts/{id}, native
 * session_id labels anyone may choose), and 2026-07-28 tasks and their listen notices. Without
 * authorization, session ids are random UUIDs. Real SDK clients (v1 for 2025-11-25, v2 for 2026-07-28).
 *
 * Budgets: the gateway sends each call's remaining time (x-fleet-budget-ms, or budgetMs on the
 * channel) and a kit service ends the call first: its own TIMEOUT, or a handler's own timed-out
 * result read from ctx.deadline, arrives before the gateway's limit, over HTTP, the channel, MCP and
 * the passthrough; the service's log and metrics show it ended the call. A caller's budget can only
 * shorten a tool's limit, and garbage budgets are ignored.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { BUDGET_HEADER, budgetFrom, createServiceApp, defineTool, type ServiceApp, type ToolDefinition } from '@mcp-fleet/kit';
import { captureLogger, serve, tempDir, testConfig } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { startGateway, sleep, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const V2026 = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const META_TASKS = {
  'io.modelcontextprotocol/protocolVersion': V2026,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
};
/** The gateway's limit in the budget tests, and the budget it sends for it (a tenth less). */
const GATEWAY_MS = 1500;
const BUDGET_MS = 1350;

const log = captureLogger('slow-mcp');
let service: ServiceApp;
let serviceUrl: string;
let stopService: () => Promise<void>;

/** A tool that sleeps ms, stopping when its call is aborted (its own limit, or a task's execution, as given). */
const sleeper = (name: string, description: string, more: Pick<ToolDefinition, 'timeoutMs' | 'execution'> = {}) =>
  defineTool({
    name,
    description,
    input: z.object({ ms: z.number().int().min(0).max(20_000) }).strict(),
    annotations: { readOnlyHint: true },
    ...more,
    handler: async ({ ms }, ctx) => {
      await sleep(ms, ctx.signal);
      return { slept: ms };
    },
  });

/** The kit service behind the gateways: sleepers that ignore their deadline, one that reads it, a task-capable job. */
function slowTools(): ToolDefinition[] {
  return [
    defineTool({
      name: 'echo',
      description: 'Echoes text.',
      input: z.object({ text: z.string().max(100) }).strict(),
      annotations: { readOnlyHint: true },
      handler: ({ text }) => ({ text }),
    }),
    sleeper('sleep_ms', 'Sleeps ms.'),
    sleeper('short_sleep', 'Sleeps ms under its own 300 ms limit.', { timeoutMs: 300 }),
    sleeper('long_job', 'Works ms (may run as a task).', { execution: { taskSupport: 'optional' } }),
    defineTool({
      name: 'run_for',
      description: 'Runs like a command: stops itself a little before its deadline and says timedOut (as terminal-mcp can).',
      input: z.object({ ms: z.number().int().min(0).max(20_000) }).strict(),
      annotations: { readOnlyHint: true },
      handler: async ({ ms }, ctx) => {
        const limit = Math.min(ms, ctx.deadline - Date.now() - 100);
        await sleep(Math.max(0, limit), ctx.signal);
        return { timedOut: limit < ms, ranMs: Math.max(0, limit), timeoutMs: ctx.timeoutMs };
      },
    }),
  ];
}

const tmp = tempDir('mcp-fleet-sessions-');
const gateways: RunningGateway[] = [];
let authed: RunningGateway;
let open: RunningGateway;
const keys = { a: '', b: '' };
const as = (key: string) => ({ authorization: `Bearer ${key}` });

beforeAll(async () => {
  service = createServiceApp({ service: 'slow-mcp', config: testConfig, logger: log.logger, tools: slowTools(), defaultMetrics: false });
  const running = await serve(service.app);
  serviceUrl = running.url;
  stopService = async () => {
    running.server.closeAllConnections();
    await running.stop();
  };
  const a = newApiKey('key-a', ['tools:all']);
  const b = newApiKey('key-b', ['tools:all']);
  keys.a = a.key;
  keys.b = b.key;
  fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([a.entry, b.entry]));
  const spec = [{ id: 'slow-mcp', url: serviceUrl }];
  // One session store for both gateways: what the open one records must stay out of the authorized one's reach.
  const shared = { SESSION_DB: path.join(tmp.dir, 'contexts.sqlite'), HEALTH_POLL_MS: '600000', AUDIT_LOG_FILE: 'off' };
  authed = await startGateway(spec, path.join(tmp.dir, 'authed'), {
    ...shared,
    API_KEYS_FILE: path.join(tmp.dir, 'keys.json'),
  });
  open = await startGateway(spec, path.join(tmp.dir, 'open'), shared);
  gateways.push(authed, open);
});

afterAll(async () => {
  for (const g of gateways) await g.stop();
  await stopService();
  tmp.cleanup();
});

/** A 2025-11-25 SDK client on a gateway, with these request headers. */
async function sessionClient(url: string, headers: Record<string, string> = {}) {
  const client = new Client({ name: 'sessions-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  return { client, transport, sessionId: transport.sessionId! };
}

/** One raw request with full control of the header lines (repeated headers, spaces kept). */
function raw(
  url: string,
  method: 'GET' | 'POST' | 'DELETE',
  headers: Record<string, string | string[]>,
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/mcp`, { method });
    req.setHeader('accept', 'application/json, text/event-stream');
    req.setHeader('mcp-protocol-version', '2025-11-25');
    if (body !== undefined) req.setHeader('content-type', 'application/json');
    for (const [k, v] of Object.entries(headers)) req.setHeader(k, v);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      // a GET that opened a stream is someone's session: its first bytes say so, then it is cut
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.destroy();
        return resolve({ status: res.statusCode ?? 0, body: '(event stream)' });
      }
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const LIST = { jsonrpc: '2.0', id: 7, method: 'tools/list', params: {} };
const CALL = { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'echo', arguments: { text: 'mine' } } };

describe('MCP sessions are bound to the principal that created them', () => {
  it("answers key B using key A's session exactly as an unknown session: POST, GET (SSE) and DELETE", async () => {
    const a = await sessionClient(authed.url, as(keys.a));
    expect(a.sessionId).toMatch(UUID_V4);
    const unknown = randomUUID();
    for (const [method, body] of [
      ['POST', LIST],
      ['POST', CALL],
      ['GET', undefined],
      ['DELETE', undefined],
    ] as const) {
      const baseline = await raw(authed.url, method, { ...as(keys.b), 'mcp-session-id': unknown }, body);
      expect(baseline.status).toBe(404);
      const stolen = await raw(authed.url, method, { ...as(keys.b), 'mcp-session-id': a.sessionId }, body);
      expect(stolen).toEqual(baseline);
    }
    // the session is untouched: B's DELETE did not end it, and A goes on using it
    const result = await a.client.callTool({ name: 'echo', arguments: { text: 'still mine' } });
    expect(result.structuredContent).toEqual({ text: 'still mine' });
    expect((await raw(authed.url, 'POST', { ...as(keys.a), 'mcp-session-id': a.sessionId }, LIST)).status).toBe(200);
    await a.client.close();
  });

  it('refuses other spellings of the id and of the caller the same way', async () => {
    const a = await sessionClient(authed.url, as(keys.a));
    const sid = a.sessionId;
    const baseline = await raw(authed.url, 'POST', { ...as(keys.b), 'mcp-session-id': randomUUID() }, LIST);
    const attempts: Record<string, string | string[]>[] = [
      // the id in upper case, with B's key and with A's own (ids are exact)
      { ...as(keys.b), 'mcp-session-id': sid.toUpperCase() },
      { ...as(keys.a), 'mcp-session-id': sid.toUpperCase() },
      // spaces and tabs around it (HTTP drops them: still A's session, still not B's)
      { ...as(keys.b), 'mcp-session-id': `  ${sid}\t` },
      // the id twice, or beside another id
      { ...as(keys.b), 'mcp-session-id': [sid, sid] },
      { ...as(keys.a), 'mcp-session-id': [randomUUID(), sid] },
      { ...as(keys.b), 'mcp-session-id': `${sid},${sid}` },
      // B's key first and A's after it (one Authorization counts: the first), or both in one line
      { authorization: [`Bearer ${keys.b}`, `Bearer ${keys.a}`], 'mcp-session-id': sid },
      // a prefix or a longer id
      { ...as(keys.b), 'mcp-session-id': sid.slice(0, 35) },
      { ...as(keys.b), 'mcp-session-id': `${sid}0` },
    ];
    for (const headers of attempts) expect(await raw(authed.url, 'POST', headers, LIST)).toEqual(baseline);
    // both keys in one Authorization line, or none, is no caller at all: 401 (PORT and AUTH_RESOURCE unset: the default resource)
    for (const authorization of [`Bearer ${keys.b}, Bearer ${keys.a}`, `Bearer ${keys.a}x`, '']) {
      const refused = await raw(authed.url, 'POST', { authorization, 'mcp-session-id': sid }, LIST);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatch(/UNAUTHORIZED/);
    }
    // the legitimate spellings keep working: A's id with A's key, spaces around it dropped by HTTP
    expect((await raw(authed.url, 'POST', { ...as(keys.a), 'mcp-session-id': `  ${sid} ` }, LIST)).status).toBe(200);
    expect(
      (await raw(authed.url, 'POST', { authorization: [`Bearer ${keys.a}`, `Bearer ${keys.b}`], 'mcp-session-id': sid }, LIST)).status,
    ).toBe(200);
    await a.client.close();
  });

  it('a session of a gateway without authorization is unknown to every key of one with it; there, session ids are random UUIDs', async () => {
    const anonymous = await sessionClient(open.url);
    const baseline = await raw(authed.url, 'POST', { ...as(keys.a), 'mcp-session-id': randomUUID() }, LIST);
    for (const key of [keys.a, keys.b])
      expect(await raw(authed.url, 'POST', { ...as(key), 'mcp-session-id': anonymous.sessionId }, LIST)).toEqual(baseline);
    const ids = [anonymous.sessionId];
    for (let i = 0; i < 15; i++) {
      const s = await sessionClient(open.url);
      ids.push(s.sessionId);
      await s.client.close();
    }
    for (const id of ids) expect(id).toMatch(UUID_V4);
    expect(new Set(ids).size).toBe(ids.length);
    await anonymous.client.close();
  });
});

describe('recorded call history is its owner’s', () => {
  const native = (url: string, key: string | undefined, body: Record<string, unknown>) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? as(key) : {}) },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
  const contexts = (url: string, key: string | undefined, id: string) =>
    fetch(`${url}/debug/contexts/${encodeURIComponent(id)}`, { headers: key ? as(key) : {} }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as Record<string, unknown>,
    }));
  /** The error envelope without what each answer has of its own (request id, time). */
  const envelope = (body: Record<string, unknown>) => ({ ...body, requestId: undefined, timestamp: undefined });

  it('two keys naming the same session_id each see their own calls; a label only A used is unknown to B', async () => {
    await native(authed.url, keys.a, { tool: 'echo', arguments: { text: 'from-a' }, session_id: 'work' });
    await native(authed.url, keys.a, { tool: 'echo', arguments: { text: 'only-a' }, session_id: 'a-only' });
    await native(authed.url, keys.b, { tool: 'echo', arguments: { text: 'from-b' }, session_id: 'work' });
    const mine = await contexts(authed.url, keys.a, 'work');
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ session_id: 'work', totalCalls: 1 });
    expect(JSON.stringify(mine.body.calls)).toContain('from-a');
    expect(JSON.stringify(mine.body.calls)).not.toContain('from-b');
    const theirs = await contexts(authed.url, keys.b, 'work');
    expect(theirs.body).toMatchObject({ session_id: 'work', totalCalls: 1 });
    expect(JSON.stringify(theirs.body.calls)).not.toContain('from-a');

    const unknown = await contexts(authed.url, keys.b, 'never-used');
    expect(unknown.status).toBe(404);
    const foreign = await contexts(authed.url, keys.b, 'a-only');
    expect(foreign.status).toBe(404);
    expect(envelope(foreign.body)).toEqual(
      envelope({ ...unknown.body, error: String(unknown.body.error).replace('never-used', 'a-only') }),
    );
    // spelling the stored key itself (the label, a space, the owner) is no session id
    for (const id of ['a-only api-key:key-a', 'a-only\napi-key:key-a', 'a-only%20api-key:key-a', 'A-ONLY'])
      expect((await contexts(authed.url, keys.b, id)).status).toBe(404);
  });

  it("an MCP session's calls are read by its owner only; calls recorded without authorization are no one's there", async () => {
    const a = await sessionClient(authed.url, as(keys.a));
    await a.client.callTool({ name: 'echo', arguments: { text: 'in-session' } });
    expect((await contexts(authed.url, keys.a, a.sessionId)).status).toBe(200);
    const foreign = await contexts(authed.url, keys.b, a.sessionId);
    const unknown = await contexts(authed.url, keys.b, randomUUID());
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(foreign.body.code).toBe(unknown.body.code);
    await a.client.close();

    // the same store, written by the gateway without authorization
    await native(open.url, undefined, { tool: 'echo', arguments: { text: 'anonymous' }, session_id: 'shared-label' });
    expect((await contexts(open.url, undefined, 'shared-label')).status).toBe(200);
    for (const key of [keys.a, keys.b]) expect((await contexts(authed.url, key, 'shared-label')).status).toBe(404);
  });
});

describe('2026-07-28: tasks and their notices are their creator’s', () => {
  const rpc = async (key: string, method: string, params: Record<string, unknown>) => {
    const name = typeof params.taskId === 'string' ? params.taskId : typeof params.name === 'string' ? params.name : undefined;
    const res = await fetch(`${authed.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': V2026,
        'mcp-method': method,
        ...(name ? { 'mcp-name': name } : {}),
        ...as(key),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { _meta: META_TASKS, ...params } }),
    });
    return {
      status: res.status,
      body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } },
    };
  };

  it("key B cannot get, cancel or answer key A's task (as an unknown task), nor follow it on a listen stream", async () => {
    const created = await rpc(keys.a, 'tools/call', { name: 'long_job', arguments: { ms: 5000 } });
    expect(created.body.result).toMatchObject({ resultType: 'task' });
    const taskId = created.body.result!.taskId as string;
    const unknownId = randomUUID();
    for (const [method, extra] of [
      ['tasks/get', {}],
      ['tasks/cancel', {}],
      ['tasks/update', { inputResponses: {} }],
    ] as const) {
      const baseline = await rpc(keys.b, method, { taskId: unknownId, ...extra });
      const stolen = await rpc(keys.b, method, { taskId, ...extra });
      expect(stolen.status).toBe(baseline.status);
      expect(stolen.body.error).toEqual(baseline.body.error);
      expect(stolen.body.error).toBeDefined();
    }
    // a listen stream of B that names A's task: the acknowledgement leaves it out
    const controller = new AbortController();
    const listen = await fetch(`${authed.url}/mcp`, {
      method: 'POST',
      signal: controller.signal,
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'mcp-protocol-version': V2026,
        'mcp-method': 'subscriptions/listen',
        ...as(keys.b),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'watch',
        method: 'subscriptions/listen',
        params: { _meta: META_TASKS, notifications: { toolsListChanged: true, taskIds: [taskId] } },
      }),
    });
    const reader = listen.body!.getReader();
    let text = '';
    while (!text.includes('acknowledged')) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(text).toContain('toolsListChanged');
    expect(text).not.toContain(taskId);
    // A still holds it, and ends it
    expect((await rpc(keys.a, 'tasks/get', { taskId })).body.result).toMatchObject({ taskId, status: 'working' });
    expect((await rpc(keys.a, 'tasks/cancel', { taskId })).body.result).toMatchObject({ resultType: 'complete' });
  });

  it('the official v2 client, with either key, works on 2026-07-28', async () => {
    for (const key of [keys.a, keys.b]) {
      const withKey: typeof fetch = (url, init) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${key}`);
        return fetch(url, { ...init, headers });
      };
      const client = new V2Client({ name: 'v2-client', version: '1.0.0' }, { versionNegotiation: { mode: { pin: V2026 } } } as never);
      await client.connect(new V2Transport(new URL(`${authed.url}/mcp`), { fetch: withKey }));
      const result = await client.callTool({ name: 'echo', arguments: { text: 'modern' } });
      expect(result.structuredContent).toEqual({ text: 'modern' });
      await client.close();
    }
  });
});

describe('one time budget from the gateway to the tool', () => {
  const budgeted: Record<string, RunningGateway> = {};
  beforeAll(async () => {
    const spec = [{ id: 'slow-mcp', url: serviceUrl }];
    for (const channel of ['true', 'false']) {
      const g = await startGateway(spec, path.join(tmp.dir, `budget-${channel}`), {
        DOWNSTREAM_TIMEOUT_MS: String(GATEWAY_MS),
        DOWNSTREAM_CHANNEL: channel,
        HEALTH_POLL_MS: '600000',
      });
      gateways.push(g);
      budgeted[channel === 'true' ? 'channel' : 'http'] = g;
    }
  });

  const timeouts = async () => {
    const metric = (await service.metrics.registry.getSingleMetric('mcp_fleet_tool_calls_total')!.get()).values;
    return metric.filter((v) => v.labels.tool === 'sleep_ms' && v.labels.outcome === 'TIMEOUT').reduce((n, v) => n + v.value, 0);
  };
  const nativeCall = async (url: string, tool: string, args: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const started = Date.now();
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ tool, arguments: args }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, ms: Date.now() - started };
  };

  it.each(['channel', 'http'] as const)(
    'over the %s: the service answers its own TIMEOUT before the gateway would give up, and logs and counts it',
    async (route) => {
      const before = await timeouts();
      const lines = log.lines.length;
      const out = await nativeCall(`${budgeted[route].url}/mcp`, 'sleep_ms', { ms: 5000 });
      expect(out.status).toBe(504);
      expect(out.body).toMatchObject({ success: false, code: 'TIMEOUT', service: 'slow-mcp' });
      expect(out.body.error).toMatch(new RegExp(`sleep_ms did not finish within ${BUDGET_MS} ms, the time its caller had left`));
      expect(out.ms).toBeGreaterThanOrEqual(BUDGET_MS - 20);
      expect(out.ms).toBeLessThan(GATEWAY_MS);
      expect(await timeouts()).toBe(before + 1);
      expect(log.lines.slice(lines).join('\n')).toMatch(/did not finish within 1350 ms/);
    },
  );

  it('a handler that reads ctx.deadline answers its own timed-out result (as a command runner can)', async () => {
    const out = await nativeCall(`${budgeted.http.url}/mcp`, 'run_for', { ms: 5000 });
    expect(out.status).toBe(200);
    expect(out.body.result).toMatchObject({ timedOut: true, timeoutMs: BUDGET_MS });
    expect(out.ms).toBeLessThan(GATEWAY_MS);
    // within the budget it runs to its end
    expect((await nativeCall(`${budgeted.http.url}/mcp`, 'run_for', { ms: 50 })).body.result).toMatchObject({ timedOut: false, ranMs: 50 });
  });

  it('an MCP client (2025-11-25 session) gets the tool’s own TIMEOUT as its result, and the passthrough route is bounded too', async () => {
    const s = await sessionClient(budgeted.channel.url);
    const started = Date.now();
    const result = await s.client.callTool({ name: 'sleep_ms', arguments: { ms: 5000 } });
    expect(Date.now() - started).toBeLessThan(GATEWAY_MS);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'TIMEOUT', service: 'slow-mcp' });
    await s.client.close();

    // the passthrough (the service's own body), with a caller's longer budget: the gateway's stands
    const started2 = Date.now();
    const res = await fetch(`${budgeted.http.url}/mcp/slow-mcp/tools/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [BUDGET_HEADER]: '600000' },
      body: JSON.stringify({ name: 'sleep_ms', arguments: { ms: 5000 } }),
    });
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(504);
    expect(body.error).toMatch(new RegExp(`within ${BUDGET_MS} ms`));
    expect(Date.now() - started2).toBeLessThan(GATEWAY_MS);
    // a caller's shorter budget through the passthrough stands
    const shorter = await fetch(`${budgeted.http.url}/mcp/slow-mcp/tools/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [BUDGET_HEADER]: '200' },
      body: JSON.stringify({ name: 'sleep_ms', arguments: { ms: 5000 } }),
    });
    expect(((await shorter.json()) as { error: string }).error).toMatch(/within 200 ms/);
  });

  it('a budget only shortens a tool’s limit; garbage budgets are ignored', async () => {
    const direct = (tool: string, ms: number, budget?: string | string[]) =>
      new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
        const req = http.request(`${serviceUrl}/tools/call`, { method: 'POST' });
        req.setHeader('content-type', 'application/json');
        if (budget !== undefined) req.setHeader(BUDGET_HEADER, budget);
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ name: tool, arguments: { ms } }));
      });
    // longer than the tool's own 300 ms: the tool's limit stands
    const longer = await direct('short_sleep', 1000, '60000');
    expect(longer.body).toMatchObject({ code: 'TIMEOUT' });
    expect(longer.body.error).toMatch(/within 300 ms; narrow the request or raise its timeout/);
    // shorter: it stands
    expect((await direct('sleep_ms', 1000, '100')).body.error).toMatch(/within 100 ms, the time its caller had left/);
    // garbage: ignored, the call runs under its own limit
    for (const garbage of ['abc', '-5', '0', '1e3', '1.5', '0x10', '99999999999', '+100', '100ms', ['100', '200']])
      expect((await direct('sleep_ms', 150, garbage)).body).toMatchObject({ success: true, result: { slept: 150 } });
    // frames and headers are read by one function
    for (const garbage of [0, -1, 1.5, NaN, Infinity, 2 ** 31, '', ' 5', '5 ', {}, [], null, true])
      expect(budgetFrom(garbage)).toBeUndefined();
    expect(budgetFrom(5)).toBe(5);
    expect(budgetFrom('2147483647')).toBe(2147483647);
  });
});
