/**
 * Class: a client of a virtual server (/servers/{name}/mcp, issue 30) reaching past what the server
 * exposes. A virtual server is the operator's allowlist for an agent, so each of these must fail:
 *
 * - calling a tool the server does not expose: the backing tool's plain and qualified names, another
 *   server's tool, the exposed name in other case or with spaces, over the native body, a 2025
 *   session, a 2025-03-26 batch and a 2026-07-28 request; and, with MCP_DISCOVERY=meta on the
 *   gateway, the meta-tools that search and call the whole catalog;
 * - choosing an argument the server fixes: the same key, a key spelled differently, the key under
 *   `__proto__`, null; the fixed value is never overridden nor shown;
 * - using another endpoint's MCP session (a virtual server's on another, or on /mcp; /mcp's on a
 *   virtual server);
 * - reaching a server without its scope (authorization on): other names for it in the path, and
 *   scopes that only look like server:<name>.
 * The legitimate use (the exposed tools, with their defaults, for a token with the scope) works throughout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import request from 'supertest';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import {
  alphaTools,
  betaTools,
  post2026,
  startDownstream,
  startGateway,
  type Downstream,
  type RunningGateway,
} from '../../services/mega-orchestrator/test/helpers';

let tmp: ReturnType<typeof tempDir>;
let alpha: Downstream;
let beta: Downstream;
let authed: RunningGateway;
let meta: RunningGateway;

const DEFINITIONS = `servers:
  research:
    tools:
      - tool: echo
        name: say
        fixed: { text: the operator's words }
      - tool: beta-mcp__ping_beta
        name: ping
  other:
    tools: [memory_stats]
`;

const keys = {
  research: newApiKey('research', ['server:research', 'tools:all']),
  other: newApiKey('other', ['server:other', 'tools:all']),
  lookalike: newApiKey('lookalike', [
    'tools:all',
    'server:Research',
    'server:research ',
    'server:*',
    'servers:research',
    'server:research:read',
    'server:research/',
    'service:research',
  ]),
};
const as = (k: { key: string }) => ({ authorization: `Bearer ${k.key}` });

beforeAll(async () => {
  tmp = tempDir();
  alpha = await startDownstream('alpha-mcp', alphaTools);
  beta = await startDownstream('beta-mcp', betaTools);
  const file = path.join(tmp.dir, 'virtual-servers.yaml');
  fs.writeFileSync(file, DEFINITIONS);
  const keysFile = path.join(tmp.dir, 'keys.json');
  fs.writeFileSync(keysFile, JSON.stringify(Object.values(keys).map((k) => k.entry)));
  const specs = [
    { id: 'alpha-mcp', url: alpha.url },
    { id: 'beta-mcp', url: beta.url },
  ];
  const shared = { VIRTUAL_SERVERS_FILE: file, HEALTH_POLL_MS: '600000', AUDIT_LOG_FILE: 'off' };
  authed = await startGateway(specs, path.join(tmp.dir, 'authed'), { ...shared, API_KEYS_FILE: keysFile });
  meta = await startGateway(specs, path.join(tmp.dir, 'meta'), { ...shared, MCP_DISCOVERY: 'meta' });
});

afterAll(async () => {
  await authed.stop();
  await meta.stop();
  await alpha.stop();
  await beta.stop();
  tmp.cleanup();
});

async function session(url: string, headers: Record<string, string> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'escape-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

const OUTSIDE = [
  'echo',
  'alpha-mcp__echo',
  'beta-mcp__echo',
  'memory_stats',
  'ping_beta',
  'SAY',
  'Say',
  'say ',
  ' say',
  'say\u200b',
  'search_tools',
  'call_tool',
];

describe('tools the server does not expose', () => {
  it('no name reaches them, over any transport; the exposed ones work', async () => {
    const h = as(keys.research);
    const url = `${authed.url}/servers/research/mcp`;
    for (const tool of OUTSIDE) {
      const native = await request(authed.url)
        .post('/servers/research/mcp')
        .set(h)
        .send({ tool, arguments: { text: 'x' } });
      expect([native.status, native.body.code]).toEqual([404, 'UNKNOWN_TOOL']);
      // (a header carries Latin-1 only: the zero-width space goes in the other transports)
      if (/^[\x20-\x7e]*$/.test(tool)) {
        const modern = await post2026(
          `${authed.url}/servers/research`,
          'tools/call',
          { name: tool, arguments: { text: 'x' } },
          { headers: h },
        );
        // an unknown name (-32602), or one the Mcp-Name header cannot carry as sent (-32020): refused either way
        expect([-32602, -32020]).toContain(((await modern.json()) as { error: { code: number } }).error.code);
      }
      const batch = await request(authed.url)
        .post('/servers/research/mcp')
        .set({ ...h, accept: 'application/json, text/event-stream' })
        .send([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: { text: 'x' } } }]);
      expect(batch.body[0].error).toMatchObject({ code: -32602 });
    }
    const { client } = await session(url, h);
    for (const tool of OUTSIDE) await expect(client.callTool({ name: tool, arguments: { text: 'x' } })).rejects.toThrow(/no tool named/);
    expect(alpha.calls.get('echo') ?? 0).toBe(0);
    expect((await client.callTool({ name: 'say' })).structuredContent).toEqual({ text: "the operator's words" });
    expect((await client.callTool({ name: 'ping' })).structuredContent).toEqual({ pong: true });
    await client.close();
  });

  it('with MCP_DISCOVERY=meta on the gateway, a virtual server still lists only its own tools: no meta-tool searches or calls the catalog', async () => {
    const whole = await request(meta.url).get('/tools/list').expect(200);
    expect(whole.body.discovery).toBe('meta');
    const { client } = await session(`${meta.url}/servers/research/mcp`);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['say', 'ping']);
    for (const name of ['search_tools', 'describe_tool', 'call_tool'])
      await expect(client.callTool({ name, arguments: { name: 'echo', query: 'echo', arguments: { text: 'x' } } })).rejects.toThrow(
        /no tool named/,
      );
    const native = await request(meta.url)
      .post('/servers/research/mcp')
      .send({ tool: 'call_tool', arguments: { name: 'echo', arguments: { text: 'x' } } });
    expect(native.body.code).toBe('UNKNOWN_TOOL');
    expect((await client.callTool({ name: 'say' })).structuredContent).toEqual({ text: "the operator's words" });
    await client.close();
  });
});

describe('fixed arguments', () => {
  it('no spelling of the argument replaces the fixed value, and none shows it', async () => {
    const h = as(keys.research);
    const call = (args: string) =>
      request(authed.url)
        .post('/servers/research/mcp')
        .set({ ...h, 'content-type': 'application/json' })
        .send(`{"tool": "say", "arguments": ${args}}`);
    for (const args of ['{"text": "mine"}', '{"text": null}', '{"text": "mine", "text": "mine"}']) {
      const res = await call(args);
      expect([res.status, res.body.code]).toEqual([400, 'VALIDATION_ERROR']);
      expect(JSON.stringify(res.body)).not.toContain("operator's words");
    }
    // other spellings are other arguments: the tool refuses them, or the fixed value wins
    for (const args of [
      '{"Text": "mine"}',
      '{"text ": "mine"}',
      '{"__proto__": {"text": "mine"}}',
      '{"constructor": {"prototype": {"text": "mine"}}}',
    ]) {
      const res = await call(args);
      expect(JSON.stringify(res.body)).not.toContain('"text":"mine"');
      if (res.body.success) expect(res.body.result).toEqual({ text: "the operator's words" });
      else expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    const { client } = await session(`${authed.url}/servers/research/mcp`, h);
    const tool = (await client.listTools()).tools.find((t) => t.name === 'say')!;
    expect(JSON.stringify(tool)).not.toContain("operator's words");
    const refused = await client.callTool({ name: 'say', arguments: { text: 'mine' } });
    expect(refused.structuredContent).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect((await client.callTool({ name: 'say', arguments: {} })).structuredContent).toEqual({ text: "the operator's words" });
    await client.close();
  });
});

describe('sessions belong to their endpoint', () => {
  it('a session id of one endpoint is unknown on every other, for POST, GET and DELETE', async () => {
    const h = as(keys.research);
    const otherKeyed = { authorization: `Bearer ${keys.other.key}` };
    const research = await session(`${authed.url}/servers/research/mcp`, h);
    const other = await session(`${authed.url}/servers/other/mcp`, otherKeyed);
    const gateway = await session(`${authed.url}/mcp`, h);
    const attempts: [string, string, Record<string, string>, number][] = [
      [research.transport.sessionId!, '/mcp', h, 404],
      [gateway.transport.sessionId!, '/servers/research/mcp', h, 404],
      [research.transport.sessionId!, '/servers/other/mcp', otherKeyed, 404],
      // its own endpoint, by a principal without the server's scope
      [other.transport.sessionId!, '/servers/other/mcp', as(keys.lookalike), 403],
    ];
    for (const [sid, where, headers, status] of attempts) {
      const set = { ...headers, accept: 'application/json, text/event-stream', 'mcp-session-id': sid };
      expect((await request(authed.url).post(where).set(set).send({ jsonrpc: '2.0', id: 1, method: 'tools/list' })).status).toBe(status);
      expect((await request(authed.url).get(where).set(set)).status).toBe(status);
      expect((await request(authed.url).delete(where).set(set)).status).toBe(status);
    }
    // each still works where it belongs
    expect((await research.client.listTools()).tools.map((t) => t.name)).toEqual(['say', 'ping']);
    expect((await other.client.listTools()).tools.map((t) => t.name)).toEqual(['memory_stats']);
    for (const s of [research, other, gateway]) await s.client.close();
  });
});

describe('the server scope', () => {
  it('no other path to the server and no scope that only looks like server:<name> lets a token in', async () => {
    for (const where of [
      '/servers/research/mcp',
      '/servers/RESEARCH/mcp',
      '/servers/research%20/mcp',
      '/servers/other%2F..%2Fresearch/mcp',
      '/servers/research%2F/mcp',
    ])
      for (const k of [keys.other, keys.lookalike]) {
        const before = alpha.calls.get('echo');
        const res = await request(authed.url).post(where).set(as(k)).send({ tool: 'say' });
        // the server's own path: 403 naming server:research; any other spelling names no server this key may use
        if (where === '/servers/research/mcp')
          expect(res.body).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['server:research'] } });
        else expect([where, [403, 404].includes(res.status)]).toEqual([where, true]);
        expect(alpha.calls.get('echo')).toBe(before);
      }
    const ok = await request(authed.url).post('/servers/research/mcp').set(as(keys.research)).send({ tool: 'say' }).expect(200);
    expect(ok.body.result).toEqual({ text: "the operator's words" });
    await request(authed.url).post('/servers/other/mcp').set(as(keys.other)).send({ tool: 'memory_stats' }).expect(200);
  });
});
