/**
 * Progressive discovery (MCP_DISCOVERY=meta): the words of search, the ranking, the meta-tools'
 * answers (scopes, validation, unknown names, collisions, a remote embedder that answers or fails),
 * and the gateway's tools/list and tools/call in meta mode next to full mode.
 */
import type http from 'node:http';
import { serve, tempDir, testLogger } from '@mcp-fleet/testing';
import type { RunningServer } from '@mcp-fleet/kit';
import { OpenAIEmbedder } from '@mcp-fleet/kit/embedder';
import type { Principal } from '../src/auth/auth';
import { buildCatalog, type CatalogService } from '../src/core/catalog';
import { configSchema } from '../src/core/config';
import { Discovery } from '../src/core/discovery';
import { SearchIndex, type SearchableTool } from '../src/core/discovery/search-index';
import { queryConcepts, stem, terms, words } from '../src/core/discovery/text';
import type { DownstreamTool } from '../src/core/types';
import {
  alphaTools,
  betaTools,
  gatewayConfig,
  post2026,
  startDownstream,
  startGateway,
  type Downstream,
  type RunningGateway,
} from './helpers';

const tool = (name: string, description: string, properties: Record<string, unknown> = {}, readOnly = true): DownstreamTool => ({
  name,
  description,
  inputSchema: { type: 'object', properties },
  annotations: { readOnlyHint: readOnly },
});

const FILES: DownstreamTool[] = [
  tool('file_read', 'Read a file inside the workspace roots as text.', { path: { type: 'string', description: 'File path.' } }),
  tool('file_write', 'Write a file inside the workspace roots.', { path: { type: 'string' }, content: { type: 'string' } }, false),
  tool('file_list', 'List a directory.', { path: { type: 'string' } }),
];
const SYSTEM: DownstreamTool[] = [
  tool('disk_usage', 'Total, used and free bytes of every mounted filesystem.', {}),
  tool('process_list', 'Running processes with CPU and memory share.', { sortBy: { type: 'string', enum: ['cpu', 'memory'] } }),
  tool('system_info', 'Host name, OS, architecture and uptime.', {}),
];
const TERMINAL: DownstreamTool[] = [tool('system_info', 'Host name and OS of the terminal host.', {})];

const service = (id: string, tools: DownstreamTool[], extra: Partial<CatalogService> = {}): CatalogService => ({
  id,
  healthy: true,
  tools,
  known: tools.map((t) => t.name),
  primaryFor: [],
  ...extra,
});

const catalog = buildCatalog([
  service('files-mcp', FILES),
  service('system-mcp', SYSTEM, { primaryFor: ['system_info'] }),
  service('terminal-mcp', TERMINAL),
]);
const principal = (...scopes: string[]): Principal => ({ subject: 'test', scopes: new Set(scopes) }) as unknown as Principal;
const names = (v: { value?: Record<string, unknown> } | object) =>
  (((v as { value: { results: { name: string }[] } }).value?.results ?? []) as { name: string }[]).map((r) => r.name);

describe('the words of search', () => {
  it('splits identifiers and drops function words', () => {
    expect(words('file_read fileRead HTTPRequest git-mcp')).toEqual(['file', 'read', 'file', 'read', 'http', 'request', 'git', 'mcp']);
    expect(terms('show me the contents of the README')).toEqual(['show', 'content', 'readm']);
  });

  it('stems the forms of a word to one term', () => {
    for (const group of [
      ['delete', 'deleted', 'deletes', 'deleting'],
      ['file', 'files'],
      ['process', 'processes'],
      ['memory', 'memories'],
      ['commit', 'commits', 'committed'],
      ['run', 'running'],
      ['deletion', 'delete', 'deletions'],
      ['encryption', 'encrypt', 'encrypted'],
      ['connection', 'connect', 'connections'],
      ['validation', 'validate'],
    ])
      expect(new Set(group.map(stem)).size).toBe(1);
    expect(stem('process')).not.toBe(stem('proc'));
    // short -ion words are left alone
    expect(stem('action')).toBe('action');
  });

  it('brings thesaurus neighbours in at a lower weight, once per query word, and reads file names as files', () => {
    const [disk] = queryConcepts('disk', 0.5);
    expect(disk.terms.get('disk')).toBe(1);
    expect(disk.terms.get(stem('storage'))).toBe(0.5);
    expect(queryConcepts('open notes/todo.md', 0.5).map((c) => [...c.terms.keys()][0])).toEqual(
      expect.arrayContaining([stem('file'), 'path']),
    );
    expect(queryConcepts('the of and', 0.5)).toEqual([]);
  });

  it('knows the words people use for searching text, stopping something and the web', () => {
    const neighbours = (word: string) => [...queryConcepts(word, 0.5)[0].terms.keys()];
    expect(neighbours('grep')).toEqual(expect.arrayContaining([stem('substring'), stem('pattern'), stem('search')]));
    expect(neighbours('regex')).toContain('grep');
    expect(neighbours('cancel')).toEqual(expect.arrayContaining([stem('stop'), stem('abort')]));
    expect(neighbours('web')).toEqual(expect.arrayContaining([stem('research'), stem('internet')]));
    expect(neighbours('phrase')).toContain(stem('keyword'));
    expect(neighbours('insert')).toEqual(expect.arrayContaining(['sql', stem('statement')]));
    expect(neighbours('received')).toEqual(expect.arrayContaining([stem('incoming'), stem('inbound')]));
  });
});

describe('the ranking', () => {
  const docs: SearchableTool[] = [...FILES, ...SYSTEM].map((t) => ({ ...t, service: 'x' }));
  const index = new SearchIndex(docs);
  const top = (q: string, ranking?: 'hybrid' | 'lexical' | 'embedding') => index.search(q, { limit: 3, ranking }).map((h) => h.tool.name);

  it('ranks by what the tool does, in the words a user asks with', () => {
    expect(top('what is eating my disk')[0]).toBe('disk_usage');
    expect(top('save some text to a file')[0]).toBe('file_write');
    expect(top('which programs are running')[0]).toBe('process_list');
    expect(top('show me the contents of README')[0]).toBe('file_read');
    // a parameter's enum value counts too
    expect(top('sort by memory', 'lexical')[0]).toBe('process_list');
  });

  it('scores the best match 1 and orders the rest below it; each ranking on its own works too', () => {
    const hits = index.search('free disk space', { limit: 10 });
    expect(hits[0].score).toBe(1);
    for (let i = 1; i < hits.length; i++) expect(hits[i].score).toBeLessThanOrEqual(hits[i - 1].score);
    expect(top('free disk space', 'lexical')[0]).toBe('disk_usage');
    expect(top('free disk space', 'embedding')[0]).toBe('disk_usage');
  });

  it('answers nothing for a query of function words alone, and keeps to limit and allow', () => {
    expect(index.search('the of and', { limit: 5, ranking: 'lexical' })).toEqual([]);
    expect(index.search('file', { limit: 2 })).toHaveLength(2);
    expect(index.search('file', { limit: 10, allow: (t) => t.name !== 'file_read' }).map((h) => h.tool.name)).not.toContain('file_read');
  });

  it('reads a bounded part of a hostile schema (deep, wide, long) and still indexes the tool', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 500; i++) deep = { type: 'object', properties: { [`level${i}`]: deep } };
    const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(1000) }]));
    const t0 = performance.now();
    const hostile = new SearchIndex([
      { name: 'deep_tool', description: 'Deep.', inputSchema: deep, service: 'h' },
      { name: 'wide_tool', description: 'Wide.', inputSchema: { type: 'object', properties: wide }, service: 'h' },
      { name: 'long_tool', description: 'word '.repeat(200_000), inputSchema: { type: 'object' }, service: 'h' },
    ]);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(hostile.search('deep', { limit: 1 })[0].tool.name).toBe('deep_tool');
    expect(hostile.search('wide', { limit: 1 })[0].tool.name).toBe('wide_tool');
  });
});

describe('the meta-tools (Discovery.answer)', () => {
  const discovery = new Discovery({ logger: testLogger('discovery') });

  it('search_tools answers names, one-line descriptions, scores and services; a tool of two services is found under each', async () => {
    const answer = await discovery.answer(catalog, 'search_tools', { query: 'host name and operating system', limit: 5 });
    const results = (answer as { value: { results: { name: string; description: string; score: number; service: string }[] } }).value
      .results;
    expect(results.slice(0, 2).map((r) => r.name)).toEqual(expect.arrayContaining(['system_info', 'terminal-mcp__system_info']));
    // system-mcp's system_info is listed plain and qualified, found once under its plain name
    expect(results.filter((r) => r.service === 'system-mcp' && r.name.endsWith('system_info'))).toHaveLength(1);
    expect(results[0]).toEqual({
      name: expect.any(String),
      description: expect.stringMatching(/\.$/),
      score: 1,
      service: expect.any(String),
    });
  });

  it('search and describe show only the tools a principal may call', async () => {
    const reader = principal('tools:read');
    expect(names(await discovery.answer(catalog, 'search_tools', { query: 'write a file' }, reader))).not.toContain('file_write');
    expect(names(await discovery.answer(catalog, 'search_tools', { query: 'write a file' }, principal('tools:all')))[0]).toBe('file_write');
    await expect(discovery.answer(catalog, 'describe_tool', { name: 'file_write' }, reader)).rejects.toMatchObject({
      code: 'UNKNOWN_TOOL',
    });
    const described = await discovery.answer(catalog, 'describe_tool', { name: 'file_write' }, principal('service:files-mcp'));
    expect(described).toEqual({
      value: expect.objectContaining({
        name: 'file_write',
        service: 'files-mcp',
        inputSchema: FILES[1].inputSchema,
        annotations: FILES[1].annotations,
      }),
    });
  });

  it('describe_tool of an unknown name says so and suggests tools; a qualified name is described with its plain one', async () => {
    await expect(discovery.answer(catalog, 'describe_tool', { name: 'file_reed' })).rejects.toMatchObject({
      code: 'UNKNOWN_TOOL',
      message: expect.stringMatching(/No tool named "file_reed" here; did you mean .*file_read/),
    });
    const q = await discovery.answer(catalog, 'describe_tool', { name: 'system-mcp__system_info' });
    expect(q).toEqual({ value: expect.objectContaining({ name: 'system-mcp__system_info', alsoAs: ['system_info'] }) });
  });

  it('refuses bad arguments as VALIDATION_ERROR, each saying what to send', async () => {
    for (const [name, args] of [
      ['search_tools', {}],
      ['search_tools', { query: '' }],
      ['search_tools', { query: 'x'.repeat(501) }],
      ['search_tools', { query: 'files', limit: 0 }],
      ['search_tools', { query: 'files', limit: 26 }],
      ['search_tools', { query: 'files', extra: 1 }],
      ['search_tools', 'files'],
      ['describe_tool', { name: 7 }],
      ['call_tool', { name: 'file_read', arguments: [] }],
      ['call_tool', { arguments: {} }],
    ] as const)
      await expect(discovery.answer(catalog, name, args)).rejects.toMatchObject({
        code: 'VALIDATION_ERROR',
        message: expect.stringMatching(/send/),
      });
  });

  it('call_tool answers the plain call it stands for, without running anything', async () => {
    expect(await discovery.answer(catalog, 'call_tool', { name: 'file_read', arguments: { path: 'a' } })).toEqual({
      call: { name: 'file_read', arguments: { path: 'a' } },
    });
    expect(await discovery.answer(catalog, 'call_tool', { name: 'call_tool' })).toEqual({ call: { name: 'call_tool', arguments: {} } });
  });

  it('builds one index per catalog and leaves out hidden tools', () => {
    const hiding = new Discovery({ logger: testLogger('d'), hidden: (_c, name) => name === 'file_list' });
    expect(hiding.prepare(catalog)).toBe(hiding.prepare(catalog));
    expect(hiding.prepare(catalog).index.tools.map((t) => t.name)).not.toContain('file_list');
  });
});

describe('an OpenAI-compatible embedder for search', () => {
  let server: RunningServer;
  let fail = false;
  let requests = 0;
  beforeAll(async () => {
    // a deterministic stand-in model: one dimension per letter of the alphabet
    server = await serve((req: http.IncomingMessage, res: http.ServerResponse) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        requests += 1;
        if (fail) return void res.writeHead(503).end();
        const { input } = JSON.parse(raw) as { input: string[] };
        const data = input.map((text, index) => ({
          index,
          embedding: Array.from({ length: 26 }, (_, i) => 0.01 + [...text].filter((c) => c.charCodeAt(0) === 97 + i).length),
        }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
      });
    });
  });
  afterAll(() => server.stop());

  it('embeds the catalog once, then each query, and says so; a failing endpoint falls back to the local embedder', async () => {
    const remote = new OpenAIEmbedder({ url: server.url, model: 'm', timeoutMs: 2000, variablePrefix: 'DISCOVERY_EMBEDDINGS' });
    const discovery = new Discovery({ logger: testLogger('d'), remote });
    await discovery.ready(catalog);
    expect(requests).toBe(1);
    const answer = (await discovery.answer(catalog, 'search_tools', { query: 'free disk space' })) as { value: { ranking: string } };
    expect(answer.value.ranking).toBe('hybrid (bm25 + openai-compatible embedder)');
    expect(requests).toBe(2);
    fail = true;
    const fallback = (await discovery.answer(catalog, 'search_tools', { query: 'free disk space' })) as {
      value: { ranking: string; results: { name: string }[] };
    };
    expect(fallback.value.ranking).toMatch(/local \(the embeddings endpoint failed\)/);
    expect(fallback.value.results[0].name).toBe('disk_usage');
    fail = false;
  });
});

describe('the gateway in meta mode', () => {
  const tmp = tempDir('discovery-gw-');
  let alpha: Downstream;
  let beta: Downstream;
  let meta: RunningGateway;
  let full: RunningGateway;

  beforeAll(async () => {
    alpha = await startDownstream('alpha-mcp', alphaTools);
    beta = await startDownstream('beta-mcp', betaTools);
    const services = [
      { id: 'alpha-mcp', url: alpha.url },
      { id: 'beta-mcp', url: beta.url },
    ];
    meta = await startGateway(services, tmp.dir, { MCP_DISCOVERY: 'meta', HEALTH_POLL_MS: '600000' });
    full = await startGateway(services, tmp.dir, { HEALTH_POLL_MS: '600000' });
  });
  afterAll(async () => {
    await meta.stop();
    await full.stop();
    await alpha.stop();
    await beta.stop();
    tmp.cleanup();
  });

  const rpc = async (g: RunningGateway, method: string, params: Record<string, unknown>) =>
    (await (await post2026(g.url, method, params)).json()) as {
      result?: Record<string, unknown>;
      error?: { code: number; message: string };
    };

  it('lists the meta-tools in meta mode and every tool in full mode (the default)', async () => {
    const listed = await rpc(meta, 'tools/list', {});
    expect((listed.result!.tools as { name: string }[]).map((t) => t.name)).toEqual(['search_tools', 'describe_tool', 'call_tool']);
    const all = await rpc(full, 'tools/list', {});
    expect((all.result!.tools as { name: string }[]).map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'ping_beta']));
    expect(full.gw.ctx.discovery).toBeUndefined();
  });

  it('call_tool answers exactly what the direct call answers', async () => {
    const direct = await rpc(meta, 'tools/call', { name: 'echo', arguments: { text: 'hi' } });
    const viaMeta = await rpc(meta, 'tools/call', { name: 'call_tool', arguments: { name: 'echo', arguments: { text: 'hi' } } });
    expect(viaMeta.result).toEqual(direct.result);
    expect(alpha.calls.get('echo')).toBe(2);
    // a tool's own failure is its result, as directly
    const stamped = (r: Record<string, unknown> | undefined) => JSON.stringify(r).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T');
    const failedDirect = await rpc(meta, 'tools/call', { name: 'fail', arguments: {} });
    const failed = await rpc(meta, 'tools/call', { name: 'call_tool', arguments: { name: 'fail' } });
    expect(failed.result).toMatchObject({ isError: true, structuredContent: { success: false, service: 'alpha-mcp' } });
    expect(stamped(failed.result)).toBe(stamped(failedDirect.result));
  });

  it('call_tool of an unknown name, or of a meta-tool name, is the unknown-tool error of a direct call (no recursion)', async () => {
    const direct = await rpc(meta, 'tools/call', { name: 'no_such_tool', arguments: {} });
    const viaMeta = await rpc(meta, 'tools/call', { name: 'call_tool', arguments: { name: 'no_such_tool' } });
    expect(viaMeta.error).toEqual(direct.error);
    const nested = await rpc(meta, 'tools/call', { name: 'call_tool', arguments: { name: 'call_tool', arguments: { name: 'echo' } } });
    expect(nested.error).toMatchObject({ code: -32602, message: expect.stringMatching(/No service offers a tool named "call_tool"/) });
  });

  it('answers a meta-tool error as a tool result with the fleet envelope', async () => {
    const bad = await rpc(meta, 'tools/call', { name: 'search_tools', arguments: { query: '' } });
    expect(bad.result).toMatchObject({
      isError: true,
      structuredContent: { success: false, code: 'VALIDATION_ERROR', service: 'mega-orchestrator' },
    });
  });

  it('refuses an unknown MCP_DISCOVERY value at boot, naming the choices', () => {
    expect(configSchema.safeParse({ ...gatewayConfig(tmp.dir), MCP_DISCOVERY: 'partial' }).success).toBe(false);
    expect(gatewayConfig(tmp.dir).MCP_DISCOVERY).toBe('full');
  });
});
