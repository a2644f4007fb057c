/**
 * A sloppy MCP server behind the gateway (issue 29: tolerant in what it accepts, exact in what it
 * sends): test/fixtures/sloppy-mcp-server.mjs writes `null` for absent fields, schemas MCP does not
 * allow, a result without content, an unknown content block and a string id for a numeric one. Before,
 * the SDK client refused its tools/list and the server read as unhealthy, with none of its tools
 * served. Now every tool is served, and what the gateway lists and answers passes the SDK's own
 * checks of the revision (the client of each era below would refuse it otherwise).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import readline from 'node:readline';
import { ListToolsResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { tempDir } from '@mcp-fleet/testing';
import { tolerated } from '../src/downstream/mcp';
import { LineMender, MEND_MAX_BYTES, mendedLines } from '../src/downstream/mcp/tolerant';
import { gatewayWithClient, post2026, startGateway, startGatewayWithMcpServer, until } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'sloppy-mcp-server.mjs');

describe('a sloppy MCP server behind the gateway', () => {
  const f = gatewayWithClient(
    () => [
      {
        id: 'sloppy',
        url: 'stdio:sloppy',
        mcp: { transport: 'stdio', command: process.execPath, args: [FIXTURE], cwd: path.dirname(FIXTURE), env: {} },
      },
    ],
    ['string_id'],
    {},
  );

  it('is healthy and every tool is listed with a schema MCP allows (the SDK client checked the list)', async () => {
    const services = (await (await fetch(`${f.g.url}/services`)).json()) as { services: { id: string; status: string; tools: number }[] };
    expect(services.services.find((s) => s.id === 'sloppy')).toMatchObject({ status: 'healthy', tools: 13 });
    const { tools } = await f.client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(byName.get_weather).toMatchObject({
      inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
    });
    expect(byName.get_weather.inputSchema).not.toHaveProperty('required');
    expect(byName.get_weather).not.toHaveProperty('title');
    // no annotations declared (none, or null): listed without, as the server listed it (not as an empty object)
    expect(byName.get_weather).not.toHaveProperty('annotations');
    expect(byName.structured_only).not.toHaveProperty('annotations');
    expect(byName.untyped_schema.inputSchema).toEqual({ type: 'object', properties: { n: {}, never: { not: {} } } });
    expect(byName.structured_only).not.toHaveProperty('outputSchema');
    expect(byName.odd_block.inputSchema).toEqual({ type: 'object', required: ['a'] });
    expect(byName.odd_block.annotations).toEqual({ readOnlyHint: true });
    expect(byName.string_id.inputSchema).toEqual({ type: 'object' });
  });

  it('a 2026-07-28 caller gets the same list, valid for its revision', async () => {
    const res = await post2026(f.g.url, 'tools/list', {});
    const { result } = (await res.json()) as { result: Record<string, unknown> };
    expect(ListToolsResultSchema.safeParse(result).success).toBe(true);
    const names = (result.tools as { name: string }[]).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['get_weather', 'untyped_schema', 'structured_only', 'odd_block', 'string_id']));
    const listed = Object.fromEntries((result.tools as { name: string }[]).map((t) => [t.name, t]));
    expect(listed.get_weather).not.toHaveProperty('annotations');
    expect(listed.odd_block).toMatchObject({ annotations: { readOnlyHint: true } });
  });

  it('calls answer as the server meant: nulls left out, an unknown block kept as its JSON, a string id matched', async () => {
    expect(await f.client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).toEqual({
      content: [{ type: 'text', text: 'sunny in Oslo' }],
    });
    const structured = await f.client.callTool({ name: 'structured_only', arguments: {} });
    // the data the tool returned is its own: a null inside structuredContent is kept
    expect(structured).toEqual({ content: [], structuredContent: { n: 7, none: null } });
    expect(await f.client.callTool({ name: 'odd_block', arguments: {} })).toMatchObject({
      content: [
        { type: 'text', text: JSON.stringify({ type: 'chart', points: [1, 2] }) },
        { type: 'text', text: 'after the chart' },
      ],
    });
    expect(await f.client.callTool({ name: 'string_id', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'matched' }] });
    // output schemas that name their dialect (2020-12, MCP's default; draft-07) with $defs and formats:
    // checked by the gateway's SDK client and by this one, and passed
    expect(await f.client.callTool({ name: 'dialect_2020', arguments: {} })).toMatchObject({
      structuredContent: { at: '2026-11-27T10:00:00Z', tag: 'v1' },
    });
    expect(await f.client.callTool({ name: 'dialect_07', arguments: {} })).toMatchObject({ structuredContent: { n: 7 } });
  });

  it('a result in the shape of protocol 2024-10-07 ({ toolResult }) reaches every caller: MCP of both eras as it came, REST as its result', async () => {
    expect(await f.client.callTool({ name: 'legacy_result', arguments: {} })).toEqual({
      toolResult: { answer: 42 },
      content: [],
    });
    const modern = (await (await post2026(f.g.url, 'tools/call', { name: 'legacy_result', arguments: {} })).json()) as { result: unknown };
    expect(modern.result).toEqual({ toolResult: { answer: 42 }, content: [], resultType: 'complete' });
    const rest = await fetch(`${f.g.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'legacy_result', arguments: {} }),
    });
    expect([rest.status, ((await rest.json()) as { result: unknown }).result]).toEqual([200, { answer: 42 }]);
  });

  it("answers the SDK's transport would drop are mended before it reads them: a result's _meta null, no jsonrpc, an error without a message", async () => {
    expect(await f.client.callTool({ name: 'meta_null', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'meta was null' }],
    });
    expect(await f.client.callTool({ name: 'bare_answer', arguments: {} })).toMatchObject({
      content: [{ type: 'text', text: 'no jsonrpc' }],
    });
    // the server's error, passed on as it answered it, its missing message said (not a time-out); its
    // code -32000 (the SDK's own for a closed connection) is the server's: its process stays, its breaker is not charged
    const upstream = f.g.gw.registry.get('sloppy')!.upstream as unknown as { starts: number; pid?: number };
    const before = { starts: upstream.starts, pid: upstream.pid };
    const error = await f.client.callTool({ name: 'bare_error', arguments: {} }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: -32000, message: expect.stringContaining('an error without a message') });
    expect({ starts: upstream.starts, pid: upstream.pid }).toEqual(before);
    expect(await f.client.callTool({ name: 'bare_answer', arguments: {} })).toMatchObject({
      content: [{ type: 'text', text: 'no jsonrpc' }],
    });
  });

  it('an answer whose id is null or absent is the answer of the one request the server has not answered yet', async () => {
    expect(await f.client.callTool({ name: 'null_id', arguments: {} })).toEqual({ content: [{ type: 'text', text: 'id was null' }] });
    const idless = await f.client.callTool({ name: 'no_id', arguments: {} }).catch((err: unknown) => err);
    expect(idless).toMatchObject({ code: -32050, message: expect.stringContaining('no id on this error') });
    // and the answers after it are matched as before
    expect(await f.client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).toEqual({
      content: [{ type: 'text', text: 'sunny in Oslo' }],
    });
  });

  it('its prompts are listed and got without the nulls', async () => {
    const { prompts } = await f.client.listPrompts();
    expect(prompts.find((p) => p.name === 'greet')).toEqual({ name: 'greet', arguments: [{ name: 'who' }] });
    const got = await f.client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
    expect(got.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'hello Ada' } }]);
  });
});

describe('a sloppy MCP server over Streamable HTTP', () => {
  const servers: ChildProcess[] = [];

  /** The fixture over HTTP, answering JSON or an event stream: its URL. */
  async function sloppyOverHttp(mode: 'json' | 'sse'): Promise<string> {
    const child = spawn(process.execPath, [FIXTURE], { env: { ...process.env, SLOPPY_HTTP: mode }, stdio: ['ignore', 'pipe', 'inherit'] });
    servers.push(child);
    const [line] = (await once(readline.createInterface({ input: child.stdout! }), 'line')) as [string];
    return `http://127.0.0.1:${/listening (\d+)/.exec(line)![1]}/mcp`;
  }

  const f = gatewayWithClient(
    async () => {
      const mcp = (url: string) => ({ transport: 'streamable-http' as const, url, headers: {}, protocolVersion: '2025-11-25' as const });
      return Promise.all(
        (['json', 'sse'] as const).map(async (mode) => {
          const url = await sloppyOverHttp(mode);
          return { id: `sloppy-${mode}`, url, mcp: mcp(url) };
        }),
      );
    },
    (g) => ['sloppy-json', 'sloppy-sse'].every((id) => g.gw.registry.get(id)!.healthy),
    {},
    () => servers.forEach((child) => child.kill()),
  );

  it("mends what the SDK's transport would drop in a JSON answer and in an event stream", async () => {
    for (const id of ['sloppy-json', 'sloppy-sse']) {
      expect([id, await f.client.callTool({ name: `${id}__meta_null`, arguments: {} })]).toEqual([
        id,
        { content: [{ type: 'text', text: 'meta was null' }] },
      ]);
      expect(await f.client.callTool({ name: `${id}__bare_answer`, arguments: {} })).toMatchObject({
        content: [{ type: 'text', text: 'no jsonrpc' }],
      });
      const error = await f.client.callTool({ name: `${id}__bare_error`, arguments: {} }).catch((err: unknown) => err);
      expect([id, error]).toEqual([
        id,
        expect.objectContaining({ code: -32000, message: expect.stringContaining('an error without a message') }),
      ]);
      // an answer whose id is null or absent is the answer of the one call its POST carried
      expect([id, await f.client.callTool({ name: `${id}__null_id`, arguments: {} })]).toEqual([
        id,
        { content: [{ type: 'text', text: 'id was null' }] },
      ]);
      const idless = await f.client.callTool({ name: `${id}__no_id`, arguments: {} }).catch((err: unknown) => err);
      expect([id, idless]).toEqual([
        id,
        expect.objectContaining({ code: -32050, message: expect.stringContaining('no id on this error') }),
      ]);
      // the rest of its answers as over stdio
      expect(await f.client.callTool({ name: `${id}__get_weather`, arguments: { city: 'Oslo' } })).toEqual({
        content: [{ type: 'text', text: 'sunny in Oslo' }],
      });
    }
  });
});

describe('tolerated', () => {
  it('mends only lines that need it, and passes a chunk none of whose lines does as the same Buffer', () => {
    const fine = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"content":[],"_meta":{"a":1}}}\n{"jsonrpc":"2.0","method":"x"}\n');
    expect(mendedLines(fine)).toBe(fine);
    const text = 'not json at all\n';
    expect(mendedLines(Buffer.from(text)).toString()).toBe(text);
    const mixed = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"_meta": null,"x":1}}\n{"id":2,"error":{"code":"bad","message":"m"}}\n');
    expect(mendedLines(mixed).toString().split('\n')).toEqual([
      '{"jsonrpc":"2.0","id":1,"result":{"x":1}}',
      '{"id":2,"error":{"code":-32603,"message":"m"},"jsonrpc":"2.0"}',
      '',
    ]);
    // with the call's id known (an HTTP answer), an answer without a usable id is the call's; one naming it is left as it is
    const idless = Buffer.from('{"jsonrpc":"2.0","id":null,"result":{}}\n{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}\n');
    expect(mendedLines(idless, 7).toString().split('\n')).toEqual([
      '{"jsonrpc":"2.0","id":7,"result":{}}',
      '{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":7}',
      '',
    ]);
    const named = Buffer.from('{"jsonrpc":"2.0","id": 7,"result":{}}\n{"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n');
    expect(mendedLines(named, 7)).toBe(named);
    expect(mendedLines(idless).toString()).toBe(idless.toString());
    // a result's own data keeps its nulls: only the message's own _meta is left out
    const deep = Buffer.from('{"jsonrpc":"2.0","id":3,"result":{"structuredContent":{"_meta":null}}}\n');
    expect(mendedLines(deep)).toBe(deep);
  });

  it('mends an HTTP answer across its chunks (an event stream line by line, JSON whole); what is over MEND_MAX_BYTES passes as it came', () => {
    const run = (events: boolean, chunks: string[]) => {
      const mender = new LineMender(events);
      const out = chunks.map((c) => mender.push(Buffer.from(c)));
      out.push(mender.flush());
      return Buffer.concat(out.filter((o) => o !== undefined)).toString();
    };
    const msg = '{"id":1,"result":{"_meta":null,"content":[]}}';
    const mended = '{"id":1,"result":{"content":[]},"jsonrpc":"2.0"}';
    expect(run(true, [`event: message\ndata: ${msg.slice(0, 10)}`, `${msg.slice(10)}\n\n`])).toBe(`event: message\ndata: ${mended}\n\n`);
    expect(run(false, [msg.slice(0, 5), msg.slice(5)])).toBe(mended);
    const big = `{"id":1,"result":{"_meta":null,"x":"${'a'.repeat(MEND_MAX_BYTES)}"}}`;
    const [a, b] = [big.slice(0, 600_000), big.slice(600_000)];
    expect(run(false, [a, b])).toBe(big);
    // a line too long to mend passes as it came; the next one is mended
    expect(run(true, [`data: ${a}`, `${b}\n\ndata: ${msg}\n`])).toBe(`data: ${big}\n\ndata: ${mended}\n`);
    expect(run(true, [`data: ${a}`, b, `${b}\ndata: ${msg}\n`])).toBe(`data: ${a}${b}${b}\ndata: ${mended}\n`);
  });

  it('passes an answer that needs nothing as the same object (nothing copied per call)', () => {
    const result = { content: [{ type: 'text', text: 'x' }], structuredContent: { a: null }, isError: false };
    expect(tolerated(result)).toBe(result);
    const list = { tools: [{ name: 't', inputSchema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] } }] };
    expect(tolerated(list)).toBe(list);
  });

  it("leaves the nulls out of a read's contents and a completion", () => {
    expect(tolerated({ contents: [{ uri: 'file:///a', mimeType: null, text: 'x' }] })).toEqual({
      contents: [{ uri: 'file:///a', text: 'x' }],
    });
    expect(tolerated({ completion: { values: ['a'], total: null, hasMore: null } })).toEqual({ completion: { values: ['a'] } });
  });

  it('leaves out an outputSchema or inputSchema of another type, and a non-object properties', () => {
    const out = tolerated({
      tools: [
        { name: 'a', inputSchema: { type: 'string' }, outputSchema: 'x' },
        { name: 'b', inputSchema: { type: 'object', properties: [1] }, outputSchema: { properties: { n: { type: 'number' } } } },
      ],
    });
    expect(out.tools).toEqual([
      { name: 'a', inputSchema: { type: 'object' } },
      { name: 'b', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'number' } } } },
    ]);
    expect(ListToolsResultSchema.safeParse(out).success).toBe(true);
  });
});

describe('a server that does not answer ping', () => {
  const tmp = tempDir('mcp-fleet-pingless-');
  afterAll(() => tmp.cleanup());

  /** The sloppy server with its ping answered per `mode`: its /services entry after a few health checks, and a call's answer. */
  async function behind(mode: 'unknown' | 'silent') {
    const g = await startGatewayWithMcpServer(
      `ping-${mode}`,
      { transport: 'stdio', command: process.execPath, args: [FIXTURE], cwd: path.dirname(FIXTURE), env: { SLOPPY_PING: mode } },
      path.join(tmp.dir, mode),
      'untyped_schema',
      { HEALTH_TIMEOUT_MS: '2000' },
    );
    try {
      for (let i = 0; i < 3; i++) await g.gw.refresh();
      const services = (await (await fetch(`${g.url}/services`)).json()) as { services: { id: string; status: string; tools: number }[] };
      const res = await fetch(`${g.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'untyped_schema', arguments: {} } }),
      });
      return { entry: services.services.find((s) => s.id === `ping-${mode}`), call: (await res.json()) as { result?: unknown } };
    } finally {
      await g.stop();
    }
  }

  it('one that answers ping with -32601 (it has none) is alive: healthy, its tools served', async () => {
    const { entry, call } = await behind('unknown');
    expect(entry).toMatchObject({ status: 'healthy', tools: 13 });
    expect(call.result).toMatchObject({ content: [{ type: 'text', text: 'ok' }] });
  }, 60_000);

  it('one that never answers ping is asked a list instead, and stays healthy', async () => {
    const { entry, call } = await behind('silent');
    expect(entry).toMatchObject({ status: 'healthy', tools: 13 });
    expect(call.result).toMatchObject({ content: [{ type: 'text', text: 'ok' }] });
  }, 60_000);
});

describe('a server whose tools/list is slower than HEALTH_TIMEOUT_MS', () => {
  const tmp = tempDir('mcp-fleet-slow-list-');
  afterAll(() => tmp.cleanup());

  it('is not given up: its list goes on, and the service is polled again when it arrives, its tools then served', async () => {
    const g = await startGateway(
      [
        {
          id: 'slow-list',
          url: 'stdio:slow-list',
          mcp: {
            transport: 'stdio',
            command: process.execPath,
            args: [FIXTURE],
            cwd: path.dirname(FIXTURE),
            env: { SLOPPY_LIST_MS: '1500' },
          },
        },
      ],
      tmp.dir,
      // no poll of its own comes before the test ends: only the list's end can bring the tools in
      { HEALTH_POLL_MS: '600000', HEALTH_TIMEOUT_MS: '500', DOWNSTREAM_TIMEOUT_MS: '10000' },
    );
    try {
      const entry = async () =>
        (
          (await (await fetch(`${g.url}/services`)).json()) as { services: { id: string; status: string; reason?: string }[] }
        ).services.find((s) => s.id === 'slow-list');
      // the first poll (startGateway's refresh) found the list still running
      expect((await entry())?.reason).toMatch(
        /tools\/list has not answered within HEALTH_TIMEOUT_MS \(500 ms\); still waiting for it \(up to 10000 ms\)/,
      );
      await until(() => g.gw.registry.catalog.byName.has('untyped_schema'), 10_000);
      expect(await entry()).toMatchObject({ status: 'healthy' });
    } finally {
      await g.stop();
    }
  }, 30_000);
});
