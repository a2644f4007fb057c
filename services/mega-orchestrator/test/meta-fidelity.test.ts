/**
 * Fidelity of what an MCP server answers, field by field (issue 29): `_meta` on tools, results,
 * content blocks, prompts and resources (MCP Apps' `_meta.ui`, OpenAI's `openai/*` keys), icons,
 * titles and output schemas, a tool error's own structuredContent, and a field no revision defines
 * reach the gateway's clients as the server sent them, in both protocol eras. The servers, behind
 * one gateway: test/fixtures/meta-mcp-server.ts over stdio (2025-era), and the modern fixture's
 * modern_meta over HTTP (2026-07-28, through the gateway's 2026-07-28 client).
 */
import path from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { FAIL_RESULT, META_TOOLS, PROMPT_RESULT, READ_RESULT, RPC_ERROR, SHOW_RESULT } from './fixtures/meta-mcp-server';
import { startModernServer, type ModernServer } from './fixtures/modern-mcp-server';
import { toolAlias } from '../src/core/registry';
import { gatewayWithClient, post2026 } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'meta-mcp-server.ts');

const REPO = path.resolve(__dirname, '../../..');
const META_STDIO = { transport: 'stdio' as const, command: process.execPath, args: ['--import', 'tsx', FIXTURE], cwd: REPO, env: {} };

describe("what an MCP server answers reaches the gateway's clients field by field", () => {
  let modern: ModernServer;
  const f = gatewayWithClient(
    async () => {
      modern = await startModernServer();
      const http = { transport: 'streamable-http' as const, url: modern.url, headers: {}, protocolVersion: '2026-07-28' as const };
      return [
        { id: 'meta', url: 'stdio:meta', mcp: META_STDIO },
        { id: 'modern', url: modern.url, mcp: http },
      ];
    },
    ['meta_show', 'modern_meta_echo'],
    {},
    () => modern?.stop(),
  );

  /** A 2026-07-28 request's result (Mcp-Name from the URI of a read). */
  const call2026 = async (method: string, params: Record<string, unknown>) => {
    const res = await post2026(f.g.url, method, params, typeof params.uri === 'string' ? { headers: { 'mcp-name': params.uri } } : {});
    return ((await res.json()) as { result: Record<string, unknown> }).result;
  };

  it("2025 client: tools/list keeps a tool's _meta, icons, title and schemas", async () => {
    const { tools } = await f.client.listTools();
    expect(tools.find((t) => t.name === 'meta_show')).toMatchObject(META_TOOLS[0]);
    expect(tools.find((t) => t.name === 'modern_meta')).toMatchObject({ ...META_TOOLS[0], name: 'modern_meta' });
  });

  it("2025 client: a result's _meta, its blocks' _meta and annotations, a later field", async () => {
    expect(await f.client.callTool({ name: 'meta_show', arguments: { q: 'x' } })).toEqual(SHOW_RESULT);
    // from the 2026-07-28 server: the same, without the revision's resultType
    expect(await f.client.callTool({ name: 'modern_meta', arguments: {} })).toEqual(SHOW_RESULT);
  });

  it('2025 client: a tool error keeps its own structuredContent and _meta', async () => {
    expect(await f.client.callTool({ name: 'meta_fail', arguments: {} })).toEqual(FAIL_RESULT);
  });

  it('2025 client: prompts/get and resources/read keep _meta', async () => {
    expect(await f.client.getPrompt({ name: 'meta_prompt' })).toEqual(PROMPT_RESULT);
    expect(await f.client.readResource({ uri: 'ui://meta/show.html' })).toEqual(READ_RESULT);
  });

  it('2026-07-28 client: the same results, with resultType', async () => {
    expect(await call2026('tools/call', { name: 'meta_show', arguments: { q: 'x' } })).toEqual({ ...SHOW_RESULT, resultType: 'complete' });
    expect(await call2026('tools/call', { name: 'modern_meta', arguments: {} })).toEqual({ ...SHOW_RESULT, resultType: 'complete' });
    expect(await call2026('tools/call', { name: 'meta_fail', arguments: {} })).toEqual({ ...FAIL_RESULT, resultType: 'complete' });
    expect(await call2026('prompts/get', { name: 'meta_prompt' })).toEqual({ ...PROMPT_RESULT, resultType: 'complete' });
    expect(await call2026('resources/read', { uri: 'ui://meta/show.html' })).toEqual({
      ...READ_RESULT,
      resultType: 'complete',
      // the gateway's own cache hints for a read (not the server's)
      ttlMs: 0,
      cacheScope: 'private',
    });
    const list = await call2026('tools/list', {});
    expect((list.tools as { name: string }[]).find((t) => t.name === 'meta_show')).toMatchObject(META_TOOLS[0]);
  });

  it('a tool whose name MCP allows but model APIs refuse is listed under an alias and called by its own name', async () => {
    const { tools } = await f.client.listTools();
    const names = tools.map((t) => t.name);
    const long = `meta.${'long'.repeat(20)}`;
    const longAlias = toolAlias(long)!;
    expect(longAlias).toMatch(/^meta_(long)+lo_[0-9a-f]{8}$/);
    expect(longAlias).toHaveLength(64);
    expect(names).toEqual(expect.arrayContaining(['admin_tools_list', longAlias, 'meta_clash']));
    // the alias meta.clash would take is a tool of its own: that one keeps it, meta.clash is not routed
    expect(names.filter((n) => n === 'meta_clash')).toHaveLength(1);
    const text = async (name: string) => ((await f.client.callTool({ name, arguments: {} })).content as { text: string }[])[0].text;
    expect(await text('admin_tools_list')).toBe('called as admin.tools.list');
    expect(await text(longAlias)).toBe(`called as ${long}`);
    expect(await text('meta_clash')).toBe('called as meta_clash');
  });

  it('a tool named as servers before 2025-11-25 may (a slash, a space, a colon) is listed under an alias; a control character is not routed', async () => {
    const names = (await f.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['files_read', 'get_weather', 'ns_tool']));
    expect(names.filter((n) => n.startsWith('bell'))).toEqual([]);
    const text = async (name: string) => ((await f.client.callTool({ name, arguments: {} })).content as { text: string }[])[0].text;
    expect(await text('files_read')).toBe('called as files/read');
    expect(await text('get_weather')).toBe('called as get weather');
    expect(await text('ns_tool')).toBe('called as ns:tool');
  });

  it("a resource template's argument is completed by the server that lists the template", async () => {
    const { resourceTemplates } = await f.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('meta://notes/{name}');
    const done = await f.client.complete({
      ref: { type: 'ref/resource', uri: 'meta://notes/{name}' },
      argument: { name: 'name', value: 'al' },
    });
    expect(done.completion).toEqual({ values: ['alpha', 'alps'], total: 2, hasMore: false });
  });

  it("a completion comes as the server sent it (no hasMore it left out), and the server's error as its own", async () => {
    const ref = { type: 'ref/resource' as const, uri: 'meta://bare/{name}' };
    const done = await f.client.complete({ ref, argument: { name: 'name', value: 'b' } });
    expect(done.completion).toEqual({ values: ['bare-1'] });
    const refused = await f.client.complete({ ref, argument: { name: 'name', value: 'boom' } }).then(
      () => undefined,
      (err: unknown) => err as McpError,
    );
    expect(refused).toBeInstanceOf(McpError);
    expect(refused).toMatchObject({ code: -32602, data: { typed: 'boom' } });
    expect(refused!.message).toMatch(/No note starts with "boom"\./);
    // the same in 2026-07-28
    const res = await post2026(f.g.url, 'completion/complete', { ref, argument: { name: 'name', value: 'boom' } });
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({
      code: -32602,
      message: 'No note starts with "boom".',
      data: { typed: 'boom' },
    });
  });

  it('a prompt and a resource are listed with their icons and _meta', async () => {
    const { prompts } = await f.client.listPrompts();
    expect(prompts.find((p) => p.name === 'meta_prompt')).toMatchObject({ icons: [expect.any(Object)], _meta: { 'io.example/p': 1 } });
    const { resources } = await f.client.listResources();
    expect(resources.find((r) => r.uri === 'ui://meta/show.html')).toMatchObject({
      icons: [expect.any(Object)],
      _meta: { ui: { csp: {} } },
    });
  });

  it("the caller's own _meta of a call reaches the server; the protocol's and the gateway's keys do not", async () => {
    const sent = {
      'com.example/trace': { id: 't-1' },
      'openai/userLocation': { city: 'Oslo' },
      plain: 1,
      // the gateway's own, and the protocol's (each hop writes its own)
      mode: 'auto',
      context_id: 'ctx-1',
      'io.modelcontextprotocol/related-task': { taskId: 'x' },
      'dev.mcp/anything': true,
    };
    const own = { 'com.example/trace': { id: 't-1' }, 'openai/userLocation': { city: 'Oslo' }, plain: 1 };
    const echo = async (name: string) =>
      ((await f.client.callTool({ name, arguments: {}, _meta: sent })).structuredContent as { meta: Record<string, unknown> }).meta;
    expect(await echo('meta_echo')).toEqual(own);
    // the 2026-07-28 server also gets what its revision asks of every request (the gateway's own)
    const modern = await echo('modern_meta_echo');
    expect(modern).toMatchObject({ ...own, 'io.modelcontextprotocol/clientCapabilities': {} });
    for (const key of ['mode', 'context_id', 'io.modelcontextprotocol/related-task', 'dev.mcp/anything'])
      expect(modern).not.toHaveProperty([key]);
    // with progress asked for: the gateway's own progressToken beside the caller's keys
    const withProgress = await f.client.callTool({ name: 'meta_echo', arguments: {}, _meta: sent }, undefined, {
      onprogress: () => undefined,
    });
    expect((withProgress.structuredContent as { meta: Record<string, unknown> }).meta).toEqual({
      ...own,
      progressToken: expect.stringMatching(/^gateway-/),
    });
    // none sent, none made up
    expect((await f.client.callTool({ name: 'meta_echo', arguments: {} })).structuredContent).toEqual({ meta: null });
    // prompts/get and resources/read likewise
    const prompt = await f.client.getPrompt({ name: 'meta_prompt_echo', _meta: sent });
    expect(JSON.parse((prompt.messages[0].content as { text: string }).text)).toEqual(own);
    const read = await f.client.readResource({ uri: 'ui://meta/echo', _meta: sent });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual(own);
  });

  it("a server's JSON-RPC error reaches the caller as that error, code, message and data (both eras)", async () => {
    const thrown = await f.client.callTool({ name: 'meta_rpc_error', arguments: {} }).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(McpError);
    expect(thrown).toMatchObject({ code: RPC_ERROR.code, data: RPC_ERROR.data });
    expect((thrown as Error).message).toContain(RPC_ERROR.message);
    // an internal error of the server's says what the server said (the gateway hides only its own)
    const internal = await f.client.callTool({ name: 'meta_internal', arguments: {} }).catch((e: unknown) => e);
    expect(internal).toMatchObject({ code: -32603, message: expect.stringContaining('the database is down') });
    const res = await post2026(f.g.url, 'tools/call', { name: 'meta_rpc_error', arguments: {} });
    expect(((await res.json()) as { error: unknown }).error).toEqual(RPC_ERROR);
    // prompts/get and resources/read likewise
    for (const failing of [f.client.getPrompt({ name: 'meta_prompt_error' }), f.client.readResource({ uri: 'ui://meta/quota' })]) {
      const err = await failing.catch((e: unknown) => e);
      expect(err).toMatchObject({ code: RPC_ERROR.code, data: RPC_ERROR.data, message: expect.stringContaining(RPC_ERROR.message) });
    }
  });
});

describe('a call to an MCP server that reports progress', () => {
  // a 600 ms time limit, counted again from each progress report, 2 s in all
  const f = gatewayWithClient(() => [{ id: 'meta', url: 'stdio:meta', mcp: META_STDIO }], ['meta_steady'], {
    DOWNSTREAM_TIMEOUT_MS: '600',
    DOWNSTREAM_PROGRESS_MAX_MS: '2000',
  });

  const steady = (steps: number, onprogress?: () => void) =>
    f.client.callTool({ name: 'meta_steady', arguments: { steps, everyMs: 300 } }, undefined, onprogress ? { onprogress } : {});

  it('runs past the time limit while each report comes within it', async () => {
    let reports = 0;
    const result = await steady(4, () => reports++);
    expect(result).toEqual({ content: [{ type: 'text', text: 'worked 4 steps' }] });
    expect(reports).toBe(4);
  });

  it('keeps the time limit for a caller that asked for no progress', async () => {
    const result = await steady(4);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'TIMEOUT' });
  });

  it('ends at DOWNSTREAM_PROGRESS_MAX_MS however steadily the server reports', async () => {
    const started = Date.now();
    const result = await steady(12, () => undefined);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: 'TIMEOUT' });
    // 12 steps would take 3.6 s
    expect(Date.now() - started).toBeLessThan(3500);
  });
});

describe("an MCP server's own time limit (an mcpServers entry's timeoutMs)", () => {
  // the gateway's limit is 600 ms; this server's 3 s
  const f = gatewayWithClient(() => [{ id: 'meta', url: 'stdio:meta', mcp: META_STDIO, timeoutMs: 3000 }], ['meta_steady'], {
    DOWNSTREAM_TIMEOUT_MS: '600',
  });

  it('lets a call run past DOWNSTREAM_TIMEOUT_MS within the server’s own limit, and ends it there', async () => {
    const done = await f.client.callTool({ name: 'meta_steady', arguments: { steps: 3, everyMs: 300 } });
    expect(done).toEqual({ content: [{ type: 'text', text: 'worked 3 steps' }] });
    const cut = await f.client.callTool({ name: 'meta_steady', arguments: { steps: 12, everyMs: 300 } });
    expect(cut.isError).toBe(true);
    expect(cut.structuredContent).toMatchObject({ code: 'TIMEOUT', error: expect.stringContaining('3000 ms') });
  });
});
