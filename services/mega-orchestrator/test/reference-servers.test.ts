/**
 * The official reference MCP servers from npm behind the gateway (issue 29, fidelity): what a client
 * gets from them directly, it gets through the gateway.
 *
 * - @modelcontextprotocol/server-everything over Streamable HTTP (left for the gateway to find, and
 *   declared 2025-11-25), over the older HTTP+SSE transport (declared "sse", and found) and over
 *   stdio: the conformance suite's required server scenarios of both
 *   revisions directly and through the gateway; its tools, prompts and resources listed, and its
 *   tools called, by an MCP client directly and through the gateway (2025 and 2026-07-28 clients).
 * - @modelcontextprotocol/server-memory and server-filesystem over stdio (sandboxed, as the gateway
 *   starts every stdio server): the same tools, and the same answers to the same calls.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerSpec } from '../src/core/types';
import { ERAS, lostThroughGateway, requiredScenarioCounts, type ScenarioCounts } from './fidelity';
import { post2026, startGatewayWithMcpServer, type RunningGateway } from './helpers';

const REPO = path.resolve(__dirname, '../../..');
const bin = (pkg: string) => require.resolve(`@modelcontextprotocol/${pkg}/dist/index.js`, { paths: [REPO] });
/** The client capabilities the gateway declares to the servers behind it: a direct client declares the same (some servers list tools by them). */
const GATEWAY_CAPABILITIES = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

async function connect(transport: Transport): Promise<Client> {
  const client = new Client({ name: 'fidelity', version: '1.0.0' }, { capabilities: GATEWAY_CAPABILITIES });
  await client.connect(transport);
  return client;
}
const viaGateway = (g: RunningGateway) => connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
const stdio = (args: string[], env: Record<string, string> = {}) =>
  new StdioClientTransport({ command: process.execPath, args, env: { ...env, PATH: process.env.PATH ?? '' }, stderr: 'ignore' });

/**
 * The tools a client is shown, by name: a name the gateway qualified (`<id>__`, it collides with
 * another service's) as the server named it, and the note the gateway adds to such a tool's
 * description taken off.
 */
async function toolsOf(client: Client, id: string): Promise<Map<string, Record<string, unknown>>> {
  const { tools } = await client.listTools();
  return new Map(
    tools.map((t) => [
      t.name.replace(`${id}__`, ''),
      {
        description: t.description?.replace(/ \(Offered by [^)]*\)$/, ''),
        inputSchema: t.inputSchema,
        annotations: t.annotations,
        execution: t.execution,
      },
    ]),
  );
}

/**
 * Its answer to a call, as a client reads it: content, and structured content of a success (a
 * failed call's result carries the gateway's error envelope there besides the server's content,
 * docs/gateway.md).
 */
async function answer(client: Client, name: string, args: Record<string, unknown>) {
  const res = (await client.callTool({ name, arguments: args })) as Record<string, unknown>;
  const isError = res.isError ?? false;
  return { content: untimed(res.content), isError, ...(isError ? {} : { structuredContent: res.structuredContent }) };
}

/**
 * server-everything's dynamic resources say when they were made, to the second ("created at
 * 11:15:58 AM"): two calls a second apart differ there and nowhere else, so that clock time is
 * compared as a placeholder (every other character still must match).
 */
function untimed(content: unknown): unknown {
  return JSON.parse(JSON.stringify(content ?? null).replace(/created at \d{1,2}:\d{2}:\d{2}( [AP]M)?/g, 'created at <time>'));
}

describe('@modelcontextprotocol/server-everything behind the gateway', () => {
  const tmp = tempDir('mcp-fleet-everything-');
  let child: ChildProcess;
  let sseChild: ChildProcess;
  let url: string;
  let sseUrl: string;
  const fronts = (): { name: string; mcp: McpServerSpec }[] => [
    { name: 'HTTP, found', mcp: { transport: 'streamable-http', url, headers: {} } },
    { name: 'HTTP, declared 2025-11-25', mcp: { transport: 'streamable-http', url, headers: {}, protocolVersion: '2025-11-25' } },
    // the same server over the older HTTP+SSE transport: declared "sse", and found (its POST /sse answers 404)
    { name: 'SSE, declared', mcp: { transport: 'sse', url: sseUrl, headers: {} } },
    { name: 'SSE, found', mcp: { transport: 'streamable-http', url: sseUrl, headers: {} } },
    {
      name: 'stdio, found',
      mcp: { transport: 'stdio', command: process.execPath, args: [bin('server-everything'), 'stdio'], cwd: REPO, env: {} },
    },
  ];

  /** server-everything over one transport, on a free port: resolved once it says it listens. */
  const everything = async (transport: 'streamableHttp' | 'sse', ready: RegExp): Promise<{ child: ChildProcess; port: number }> => {
    const port = await freePort();
    const started = spawn(process.execPath, [bin('server-everything'), transport], {
      env: { PATH: process.env.PATH ?? '', PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await new Promise<void>((resolve) => started.stderr!.on('data', (b: Buffer) => ready.test(b.toString()) && resolve()));
    return { child: started, port };
  };

  beforeAll(async () => {
    const http = await everything('streamableHttp', /listening on port/);
    child = http.child;
    url = `http://127.0.0.1:${http.port}/mcp`;
    const sse = await everything('sse', /running on port/);
    sseChild = sse.child;
    sseUrl = `http://127.0.0.1:${sse.port}/sse`;
  });
  afterAll(() => {
    child?.kill();
    sseChild?.kill();
    tmp.cleanup();
  });

  it('every required conformance scenario it passes directly passes through the gateway', async () => {
    const direct = new Map<string, ScenarioCounts>();
    for (const era of ERAS) direct.set(era, await requiredScenarioCounts(url, era, tmp.dir));
    // it speaks 2025 only: a 2026-07-28 client gets more through the gateway than directly
    expect(direct.get('2025-11-25')!.passed.size).toBeGreaterThanOrEqual(10);
    // among them those on tools and a resource it does not list (test_simple_text, test_error_handling,
    // test://watched-resource): the gateway passes those to it, its only server, and it answers for them
    expect([...direct.get('2025-11-25')!.passed]).toEqual(
      expect.arrayContaining(['tools-call-simple-text', 'tools-call-error', 'resources-subscribe', 'resources-unsubscribe']),
    );
    // what each front and client era loses, with the failed checks of each scenario lost
    const lost: Record<string, Record<string, unknown>> = {};
    for (const { name, mcp } of fronts()) {
      const g = await startGatewayWithMcpServer('everything', mcp, path.join(tmp.dir, name.replace(/\W+/g, '-')), 'get-sum');
      try {
        for (const era of ERAS) {
          // a scenario it passes directly that fails through the gateway is run once more
          const through = await requiredScenarioCounts(`${g.url}/mcp`, era, tmp.dir, direct.get(era)!.passed);
          lost[`${era}, ${name}`] = lostThroughGateway(direct.get(era)!, through);
        }
      } finally {
        await g.stop();
      }
    }
    expect(lost).toEqual(Object.fromEntries(Object.keys(lost).map((k) => [k, {}])));
    expect(Object.keys(lost)).toHaveLength(fronts().length * ERAS.length);
  }, 300_000);

  it('lists the same tools, prompts and resources, and answers the same calls, directly and through the gateway (both client eras)', async () => {
    const direct = await connect(new StreamableHTTPClientTransport(new URL(url)));
    // the gateway's 5 s default time limit of a call is too short when the suite's other workers load the machine
    const g = await startGatewayWithMcpServer('everything', fronts()[0].mcp, path.join(tmp.dir, 'calls'), 'get-sum', {
      DOWNSTREAM_TIMEOUT_MS: '30000',
    });
    const through = await viaGateway(g);
    try {
      const tools = await toolsOf(direct, 'everything');
      const shown = await toolsOf(through, 'everything');
      // execution as the server declared it ("forbidden" included), but a task-required tool is an option for a
      // 2025-11-25 session: the gateway drives the server's task when the session calls it plainly (docs/gateway.md)
      const asOffered = (tool: Record<string, unknown>) =>
        (tool.execution as { taskSupport?: string } | undefined)?.taskSupport === 'required'
          ? { ...tool, execution: { ...(tool.execution as object), taskSupport: 'optional' } }
          : tool;
      for (const [name, tool] of tools) expect({ name, ...shown.get(name) }).toEqual({ name, ...asOffered(tool) });
      expect((await through.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(
        (await direct.listPrompts()).prompts.map((p) => p.name).sort(),
      );
      const uris = (r: { resources: { uri: string }[] }) => r.resources.map((x) => x.uri);
      const listedDirect = uris(await direct.listResources());
      expect(uris(await through.listResources())).toEqual(expect.arrayContaining(listedDirect));
      expect(await through.readResource({ uri: listedDirect[0] })).toEqual(await direct.readResource({ uri: listedDirect[0] }));

      const calls: [string, Record<string, unknown>][] = [
        ['get-sum', { a: 2, b: 3 }],
        ['get-tiny-image', {}],
        ['get-annotated-message', { messageType: 'error', includeImage: true }],
        ['get-structured-content', { location: 'New York' }],
        ['get-resource-reference', { resourceType: 'Text', resourceId: 1 }],
        ['get-resource-links', { count: 2 }],
        ['get-sum', { a: 'not a number', b: 3 }],
      ];
      const names = new Set((await through.listTools()).tools.map((t) => t.name));
      for (const [name, args] of calls) {
        const asNamed = names.has(name) ? name : `everything__${name}`;
        const expected = await answer(direct, name, args);
        expect({ name, ...(await answer(through, asNamed, args)) }).toEqual({ name, ...expected });
        // a 2026-07-28 client gets the same content (the server is spoken to in 2025)
        const modern = (await (await post2026(g.url, 'tools/call', { name: asNamed, arguments: args })).json()) as { result: any };
        // a whole answer without a result (an error) is shown as it is
        expect({ name, answer: modern }).toEqual({ name, answer: expect.objectContaining({ result: expect.anything() }) });
        expect({ name, content: untimed(modern.result.content), isError: modern.result.isError ?? false }).toEqual({
          name,
          content: expected.content,
          isError: expected.isError,
        });
      }
      // echo collides with a tool of the test inventory: its own name qualified, the same answer
      expect(await answer(through, names.has('echo') ? 'echo' : 'everything__echo', { message: 'hi' })).toEqual(
        await answer(direct, 'echo', { message: 'hi' }),
      );
    } finally {
      await through.close();
      await direct.close();
      await g.stop();
    }
  }, 60_000);
});

describe('@modelcontextprotocol/server-memory and server-filesystem over stdio, sandboxed', () => {
  const tmp = tempDir('mcp-fleet-reference-stdio-');
  afterAll(() => tmp.cleanup());

  /** A server directly (its own `dir`) and through a gateway (another `dir` of the same contents, writable in its sandbox). */
  async function both(pkg: string, id: string, tool: string, setup: (dir: string) => { args: string[]; env: Record<string, string> }) {
    const [mine, theirs] = ['direct', 'gateway'].map((d) => fs.mkdtempSync(path.join(tmp.dir, `${id}-${d}-`)));
    const local = setup(mine);
    const remote = setup(theirs);
    const direct = await connect(stdio([bin(pkg), ...local.args], local.env));
    const mcp: McpServerSpec = {
      transport: 'stdio',
      command: process.execPath,
      args: [bin(pkg), ...remote.args],
      cwd: REPO,
      env: remote.env,
      sandbox: { writable: [theirs] },
    };
    const g = await startGatewayWithMcpServer(id, mcp, path.join(tmp.dir, `${id}-data`), tool);
    const through = await viaGateway(g);
    const same = (value: unknown, dir: string) => JSON.parse(JSON.stringify(value).split(dir).join('<dir>')) as unknown;
    return {
      tools: async () => expect(await toolsOf(through, id)).toEqual(await toolsOf(direct, id)),
      call: async (name: string, args: (dir: string) => Record<string, unknown>) =>
        expect({ name, ...(same(await answer(through, name, args(theirs)), theirs) as object) }).toEqual({
          name,
          ...(same(await answer(direct, name, args(mine)), mine) as object),
        }),
      close: async () => {
        await through.close();
        await direct.close();
        await g.stop();
      },
    };
  }

  it('server-memory: the same tools, the same graph after the same calls', async () => {
    const s = await both('server-memory', 'memory', 'read_graph', (dir) => ({
      args: [],
      env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') },
    }));
    try {
      await s.tools();
      const entities = [
        { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] },
        { name: 'Engine', entityType: 'machine', observations: ['analytical'] },
      ];
      await s.call('create_entities', () => ({ entities }));
      await s.call('create_relations', () => ({ relations: [{ from: 'Ada', to: 'Engine', relationType: 'programmed' }] }));
      await s.call('add_observations', () => ({ observations: [{ entityName: 'Ada', contents: ['born 1815'] }] }));
      await s.call('read_graph', () => ({}));
      await s.call('search_nodes', () => ({ query: 'program' }));
      await s.call('open_nodes', () => ({ names: ['Engine', 'Nobody'] }));
      await s.call('create_relations', () => ({ relations: [{ from: 1 }] }));
    } finally {
      await s.close();
    }
  }, 60_000);

  it('server-filesystem: the same tools, the same answers inside its directory and the same refusal outside it', async () => {
    const s = await both('server-filesystem', 'files', 'read_text_file', (dir) => {
      fs.writeFileSync(path.join(dir, 'hello.txt'), 'hello\nworld\n');
      return { args: [dir], env: {} };
    });
    try {
      await s.tools();
      await s.call('list_allowed_directories', () => ({}));
      await s.call('read_text_file', (dir) => ({ path: path.join(dir, 'hello.txt'), head: 1 }));
      await s.call('write_file', (dir) => ({ path: path.join(dir, 'notes', '..', 'new.txt'), content: 'written' }));
      await s.call('edit_file', (dir) => ({ path: path.join(dir, 'new.txt'), edits: [{ oldText: 'written', newText: 'edited' }] }));
      await s.call('read_text_file', (dir) => ({ path: path.join(dir, 'new.txt') }));
      await s.call('directory_tree', (dir) => ({ path: dir }));
      await s.call('search_files', (dir) => ({ path: dir, pattern: '*.txt' }));
      // outside its directory: refused the same way
      await s.call('read_text_file', () => ({ path: '/etc/hostname' }));
    } finally {
      await s.close();
    }
  }, 60_000);
});
