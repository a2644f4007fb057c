/**
 * An MCP server of the stateless revision (2026-07-28) behind the gateway, declared with
 * "protocolVersion": "2026-07-28": listed and called through the v2 client, and what it asks
 * in-band (input_required) reaches the caller of that call in its own era: a 2026-07-28 client sees
 * the server's own keys (user_name), a 2025-era session is asked on its call's event stream. The
 * server is a real HTTP server that refuses initialize.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { conformanceProblems, runConformanceScenarios, type ConformanceCheck } from '@mcp-fleet/testing/conformance';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import request from 'supertest';
import { META_2026, post2026, startGateway, type RunningGateway } from './helpers';
import { startModernServer, type ModernServer } from './fixtures/modern-mcp-server';

const CAPS = { elicitation: {} };

/** The modern fixture server, and a gateway in front of it that declares it 2026-07-28. */
async function gatewayInFront(dir: string): Promise<{ server: ModernServer; g: RunningGateway }> {
  const server = await startModernServer();
  const mcp = { transport: 'streamable-http' as const, url: server.url, headers: {}, protocolVersion: '2026-07-28' as const };
  return { server, g: await startGateway([{ id: 'modern', url: server.url, mcp }], dir) };
}

describe('a 2026-07-28 MCP server behind the gateway', () => {
  const tmp = tempDir('mcp-fleet-modern-');
  let server: ModernServer;
  let g: RunningGateway;

  beforeAll(async () => {
    ({ server, g } = await gatewayInFront(tmp.dir));
  });
  afterAll(async () => {
    await g?.stop();
    await server?.stop();
    tmp.cleanup();
  });

  async function call2026(name: string, extra: Record<string, unknown> = {}) {
    const res = await post2026(
      g.url,
      'tools/call',
      { name, arguments: {}, ...extra },
      { meta: { ...META_2026, 'io.modelcontextprotocol/clientCapabilities': CAPS } },
    );
    return (await res.json()) as { result?: Record<string, any>; error?: { code: number; message: string } };
  }

  it('is listed and called over 2026-07-28 (server/discover, never initialize)', async () => {
    const tools = (await request(g.url).get('/tools/list').expect(200)).body.tools.map((t: { name: string }) => t.name);
    expect(tools).toEqual(expect.arrayContaining(['test_input_required_result_elicitation', 'modern_ask_twice', 'modern_echo']));
    const echoed = await call2026('modern_echo', { arguments: { text: 'hi' } });
    expect(echoed.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'hi' }] });
    expect(server.methods).toContain('server/discover');
    expect(server.methods).not.toContain('initialize');
  });

  it('passes its input_required to a 2026-07-28 caller under the server’s own keys, and the retry finishes the call', async () => {
    const first = await call2026('test_input_required_result_elicitation');
    expect(first.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { user_name: { method: 'elicitation/create', params: { message: 'What is your name?' } } },
    });
    const done = await call2026('test_input_required_result_elicitation', {
      inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
      requestState: first.result!.requestState,
    });
    expect(done.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Hello, Ada!' }] });
  });

  it('carries the server’s requestState between rounds', async () => {
    const r1 = await call2026('modern_ask_twice');
    expect(Object.keys(r1.result!.inputRequests)).toEqual(['name']);
    const r2 = await call2026('modern_ask_twice', {
      inputResponses: { name: { action: 'accept', content: { name: 'Grace' } } },
      requestState: r1.result!.requestState,
    });
    expect(r2.result!.inputRequests.colour.params.message).toBe('Grace, your colour?');
    const done = await call2026('modern_ask_twice', {
      inputResponses: { colour: { action: 'accept', content: { colour: 'teal' } } },
      requestState: r2.result!.requestState,
    });
    expect(done.result!.content[0].text).toBe('Grace likes teal.');
  });

  it('asks a 2025-era session on its call’s stream, tools and prompts alike', async () => {
    const client = new Client({ name: 'v1', version: '1.0.0' }, { capabilities: CAPS });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      const field = /topic/.test(req.params.message) ? 'topic' : /colour/.test(req.params.message) ? 'colour' : 'name';
      return { action: 'accept', content: { [field]: field === 'colour' ? 'red' : field === 'topic' ? 'tides' : 'Lin' } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
    const hello = (await client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} })) as CallToolResult;
    expect(hello.content).toEqual([{ type: 'text', text: 'Hello, Lin!' }]);
    const twice = (await client.callTool({ name: 'modern_ask_twice', arguments: {} })) as CallToolResult;
    expect(twice.content).toEqual([{ type: 'text', text: 'Lin likes red.' }]);
    const prompt = await client.getPrompt({ name: 'modern_prompt' });
    expect(prompt.messages[0].content).toEqual({ type: 'text', text: 'Write about tides.' });
    expect(asked).toEqual(['What is your name?', 'Your name?', 'Lin, your colour?', 'Which topic?']);
    await client.close();
  });

  it('tells a caller that cannot be asked what the server wanted, and an unknown tool stays the server’s error', async () => {
    // the REST route has no client to ask
    const rest = await request(g.url).post('/mcp').send({ tool: 'test_input_required_result_elicitation', arguments: {} });
    expect(rest.status).toBeGreaterThanOrEqual(400);
    expect(rest.body.error).toContain(
      'cannot answer elicitation/create: it did not come over MCP from a client that declared the capability',
    );
    const unknown = await call2026('modern_nothing');
    expect(unknown.error ?? unknown.result).toBeDefined();
    expect(JSON.stringify(unknown)).toMatch(/modern_nothing/);
  });
});

describe('an HTTP MCP server not declared 2026-07-28 that only speaks it', () => {
  const tmp = tempDir('mcp-fleet-modern-found-');
  let server: ModernServer;
  let g: RunningGateway;

  beforeAll(async () => {
    server = await startModernServer();
    const mcp = { transport: 'streamable-http' as const, url: server.url, headers: {} };
    g = await startGateway([{ id: 'modern', url: server.url, mcp }], tmp.dir);
  });
  afterAll(async () => {
    await g?.stop();
    await server?.stop();
    tmp.cleanup();
  });

  it('is found by server/discover (asked first, issue 29), and used as one from then on', async () => {
    const tools = (await request(g.url).get('/tools/list').expect(200)).body.tools.map((t: { name: string }) => t.name);
    expect(tools).toContain('modern_echo');
    const res = await post2026(g.url, 'tools/call', { name: 'modern_echo', arguments: { text: 'found' } });
    expect(((await res.json()) as { result: { content: unknown } }).result.content).toEqual([{ type: 'text', text: 'found' }]);
    // asked server/discover first, it is never asked initialize: only the new revision's requests
    expect(server.methods[0]).toBe('server/discover');
    expect(server.methods).not.toContain('initialize');
  });
});

describe('a stdio MCP server that only speaks 2026-07-28', () => {
  const tmp = tempDir('mcp-fleet-modern-stdio-');
  const fixture = path.join(__dirname, 'fixtures', 'modern-mcp-server.ts');
  const methodsFile = (id: string) => path.join(tmp.dir, 'methods', `${id}.methods`);
  const methods = (id: string) => (fs.existsSync(methodsFile(id)) ? fs.readFileSync(methodsFile(id), 'utf8').trim().split('\n') : []);
  let g: RunningGateway;

  beforeAll(async () => {
    fs.mkdirSync(path.join(tmp.dir, 'methods'));
    const stdio = (id: string, declared: boolean) => ({
      id,
      url: `stdio:${id}`,
      mcp: {
        transport: 'stdio' as const,
        command: process.execPath,
        args: ['--import', 'tsx', fixture, 'stdio'],
        cwd: path.resolve(__dirname, '../../..'),
        env: { METHODS_FILE: methodsFile(id) },
        // sandboxed: the file it writes lies in a directory its declaration makes writable
        sandbox: { writable: [path.join(tmp.dir, 'methods')] },
        ...(declared ? { protocolVersion: '2026-07-28' as const } : {}),
      },
    });
    // Two copies of the fixture's tools: a collision the catalog settles by prefixing, which is fine here.
    g = await startGateway([stdio('declared', true), stdio('found', false)], tmp.dir, { HEALTH_TIMEOUT_MS: '10000' });
  });
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  const call = async (name: string, extra: Record<string, unknown> = {}) => {
    const res = await post2026(
      g.url,
      'tools/call',
      { name, ...extra },
      { meta: { ...META_2026, 'io.modelcontextprotocol/clientCapabilities': CAPS } },
    );
    return (await res.json()) as { result?: Record<string, any>; error?: { code: number; message: string } };
  };

  it('is spoken to over 2026-07-28 when declared (never initialize), and found by server/discover when not', async () => {
    const names = async () => ((await request(g.url).get('/tools/list').expect(200)).body.tools as { name: string }[]).map((t) => t.name);
    for (let i = 0; i < 100 && !(await names()).some((n) => n.includes('found')); i++) await g.gw.refresh();
    const tools = await names();
    const echo = (id: string) => tools.find((n) => n.includes('modern_echo') && n.includes(id));
    expect(echo('declared')).toBeDefined();
    expect(echo('found')).toBeDefined();
    for (const id of ['declared', 'found']) {
      const echoed = await call(echo(id)!, { arguments: { text: `via ${id}` } });
      expect(echoed.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: `via ${id}` }] });
    }
    expect(methods('declared')).toContain('server/discover');
    expect(methods('declared')).not.toContain('initialize');
    // one refused initialize (in the process the 2025-era client started beside the server/discover question), then only the new revision
    expect(methods('found').filter((m) => m === 'initialize')).toHaveLength(1);
    expect(methods('found').lastIndexOf('server/discover')).toBeGreaterThan(methods('found').indexOf('initialize'));
  });

  it('carries input_required rounds to the caller, as over HTTP', async () => {
    const tool = ((await request(g.url).get('/tools/list').expect(200)).body.tools as { name: string }[])
      .map((t) => t.name)
      .find((n) => n.includes('test_input_required_result_elicitation') && n.includes('declared'))!;
    const first = await call(tool, { arguments: {} });
    expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { user_name: expect.any(Object) } });
    const done = await call(tool, {
      arguments: {},
      inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
      requestState: first.result!.requestState,
    });
    expect(done.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Hello, Ada!' }] });
  });
});

/**
 * The official conformance suite's input-required-result scenarios, run against the gateway's /mcp
 * with the fixture's tools behind it: the multi round-trip requests of a 2026-07-28 server reach a
 * 2026-07-28 client through the gateway as the server wrote them (keys, rounds, its requestState
 * kept inside the gateway's own).
 */
describe('the conformance suite’s input-required-result scenarios through the gateway', () => {
  const SCENARIOS = [
    'input-required-result-basic-elicitation',
    'input-required-result-basic-sampling',
    'input-required-result-basic-list-roots',
    'input-required-result-capability-check',
    'input-required-result-ignore-extra-params',
    'input-required-result-missing-input-response',
    'input-required-result-multi-round',
    'input-required-result-multiple-input-requests',
    'input-required-result-non-tool-request',
    'input-required-result-request-state',
    'input-required-result-result-type',
    'input-required-result-tampered-state',
    'input-required-result-unsupported-methods',
    'input-required-result-validate-input',
  ];
  const tmp = tempDir('mcp-fleet-modern-conformance-');
  let server: ModernServer;
  let g: RunningGateway;
  let results: Map<string, ConformanceCheck[]>;

  beforeAll(async () => {
    ({ server, g } = await gatewayInFront(tmp.dir));
    results = await runConformanceScenarios(`${g.url}/mcp`, SCENARIOS, tmp.dir);
  }, 180_000);
  afterAll(async () => {
    await g?.stop();
    await server?.stop();
    tmp.cleanup();
  });

  it.each(SCENARIOS)('%s', (scenario) => {
    const checks = results.get(scenario)!;
    expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
    expect(conformanceProblems(checks)).toEqual([]);
  });
});
