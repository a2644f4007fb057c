/**
 * Names and URIs no list shows (docs/gateway.md, issue 29's fidelity): a tool name nobody lists goes
 * to the only MCP server behind the gateway (or the one a call names), which answers for it as it
 * would directly; a URI nobody lists may be watched there; never a fleet name, a name MCP does not
 * allow, a tool its pin holds, nor (with two servers) an unqualified name; reads stay listed-only;
 * with authorization on, such a tool needs a destructive tool's scopes.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { newApiKey } from '../src/auth/auth';
import { MAX_WATCHED } from '../src/downstream/resource-watch';
import type { McpServerSpec } from '../src/core/types';
import { post2026, startGateway, startGatewayWithMcpServer, until, type RunningGateway } from './helpers';

const REPO = path.resolve(__dirname, '../../..');
const FIXTURE = path.join(__dirname, 'fixtures/unlisted-tools-server.ts');
const server: McpServerSpec = { transport: 'stdio', command: process.execPath, args: ['--import', 'tsx', FIXTURE], cwd: REPO, env: {} };

async function mcpClient(g: RunningGateway): Promise<Client> {
  const client = new Client({ name: 'unlisted', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
  return client;
}

const textOf = (result: unknown) => ((result as { content: { text: string }[] }).content ?? [])[0]?.text;

/** The tool names the server behind `g` was called with (its own record; REST's `result` is its one text block as JSON). */
async function callsSeen(g: RunningGateway, tool = 'calls_seen'): Promise<string[]> {
  const res = await request(g.url).post('/mcp').send({ tool, arguments: {} }).expect(200);
  return res.body.result as string[];
}

/** A REST caller's envelope carries the server's own result in `mcp`. */
const restText = (body: { mcp?: unknown }) => textOf(body.mcp);

describe('a name or URI no list shows, with one MCP server behind the gateway', () => {
  const tmp = tempDir('mcp-fleet-unlisted-');
  let g: RunningGateway;
  let client: Client;
  beforeAll(async () => {
    g = await startGatewayWithMcpServer('notes', server, tmp.dir, 'listed_echo');
    client = await mcpClient(g);
  });
  afterAll(async () => {
    await client?.close();
    await g?.stop();
    tmp.cleanup();
  });

  it("calls a tool it does not list there, as directly; its -32602 for a name is the caller's unknown tool in its words", async () => {
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('hidden_tool');
    expect(textOf(await client.callTool({ name: 'hidden_tool', arguments: { x: 1 } }))).toBe('hidden_tool ran with {"x":1}');
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: no_such_tool'),
    });
    // a 2026-07-28 client, a qualified name, a REST caller
    const modern = (await (await post2026(g.url, 'tools/call', { name: 'hidden_tool', arguments: {} })).json()) as { result: unknown };
    expect(textOf(modern.result)).toBe('hidden_tool ran with {}');
    expect(textOf(await client.callTool({ name: 'notes__hidden_tool', arguments: {} }))).toBe('hidden_tool ran with {}');
    const rest = await request(g.url)
      .post('/mcp')
      .send({ tool: 'hidden_tool', arguments: { y: 'z' } })
      .expect(200);
    expect(rest.body.success).toBe(true);
    expect(restText(rest.body)).toBe('hidden_tool ran with {"y":"z"}');
    const unknown = await request(g.url).post('/mcp').send({ tool: 'no_such_tool', arguments: {} }).expect(404);
    expect(unknown.body).toMatchObject({
      success: false,
      code: 'UNKNOWN_TOOL',
      error: expect.stringContaining('notes: Unknown tool: no_such_tool'),
    });
    // its one bad answer is that call's: the server stays served
    expect(g.gw.registry.get('notes')!.healthy).toBe(true);
    expect(await callsSeen(g)).toEqual(expect.arrayContaining(['hidden_tool', 'no_such_tool']));
  });

  it('never sends it a fleet tool name or a name MCP does not allow', async () => {
    const refused: [string, number, string][] = [
      ['echo', 503, 'UPSTREAM_UNAVAILABLE'], // alpha-mcp's (not registered here)
      ['store_memory', 503, 'UPSTREAM_UNAVAILABLE'], // memory-mcp's (planned)
      ['a b', 404, 'UNKNOWN_TOOL'],
      ['x'.repeat(129), 404, 'UNKNOWN_TOOL'],
      ['tab\there', 404, 'UNKNOWN_TOOL'],
      ['naïve', 404, 'UNKNOWN_TOOL'],
      ['', 400, 'VALIDATION_ERROR'],
    ];
    for (const [tool, status, code] of refused) {
      const res = await request(g.url).post('/mcp').send({ tool, arguments: {} });
      expect({ tool, status: res.status, code: res.body.code }).toEqual({ tool, status, code });
    }
    const seen = await callsSeen(g);
    for (const [tool] of refused) expect(seen).not.toContain(tool);
  });

  it('counts every such name under one label: random names cannot grow the metrics', async () => {
    for (let i = 0; i < 20; i++)
      await request(g.url)
        .post('/mcp')
        .send({ tool: `made_up_${i}`, arguments: {} })
        .expect(404);
    await request(g.url).post('/mcp').send({ tool: 'hidden_tool', arguments: {} }).expect(200);
    const metrics = (await request(g.url).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/tool="\(unlisted\)"/);
    expect(metrics).not.toMatch(/made_up_|hidden_tool/);
    expect(JSON.stringify((await request(g.url).get('/stats').expect(200)).body)).not.toMatch(/made_up_|hidden_tool/);
  });

  it('watches a URI it does not list there (the server decides), and still reads only what it lists', async () => {
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await client.subscribeResource({ uri: 'note://unlisted' });
    await until(() => updated.includes('note://unlisted'));
    // the server refuses a URI it does not serve; the gateway's own schemes never reach it
    await expect(client.subscribeResource({ uri: 'other://x' })).rejects.toMatchObject({ code: expect.any(Number) });
    await expect(client.subscribeResource({ uri: 'mega://secret' })).rejects.toMatchObject({ code: -32002 });
    await expect(client.subscribeResource({ uri: 'skill://notes/x' })).rejects.toMatchObject({ code: -32002 });
    await client.unsubscribeResource({ uri: 'note://unlisted' });
    // reading it: not found (the gateway reads only what a server listed); a listed one is read
    await expect(client.readResource({ uri: 'note://unlisted' })).rejects.toMatchObject({ code: -32002 });
    expect((await client.readResource({ uri: 'note://listed' })).contents[0]).toMatchObject({ text: 'the note note://listed' });
  });

  it('lets one session watch at most MAX_WATCHED resources: it cannot make the gateway and the server keep as many as it can name', async () => {
    const watcher = await mcpClient(g);
    try {
      for (let i = 0; i < MAX_WATCHED; i++) await watcher.subscribeResource({ uri: `note://many/${i}` });
      await expect(watcher.subscribeResource({ uri: 'note://many/one-more' })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining(`watches ${MAX_WATCHED} resources already`),
      });
      // one it watches already, again: fine; one given up makes room
      await watcher.subscribeResource({ uri: 'note://many/0' });
      await watcher.unsubscribeResource({ uri: 'note://many/0' });
      await watcher.subscribeResource({ uri: 'note://many/one-more' });
    } finally {
      await watcher.close();
    }
  });

  it('never calls a tool its pin holds: the pin answers', async () => {
    await request(g.url).post('/mcp').send({ tool: 'change_echo', arguments: {} }).expect(200);
    await until(() => g.gw.registry.get('notes')!.held.has('listed_echo'), 10_000);
    const before = (await callsSeen(g)).filter((n) => n === 'listed_echo').length;
    for (const name of ['listed_echo', 'notes__listed_echo']) {
      const res = await request(g.url)
        .post('/mcp')
        .send({ tool: name, arguments: { text: 'x' } });
      expect({ name, status: res.status, error: res.body.error }).toEqual({
        name,
        status: 503,
        error: expect.stringContaining('changed the definition of listed_echo'),
      });
    }
    expect((await callsSeen(g)).filter((n) => n === 'listed_echo').length).toBe(before);
  });
});

describe('a name or URI no list shows, with two MCP servers behind the gateway', () => {
  const tmp = tempDir('mcp-fleet-unlisted-two-');
  let g: RunningGateway;
  beforeAll(async () => {
    g = await startGateway(
      [
        { id: 'one', url: 'stdio:one', mcp: server },
        { id: 'two', url: 'stdio:two', mcp: server },
      ],
      tmp.dir,
      { HEALTH_POLL_MS: '600000', HEALTH_TIMEOUT_MS: '5000' },
      { ready: (r) => Boolean(r.gw.registry.get('one')?.healthy && r.gw.registry.get('two')?.healthy) },
    );
  });
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  it("an unqualified name is unknown (it could be either's); a qualified one goes to the server it names", async () => {
    const res = await request(g.url).post('/mcp').send({ tool: 'hidden_tool', arguments: {} }).expect(404);
    expect(res.body.code).toBe('UNKNOWN_TOOL');
    const two = await request(g.url).post('/mcp').send({ tool: 'two__hidden_tool', arguments: {} }).expect(200);
    expect(restText(two.body)).toBe('hidden_tool ran with {}');
    expect(await callsSeen(g, 'two__calls_seen')).toContain('hidden_tool');
    expect(await callsSeen(g, 'one__calls_seen')).not.toContain('hidden_tool');
    // a URI nobody lists is not found: it could be either's
    const client = await mcpClient(g);
    try {
      await expect(client.subscribeResource({ uri: 'note://unlisted' })).rejects.toMatchObject({ code: -32002 });
    } finally {
      await client.close();
    }
  });
});

describe('a tool no list shows, with authorization on', () => {
  const tmp = tempDir('mcp-fleet-unlisted-auth-');
  let g: RunningGateway;
  const writer = newApiKey('writer', ['tools:write']);
  const owner = newApiKey('owner', ['service:notes']);
  beforeAll(async () => {
    fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([writer.entry, owner.entry]));
    g = await startGatewayWithMcpServer('notes', server, tmp.dir, 'listed_echo', {
      API_KEYS_FILE: path.join(tmp.dir, 'keys.json'),
      AUTH_RESOURCE: 'http://127.0.0.1/mcp',
    });
  });
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  it('is judged destructive: tools:write may not call it, service:<id> may', async () => {
    const call = (key: string, tool: string) =>
      request(g.url)
        .post('/mcp')
        .set('authorization', `Bearer ${key}`)
        .send({ tool, arguments: { text: 't' } });
    expect((await call(writer.key, 'listed_echo')).status).toBe(200);
    const refused = await call(writer.key, 'hidden_tool');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'FORBIDDEN', details: { requiredScopes: ['tools:all', 'service:notes'] } });
    const allowed = await call(owner.key, 'hidden_tool');
    expect(allowed.status).toBe(200);
    expect(restText(allowed.body)).toBe('hidden_tool ran with {"text":"t"}');
  });
});

describe('MCP_FORWARD_UNLISTED=false', () => {
  const tmp = tempDir('mcp-fleet-unlisted-off-');
  let g: RunningGateway;
  beforeAll(async () => {
    g = await startGatewayWithMcpServer('notes', server, tmp.dir, 'listed_echo', { MCP_FORWARD_UNLISTED: 'false' });
  });
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  it('keeps every name no list shows unknown and every such URI not found; nothing reaches the server', async () => {
    for (const tool of ['hidden_tool', 'notes__hidden_tool']) {
      const res = await request(g.url).post('/mcp').send({ tool, arguments: {} });
      expect({ tool, status: res.status, code: res.body.code }).toEqual({ tool, status: 404, code: 'UNKNOWN_TOOL' });
    }
    const client = await mcpClient(g);
    try {
      await expect(client.callTool({ name: 'hidden_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
      await expect(client.subscribeResource({ uri: 'note://unlisted' })).rejects.toMatchObject({ code: -32002 });
    } finally {
      await client.close();
    }
    expect(await callsSeen(g)).not.toContain('hidden_tool');
  });
});
