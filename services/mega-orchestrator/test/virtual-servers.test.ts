/**
 * Virtual servers (issue 30, part 1) end to end, with authorization on (API keys): the official v1
 * client (2025-11-25 sessions) and v2 client (2026-07-28) on /servers/{name}/mcp, the native body,
 * renames and overrides, fixed and default arguments, the server scope on top of tool scopes, the
 * file read again when it changes (a bad one refused with its line, the running definition kept),
 * the admin API, and list_changed reaching that server's clients only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir, testLogger } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import request from 'supertest';
import YAML from 'yaml';
import { createApp } from '../src/http/app';
import { newApiKey } from '../src/auth/auth';
import {
  alphaTools,
  betaTools,
  gatewayConfig,
  startDownstream,
  startGateway,
  TEST_INVENTORY,
  until,
  type Downstream,
  type RunningGateway,
} from './helpers';

let tmp: ReturnType<typeof tempDir>;
let alpha: Downstream;
let beta: Downstream;
let g: RunningGateway;
let file: string;

const keys = {
  admin: newApiKey('ops', ['admin']),
  full: newApiKey('full', ['server:research', 'server:other', 'server:ghost', 'server:finder', 'server:misfit', 'tools:all']),
  narrow: newApiKey('narrow', ['server:research', 'service:beta-mcp:read']),
  stranger: newApiKey('stranger', ['tools:all', 'server:other']),
};
const as = (k: { key: string }) => ({ authorization: `Bearer ${k.key}` });

const RESEARCH = `# the research agent's tools
servers:
  research:
    description: Echo and ping, for the research agent.
    tools:
      - tool: echo
        name: say
        title: Say
        description: Say something back.
        defaults: { text: hello }
      - tool: alpha-mcp__echo
        name: shout
        fixed: { text: fixed! }
      - tool: beta-mcp__ping_beta
        name: ping
`;
const OTHER = `  other:
    tools:
      - memory_stats
`;

function writeFile(text: string): void {
  fs.writeFileSync(file, text);
}

beforeAll(async () => {
  tmp = tempDir();
  alpha = await startDownstream('alpha-mcp', alphaTools);
  beta = await startDownstream('beta-mcp', betaTools);
  file = path.join(tmp.dir, 'virtual-servers.yaml');
  writeFile(RESEARCH + OTHER);
  const keysFile = path.join(tmp.dir, 'keys.json');
  fs.writeFileSync(keysFile, JSON.stringify(Object.values(keys).map((k) => k.entry)));
  g = await startGateway(
    [
      { id: 'alpha-mcp', url: alpha.url },
      { id: 'beta-mcp', url: beta.url, primaryFor: ['system_info'] },
    ],
    tmp.dir,
    { API_KEYS_FILE: keysFile, VIRTUAL_SERVERS_FILE: file, AUDIT_LOG_FILE: 'off', HEALTH_POLL_MS: '600000' },
  );
});

afterAll(async () => {
  await g.stop();
  await alpha.stop();
  await beta.stop();
  tmp.cleanup();
});

const endpoint = (name: string) => new URL(`${g.url}/servers/${name}/mcp`);

async function v1(name: string, key: { key: string } = keys.full) {
  const client = new Client({ name: 'v1-virtual', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(endpoint(name), { requestInit: { headers: as(key) } }));
  return client;
}

async function v2(name: string, key: { key: string } = keys.full) {
  const client = new V2Client({ name: 'v2-virtual', version: '1.0.0' }, {
    versionNegotiation: { mode: { pin: '2026-07-28' } },
  } as ConstructorParameters<typeof V2Client>[1]);
  await client.connect(new V2Transport(endpoint(name), { requestInit: { headers: as(key) } }));
  return client;
}

const native = (name: string, body: unknown, key: { key: string } = keys.full) =>
  request(g.url)
    .post(`/servers/${name}/mcp`)
    .set(as(key))
    .send(body as object);

describe('what a virtual server shows and does', () => {
  it('the v1 client (2025-11-25 session) sees only the chosen tools, renamed, with overrides, fixed arguments out of the schema and defaults in it', async () => {
    const client = await v1('research');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['say', 'shout', 'ping']);
    const [say, shout, ping] = tools;
    expect(say).toMatchObject({ title: 'Say', description: 'Say something back.', annotations: { readOnlyHint: true } });
    expect(say.inputSchema.properties).toEqual({ text: expect.objectContaining({ type: 'string', default: 'hello' }) });
    expect(say.inputSchema.required ?? []).toEqual([]);
    expect(shout.description).toBe('Echoes text back. Caps: 1000 characters.');
    expect(shout.inputSchema.properties).toEqual({});
    expect(shout.inputSchema.required).toBeUndefined();
    expect(ping.description).toBe('Answers pong.');

    // defaults fill in when absent, and yield to what the caller sends
    expect((await client.callTool({ name: 'say', arguments: {} })).structuredContent).toEqual({ text: 'hello' });
    expect((await client.callTool({ name: 'say', arguments: { text: 'mine' } })).structuredContent).toEqual({ text: 'mine' });
    // fixed values are sent on every call, and refused from the caller (not silently overwritten)
    expect((await client.callTool({ name: 'shout' })).structuredContent).toEqual({ text: 'fixed!' });
    const refused = await client.callTool({ name: 'shout', arguments: { text: 'mine' } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.stringMatching(/arguments\.text/) });
    expect(JSON.stringify(refused)).not.toContain('fixed!');
    expect((await client.callTool({ name: 'ping' })).structuredContent).toEqual({ pong: true });
    // a tool of the gateway that the server does not expose, by any of its names
    for (const name of ['echo', 'alpha-mcp__echo', 'memory_stats'])
      await expect(client.callTool({ name, arguments: { text: 'x' } })).rejects.toThrow(/no tool named/);
    expect(alpha.calls.get('echo')).toBe(3);
    await client.close();
  });

  it('the v2 client (2026-07-28) sees and calls the same', async () => {
    const client = await v2('research');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['say', 'shout', 'ping']);
    expect(tools[0].inputSchema.properties?.text).toMatchObject({ default: 'hello' });
    expect((await client.callTool({ name: 'say', arguments: {} })).structuredContent).toEqual({ text: 'hello' });
    expect((await client.callTool({ name: 'shout', arguments: {} })).structuredContent).toEqual({ text: 'fixed!' });
    expect((await client.callTool({ name: 'shout', arguments: { text: 'x' } })).structuredContent).toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    await expect(client.callTool({ name: 'echo', arguments: { text: 'x' } })).rejects.toThrow(/no tool named/);
    await client.close();
  });

  it('the native {tool, arguments} body works on the same endpoint', async () => {
    const ok = await native('research', { tool: 'say', arguments: {} }).expect(200);
    expect(ok.body).toMatchObject({ success: true, result: { text: 'hello' }, tool: 'say', service: 'alpha-mcp' });
    expect((await native('research', { tool: 'shout', arguments: { text: 'x' } }).expect(400)).body).toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    expect((await native('research', { tool: 'echo', arguments: { text: 'x' } }).expect(404)).body).toMatchObject({ code: 'UNKNOWN_TOOL' });
    // a server that does not exist, asked for with its scope
    expect((await native('ghost', { tool: 'say' }).expect(404)).body).toMatchObject({ code: 'NOT_FOUND' });
    // /mcp is the whole gateway, as before
    const whole = await request(g.url).get('/tools/list').set(as(keys.full)).expect(200);
    expect(whole.body.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['echo', 'ping_beta']));
    expect(whole.body.tools.map((t: { name: string }) => t.name)).not.toContain('say');
  });

  it('a 2025 session of one endpoint is unknown on another', async () => {
    const transport = new StreamableHTTPClientTransport(endpoint('research'), { requestInit: { headers: as(keys.full) } });
    const client = new Client({ name: 'v1', version: '1.0.0' });
    await client.connect(transport);
    const list = { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} };
    for (const where of ['/mcp', '/servers/other/mcp'])
      await request(g.url)
        .post(where)
        .set({ ...as(keys.full), accept: 'application/json, text/event-stream', 'mcp-session-id': transport.sessionId! })
        .send(list)
        .expect(404);
    await client.close();
  });
});

describe('scopes (authorization on)', () => {
  it('needs server:<name>: without it, 403 naming the scope, the same for a name that does not exist', async () => {
    for (const name of ['research', 'nowhere']) {
      const res = await native(name, { tool: 'say' }, keys.stranger).expect(403);
      expect(res.body).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: [`server:${name}`] } });
      expect(res.headers['www-authenticate']).toMatch(new RegExp(`insufficient_scope.*scope="server:${name}"`));
    }
    await expect(v1('research', keys.stranger)).rejects.toThrow(/FORBIDDEN/);
    // the v2 client reads the scope it lacks from WWW-Authenticate
    await expect(v2('research', keys.stranger)).rejects.toThrow(/Insufficient scope: required "server:research"/);
    await request(g.url).post('/servers/research/mcp').send({ tool: 'say' }).expect(401);
  });

  it('tool scopes still apply inside: a token for beta-mcp read-only tools sees and calls ping only', async () => {
    const client = await v1('research', keys.narrow);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['ping']);
    const refused = await client.callTool({ name: 'say', arguments: {} });
    expect(refused.structuredContent).toMatchObject({ code: 'FORBIDDEN' });
    expect((await client.callTool({ name: 'ping' })).structuredContent).toEqual({ pong: true });
    await client.close();
    const modern = await v2('research', keys.narrow);
    expect((await modern.listTools()).tools.map((t) => t.name)).toEqual(['ping']);
    await modern.close();
  });
});

describe('backing tools that come and go', () => {
  it('a tool whose backing tool is away is hidden, with the reason in /services, and a call of it says why', async () => {
    await beta.stop();
    await g.gw.refresh();
    try {
      const client = await v1('research');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['say', 'shout']);
      const services = await request(g.url).get('/services').set(as(keys.full)).expect(200);
      const research = services.body.virtualServers.find((s: { name: string }) => s.name === 'research');
      expect(research).toMatchObject({ endpoint: '/servers/research/mcp', tools: ['say', 'shout'] });
      expect(research.hidden).toEqual([
        { name: 'ping', tool: 'beta-mcp__ping_beta', reason: expect.stringMatching(/^beta-mcp is unavailable/) },
      ]);
      const away = await client.callTool({ name: 'ping' });
      expect(away.structuredContent).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
      await client.close();
    } finally {
      await beta.start();
      await g.gw.refresh();
    }
    const client = await v1('research');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['say', 'shout', 'ping']);
    await client.close();
  });
});

describe('definitions that do not fit their backing tool', () => {
  it('a fixed or default value the tool’s schema refuses, or an argument a strict schema lacks, hides the tool and its calls answer NOT_CONFIGURED', async () => {
    await request(g.url)
      .put('/admin/servers/misfit')
      .set(as(keys.admin))
      .send({
        tools: [
          { tool: 'echo', name: 'wrong_type', fixed: { text: 5 } },
          { tool: 'echo', name: 'too_long', defaults: { text: 'x'.repeat(1001) } },
          { tool: 'echo', name: 'no_such', defaults: { volume: 11 } },
          { tool: 'echo', name: 'fine', defaults: { text: 'ok' } },
        ],
      })
      .expect(201);
    try {
      const report = g.gw.ctx.virtualServers?.report().find((s) => s.name === 'misfit');
      expect(report?.tools).toEqual(['fine']);
      expect(Object.fromEntries(report!.hidden.map((h) => [h.name, h.reason]))).toEqual({
        wrong_type: expect.stringMatching(/^the definition does not fit the tool: fixed\.text does not fit its schema/),
        too_long: expect.stringMatching(/defaults\.text does not fit its schema/),
        no_such: expect.stringMatching(/defaults\.volume is not one of its arguments \(echo\)/),
      });
      const refused = await native('misfit', { tool: 'wrong_type' }).expect(503);
      expect(refused.body).toMatchObject({
        code: 'NOT_CONFIGURED',
        error: expect.stringMatching(/wrong_type on virtual server misfit is not served/),
      });
      expect((await native('misfit', { tool: 'fine' }).expect(200)).body.result).toEqual({ text: 'ok' });
    } finally {
      await request(g.url).delete('/admin/servers/misfit').set(as(keys.admin)).expect(200);
    }
  });
});

describe('list_changed reaches that server’s clients only', () => {
  it('a definition change notifies the v1 sessions and v2 listeners of that server, not those of another server or /mcp', async () => {
    const heard = { research: 0, other: 0, gateway: 0, researchListen: 0, otherListen: 0 };
    const research = await v1('research');
    const other = await v1('other');
    const gateway = new Client({ name: 'v1-gateway', version: '1.0.0' });
    await gateway.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`), { requestInit: { headers: as(keys.full) } }));
    research.setNotificationHandler(ToolListChangedNotificationSchema, () => void (heard.research += 1));
    other.setNotificationHandler(ToolListChangedNotificationSchema, () => void (heard.other += 1));
    gateway.setNotificationHandler(ToolListChangedNotificationSchema, () => void (heard.gateway += 1));
    const researchV2 = await v2('research');
    const otherV2 = await v2('other');
    researchV2.setNotificationHandler('notifications/tools/list_changed', () => void (heard.researchListen += 1));
    otherV2.setNotificationHandler('notifications/tools/list_changed', () => void (heard.otherListen += 1));
    const subs = [await researchV2.listen({ toolsListChanged: true }), await otherV2.listen({ toolsListChanged: true })];

    // The v1 clients open their GET stream just after initializing: change the definition until heard.
    for (let i = 0; i < 20 && (heard.research === 0 || heard.researchListen === 0); i++) {
      const put = await request(g.url)
        .put('/admin/servers/research')
        .set(as(keys.admin))
        .send({ tools: [{ tool: 'echo', name: 'say', description: `Say it (${i}).` }] });
      expect(put.status).toBe(200);
      await until(() => heard.research > 0 && heard.researchListen > 0, 200).catch(() => undefined);
    }
    expect(heard.research).toBeGreaterThan(0);
    expect(heard.researchListen).toBeGreaterThan(0);
    expect((await research.listTools()).tools).toEqual([
      expect.objectContaining({ name: 'say', description: expect.stringMatching(/^Say it/) }),
    ]);
    await new Promise((r) => setTimeout(r, 300));
    expect({ other: heard.other, gateway: heard.gateway, otherListen: heard.otherListen }).toEqual({
      other: 0,
      gateway: 0,
      otherListen: 0,
    });

    for (const s of subs) await s.close();
    for (const c of [research, other, gateway, researchV2, otherV2]) await c.close();
    writeFile(RESEARCH + OTHER);
    await until(() => String(g.gw.ctx.virtualServers?.report().find((s) => s.name === 'research')?.tools) === 'say,shout,ping');
  });
});

describe('the definition file', () => {
  const status = async () => (await request(g.url).get('/admin/servers').set(as(keys.admin)).expect(200)).body;
  /** Reads the admin API's file status until `check` holds (the file is read again 100 ms after it changes). */
  const fileStatusWhen = async (check: (file: { loadedAt: string; error?: { line?: number; message: string } }) => boolean) => {
    const stop = Date.now() + 5000;
    for (;;) {
      const { file: f } = await status();
      if (check(f)) return f;
      if (Date.now() > stop) throw new Error(`file status never matched: ${JSON.stringify(f)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('is read again when it changes', async () => {
    writeFile(RESEARCH + OTHER + '      - tool: system_info\n        name: info\n');
    const client = await v1('other');
    await until(() => g.gw.ctx.virtualServers?.report().find((s) => s.name === 'other')?.tools.length === 2);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['memory_stats', 'info']);
    expect((await client.callTool({ name: 'info' })).structuredContent).toEqual({ from: 'beta-mcp' });
    await client.close();
  });

  it('a bad file is refused, naming its line, and the servers defined before it stay', async () => {
    const before = (await status()).file.loadedAt;
    // line 14: a key no tool definition has
    writeFile(RESEARCH.replace('        fixed: { text: fixed! }\n', '        fixed: { text: fixed! }\n        fixd: 1\n') + OTHER);
    const bad = await fileStatusWhen((f) => f.error !== undefined);
    expect(bad.error).toMatchObject({
      line: 14,
      message: expect.stringMatching(/line 14: servers\.research\.tools\.1: Unrecognized key: "fixd"/),
    });
    expect(bad.loadedAt).toBe(before);
    // YAML that does not parse: its line too
    writeFile('servers:\n  research:\n    tools: [say\n  other: {}\n');
    const broken = await fileStatusWhen((f) => f.error?.message !== bad.error?.message);
    expect(broken.error?.line).toBeGreaterThanOrEqual(3);
    expect(broken.error?.message).toMatch(new RegExp(`line ${broken.error?.line}: `));
    // the running definitions serve on
    const client = await v1('research');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['say', 'shout', 'ping']);
    await client.close();
    // a write through the admin API does not overwrite a file someone is editing
    // a file that vanishes (an editor between deleting and writing it) takes nothing away
    fs.rmSync(file);
    const gone = await fileStatusWhen((f) => /is gone/.test(f.error?.message ?? ''));
    expect(gone.loadedAt).toBe(before);
    expect(g.gw.ctx.virtualServers?.report().map((s) => s.name)).toEqual(['research', 'other']);
    writeFile('servers:\n  research:\n    tools: [say\n  other: {}\n');
    await fileStatusWhen((f) => f.error?.message === broken.error?.message);
    const conflict = await request(g.url)
      .put('/admin/servers/x')
      .set(as(keys.admin))
      .send({ tools: ['echo'] })
      .expect(409);
    expect(conflict.body.error).toMatch(new RegExp(`line ${broken.error?.line}`));
    writeFile(RESEARCH + OTHER);
    await fileStatusWhen((f) => f.error === undefined);
  });

  it('a bad file at start stops the start, naming its line', () => {
    const badFile = path.join(tmp.dir, 'bad.yaml');
    fs.writeFileSync(badFile, 'servers:\n  research:\n    tools:\n      - tool: echo\n        fixed: nope\n');
    expect(() =>
      createApp({
        config: gatewayConfig(path.join(tmp.dir, 'bad-start'), { VIRTUAL_SERVERS_FILE: badFile }),
        logger: testLogger('gateway'),
        services: [],
        inventory: TEST_INVENTORY,
        autoStart: false,
      }),
    ).toThrow(/bad\.yaml: line 5: servers\.research\.tools\.0\.fixed/);
  });
});

describe('discovery: meta on one virtual server', () => {
  it('its clients see the three meta-tools over its own tools only; /mcp keeps the whole list', async () => {
    await request(g.url)
      .put('/admin/servers/finder')
      .set(as(keys.admin))
      .send({
        discovery: 'meta',
        tools: [{ tool: 'echo', name: 'say', description: 'Say something back.', fixed: { text: 'found' } }, 'memory_stats'],
      })
      .expect(201);
    try {
      const client = await v1('finder');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'describe_tool', 'call_tool']);
      const found = await client.callTool({ name: 'search_tools', arguments: { query: 'echo some text back', limit: 25 } });
      const names = (found.structuredContent as { results: { name: string }[] }).results.map((r) => r.name);
      expect(names[0]).toBe('say');
      expect(names.every((n) => ['say', 'memory_stats'].includes(n))).toBe(true);
      const described = await client.callTool({ name: 'describe_tool', arguments: { name: 'say' } });
      expect(described.structuredContent).toMatchObject({
        name: 'say',
        description: 'Say something back.',
        inputSchema: { properties: {} },
      });
      expect((await client.callTool({ name: 'describe_tool', arguments: { name: 'echo' } })).isError).toBe(true);
      expect((await client.callTool({ name: 'call_tool', arguments: { name: 'say', arguments: {} } })).structuredContent).toEqual({
        text: 'found',
      });
      const refused = await client.callTool({ name: 'call_tool', arguments: { name: 'say', arguments: { text: 'x' } } });
      expect(refused.structuredContent).toMatchObject({ code: 'VALIDATION_ERROR' });
      await expect(client.callTool({ name: 'call_tool', arguments: { name: 'echo', arguments: { text: 'x' } } })).rejects.toThrow(
        /no tool named/,
      );
      await client.close();
      const whole = await request(g.url).get('/tools/list').set(as(keys.full)).expect(200);
      expect(whole.body.discovery).toBeUndefined();
      expect(whole.body.tools.map((t: { name: string }) => t.name)).toContain('echo');
    } finally {
      await request(g.url).delete('/admin/servers/finder').set(as(keys.admin)).expect(200);
    }
  });
});

describe('the admin API (scope admin)', () => {
  it('lists, gets, puts and deletes servers, writing the file atomically and keeping its comments', async () => {
    const list = await request(g.url).get('/admin/servers').set(as(keys.admin)).expect(200);
    expect(list.body.servers.map((s: { name: string }) => s.name)).toEqual(['research', 'other']);
    expect(list.body.servers[0]).toMatchObject({ scope: 'server:research', definition: { tools: expect.any(Array) } });

    const created = await request(g.url)
      .put('/admin/servers/extra')
      .set(as(keys.admin))
      .send({ description: 'One tool.', tools: [{ tool: 'echo', name: 'e', fixed: { text: 'x' } }] })
      .expect(201);
    expect(created.body).toMatchObject({ name: 'extra', endpoint: '/servers/extra/mcp', tools: ['e'] });
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toContain("# the research agent's tools");
    expect(YAML.parse(text).servers.extra).toEqual({
      description: 'One tool.',
      tools: [{ tool: 'echo', name: 'e', fixed: { text: 'x' } }],
    });
    expect(fs.readdirSync(tmp.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // in force at once
    expect(g.gw.ctx.virtualServers?.report().find((s) => s.name === 'extra')?.tools).toEqual(['e']);

    await request(g.url)
      .put('/admin/servers/extra')
      .set(as(keys.admin))
      .send({ tools: ['memory_stats'] })
      .expect(200);
    expect((await request(g.url).get('/admin/servers/extra').set(as(keys.admin)).expect(200)).body.definition).toEqual({
      tools: [{ tool: 'memory_stats' }],
    });
    const bad = await request(g.url)
      .put('/admin/servers/extra')
      .set(as(keys.admin))
      .send({ tools: [{ tool: 'echo', fixd: 1 }] })
      .expect(400);
    expect(bad.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    await request(g.url).put('/admin/servers/Bad_Name').set(as(keys.admin)).send({ tools: [] }).expect(400);

    await request(g.url).delete('/admin/servers/extra').set(as(keys.admin)).expect(200);
    await request(g.url).get('/admin/servers/extra').set(as(keys.admin)).expect(404);
    await request(g.url).delete('/admin/servers/extra').set(as(keys.admin)).expect(404);
    expect(YAML.parse(fs.readFileSync(file, 'utf8')).servers.extra).toBeUndefined();
    await native('extra', { tool: 'e' }).expect(403); // keys.full has no server:extra; the server is gone either way
  });

  it('the console lists them (read-only) to the admin scope', async () => {
    const listed = await request(g.url).get('/console/api/servers').set(as(keys.admin)).expect(200);
    expect(listed.body.servers.map((s: { name: string; endpoint: string }) => [s.name, s.endpoint])).toEqual([
      ['research', '/servers/research/mcp'],
      ['other', '/servers/other/mcp'],
    ]);
    await request(g.url).get('/console/api/servers').set(as(keys.full)).expect(403);
  });

  it('is the admin scope’s only: other keys get 403', async () => {
    for (const k of [keys.full, keys.stranger]) {
      await request(g.url).get('/admin/servers').set(as(k)).expect(403);
      await request(g.url).put('/admin/servers/x').set(as(k)).send({ tools: [] }).expect(403);
      await request(g.url).delete('/admin/servers/research').set(as(k)).expect(403);
    }
    await request(g.url).get('/admin/servers').expect(401);
  });
});
