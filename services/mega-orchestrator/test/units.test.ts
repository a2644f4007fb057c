import type { IncomingMessage } from 'node:http';
import { CircuitBreaker } from '../src/downstream/breaker';
import { readConfig } from '../src/core/config';
import { buildCatalog, type CatalogService } from '../src/core/catalog';
import { normaliseRequest } from '../src/mcp/rev-2025-11-25/session-transport';
import { invalidMessage, looksLikeJsonRpc, withoutMcpErrorPrefix } from '../src/mcp/jsonrpc';
import { FORWARD_PROOF_HEADER, FORWARDED_HEADER, forwardProof, isProvenForward } from '../src/mcp/rev-2026-07-28/peer-forward';
import { ARGS_MAX, summarizeArgs } from '../src/history/call-history';
import { displayUrl } from '../src/downstream/http-client';
import { asMcpError, withInFlightTables } from '../src/downstream/mcp';
import { toolAnswer, withoutPrefix, withoutRevisionFields } from '../src/downstream/mcp/answers';
import { SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { InFlight } from '@mcp-fleet/kit';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { DownstreamTool } from '../src/core/types';

const tool = (name: string): DownstreamTool => ({ name, description: name, inputSchema: { type: 'object' }, annotations: {} });
const svc = (id: string, names: string[], opts: Partial<CatalogService> = {}): CatalogService => ({
  id,
  healthy: true,
  tools: names.map(tool),
  known: names,
  primaryFor: [],
  ...opts,
});

describe('catalog', () => {
  it('lists unique names plain, and colliding names plain for the primary plus qualified for every owner', () => {
    const c = buildCatalog([
      svc('terminal-mcp', ['execute_command', 'system_info']),
      svc('system-mcp', ['system_info', 'disk_usage'], { primaryFor: ['system_info'] }),
    ]);
    const names = c.entries.map((e) => `${e.name}@${e.service}`);
    expect(names).toEqual([
      'execute_command@terminal-mcp',
      'terminal-mcp__system_info@terminal-mcp',
      'system_info@system-mcp',
      'system-mcp__system_info@system-mcp',
      'disk_usage@system-mcp',
    ]);
    expect(c.collisions.get('system_info')).toEqual({ primary: 'system-mcp', owners: ['system-mcp', 'terminal-mcp'], failover: true });
    expect(c.byName.get('system_info')?.plain).toBe(true);
    expect(c.byName.get('terminal-mcp__system_info')?.tool.name).toBe('system_info');
  });

  it('without primaryFor the first owner in registry order is primary', () => {
    const c = buildCatalog([svc('a', ['x']), svc('b', ['x'])]);
    expect(c.byName.get('x')?.service).toBe('a');
    expect(c.owners.get('x')).toEqual(['a', 'b']);
  });

  it('lists only healthy services, hands the plain name to the next healthy owner, keeps owners known', () => {
    const c = buildCatalog([
      svc('system-mcp', ['system_info'], { primaryFor: ['system_info'], healthy: false, tools: [] }),
      svc('terminal-mcp', ['system_info', 'directory']),
    ]);
    expect(c.entries.map((e) => e.name)).toEqual(['system_info', 'terminal-mcp__system_info', 'directory']);
    expect(c.byName.get('system_info')?.service).toBe('terminal-mcp');
    expect(c.owners.get('system_info')).toEqual(['system-mcp', 'terminal-mcp']);
    expect(c.byName.has('system-mcp__system_info')).toBe(false);
  });

  it('skips qualified names over 64 characters and invalid names, and reports them', () => {
    const longId = 'a-service-with-a-really-long-identifier-for-testing';
    const c = buildCatalog([svc(longId, ['shared_tool_name']), svc('b', ['shared_tool_name', 'bad name!'])]);
    expect(c.byName.has('shared_tool_name')).toBe(true);
    expect(c.byName.has(`${longId}__shared_tool_name`)).toBe(false);
    expect(c.byName.has('b__shared_tool_name')).toBe(true);
    expect(c.byName.has('bad name!')).toBe(false);
    expect(c.skipped.map((s) => s.reason)).toEqual([expect.stringMatching(/longer than 64/), expect.stringMatching(/does not match/)]);
  });

  it('changes its signature when tools or their definitions change', () => {
    const a = buildCatalog([svc('a', ['x'])]);
    expect(buildCatalog([svc('a', ['x'])]).signature).toBe(a.signature);
    expect(buildCatalog([svc('a', ['x', 'y'])]).signature).not.toBe(a.signature);
    expect(buildCatalog([svc('a', ['x'], { signature: 'v2' })]).signature).not.toBe(a.signature);
  });
});

describe('circuit breaker', () => {
  it('opens after N consecutive failures, half-opens after the cooldown with one trial, closes on success', () => {
    let now = 1000;
    const b = new CircuitBreaker({ failureThreshold: 3, cooldownMs: 500, now: () => now });
    for (let i = 0; i < 2; i++) {
      expect(b.tryAcquire()).toBe(true);
      b.onFailure();
    }
    b.tryAcquire();
    b.onSuccess(); // a success resets the count
    for (let i = 0; i < 3; i++) {
      expect(b.tryAcquire()).toBe(true);
      b.onFailure();
    }
    expect(b.snapshot().state).toBe('open');
    expect(b.tryAcquire()).toBe(false);
    expect(b.retryAfterSeconds()).toBe(1);
    now += 500;
    expect(b.snapshot().state).toBe('half-open');
    expect(b.tryAcquire()).toBe(true);
    expect(b.tryAcquire()).toBe(false); // one trial at a time
    b.onSuccess();
    expect(b.snapshot()).toMatchObject({ state: 'closed', consecutiveFailures: 0, timesOpened: 1 });
  });

  it('re-opens when the half-open trial fails', () => {
    let now = 0;
    const b = new CircuitBreaker({ failureThreshold: 1, cooldownMs: 100, now: () => now });
    b.tryAcquire();
    b.onFailure();
    now = 150;
    expect(b.tryAcquire()).toBe(true);
    b.onFailure();
    expect(b.snapshot().state).toBe('open');
    expect(b.tryAcquire()).toBe(false);
  });
});

describe("the SDK client's tables of requests in flight", () => {
  // Fails when an SDK upgrade renames or reshapes them: then the swap silently does nothing.
  it('are all InFlight after withInFlightTables, on the SDK this repository pins', () => {
    const client = withInFlightTables(new Client({ name: 't', version: '1' }));
    const fields = client as unknown as Record<string, unknown>;
    for (const name of ['_responseHandlers', '_progressHandlers', '_timeoutInfo', '_requestHandlerAbortControllers'])
      expect(fields[name]).toBeInstanceOf(InFlight);
  });
});

describe('proof of a forwarded request', () => {
  const secret = 'a-secret-shared-by-every-instance-0123456789';
  const body = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 't', arguments: { a: [1, 'é', null] } } };
  const req = (proof: string | undefined, forwarded = true) =>
    ({
      headers: { ...(forwarded ? { [FORWARDED_HEADER]: 'http://a/mcp' } : {}), ...(proof ? { [FORWARD_PROOF_HEADER]: proof } : {}) },
    }) as never;

  it('holds for the body as parsed, with the secret, while fresh', () => {
    const now = Date.now();
    const proof = forwardProof(secret, JSON.stringify(body), now);
    expect(isProvenForward(req(proof), JSON.parse(JSON.stringify(body)), secret, now + 1000)).toBe(true);
    expect(isProvenForward(req(proof), { ...body, id: 8 }, secret, now)).toBe(false);
    expect(isProvenForward(req(proof), body, `${secret}x`, now)).toBe(false);
    expect(isProvenForward(req(proof), body, undefined, now)).toBe(false);
    expect(isProvenForward(req(proof), body, secret, now + 61_000)).toBe(false);
    expect(isProvenForward(req(proof, false), body, secret, now)).toBe(false);
    expect(isProvenForward(req(undefined), body, secret, now)).toBe(false);
    for (const bad of ['', '.', 'x.y', `${now}`, `${now}.`, `-1.${proof.split('.')[1]}`])
      expect(isProvenForward(req(bad), body, secret, now)).toBe(false);
  });
});

describe("a 2026-07-28 server's errors as the v2 client reports them", () => {
  const http = (status: number, text: string) =>
    new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint: ${text}`, { status, statusText: 'x', text });

  it('reads the JSON-RPC error in an HTTP error status as that error, not as a failed transport', () => {
    const err = asMcpError(
      http(404, '{"jsonrpc":"2.0","id":"listen:0","error":{"code":-32601,"message":"Method not found: x","data":{"a":1}}}'),
    );
    expect(err).toBeInstanceOf(McpError);
    expect(err).toMatchObject({ code: -32601, data: { a: 1 } });
    expect((err as Error).message).toContain('Method not found: x');
  });

  it('leaves an HTTP failure without a JSON-RPC error as it was', () => {
    for (const text of ['<html>bad gateway</html>', '{"error":"plain"}', '{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}']) {
      const original = http(502, text);
      expect(asMcpError(original)).toBe(original);
    }
    const plain = new Error('socket hang up');
    expect(asMcpError(plain)).toBe(plain);
  });
});

describe("an MCP server's answer as the gateway passes it on", () => {
  const identity = { 'io.modelcontextprotocol/serverInfo': { name: 'context7', version: '4.1.1' } };

  it("leaves out the server's identity from a result's _meta (2026-07-28 allows it in any result), and only that", () => {
    const call = toolAnswer('c7', { content: [{ type: 'text', text: 'ok' }], _meta: { ...identity, 'io.example/k': 1 } });
    expect(call.result).toEqual({ content: [{ type: 'text', text: 'ok' }], _meta: { 'io.example/k': 1 } });
    // a _meta that held the identity alone goes with it
    expect(toolAnswer('c7', { content: [], _meta: identity, resultType: 'complete' } as never).result).toEqual({ content: [] });
    expect(withoutRevisionFields({ messages: [], _meta: identity, ttlMs: 5 })).toEqual({ messages: [] });
    expect(withoutRevisionFields({ contents: [], _meta: { ...identity, a: 1 } })).toEqual({ contents: [], _meta: { a: 1 } });
    // the identity inside structuredContent, a block or a nested _meta is the tool's data: kept
    const nested = { content: [{ type: 'text', text: 'x', _meta: identity }], structuredContent: { _meta: identity } };
    expect(toolAnswer('c7', nested as never).result).toEqual(nested);
  });

  it("takes off the SDK's McpError prefixes, also one the server's own message carried (every path to a client does)", () => {
    expect(withoutPrefix('MCP error -32603: Failed to run')).toBe('Failed to run');
    // a server that sent its own McpError's message (mcp-server-kubernetes)
    expect(withoutPrefix('MCP error -32603: MCP error -32603: Failed to run')).toBe('Failed to run');
    expect(withoutPrefix('quota exceeded: MCP error -1: x')).toBe('quota exceeded: MCP error -1: x');
  });
});

describe('JSON-RPC envelope checks', () => {
  it("takes the SDK's MCP error prefixes (however many) off a message, and nothing else", () => {
    expect(withoutMcpErrorPrefix('MCP error -32602: MCP error -32602: bad path')).toBe('bad path');
    expect(withoutMcpErrorPrefix('MCP error 5: x')).toBe('x');
    expect(withoutMcpErrorPrefix('bad path (MCP error -32602: inside)')).toBe('bad path (MCP error -32602: inside)');
  });

  it('accepts requests, notifications, responses and batches', () => {
    expect(invalidMessage({ jsonrpc: '2.0', id: 1, method: 'ping' })).toBeUndefined();
    expect(invalidMessage({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBeUndefined();
    expect(invalidMessage({ jsonrpc: '2.0', id: 'a', result: {} })).toBeUndefined();
    expect(invalidMessage([{ jsonrpc: '2.0', id: 1, method: 'ping' }])).toBeUndefined();
  });

  it.each([
    [{ jsonrpc: '1.0', id: 1, method: 'ping' }, 1],
    [{ jsonrpc: '2.0', id: 1 }, 1],
    [{ jsonrpc: '2.0', id: { x: 1 }, method: 'ping' }, null],
    [{ jsonrpc: '2.0', id: 1.5, method: 'ping' }, null],
    [{ jsonrpc: '2.0', id: 7, method: 5 }, 7],
    [{ jsonrpc: '2.0', id: 7, method: 'tools/list', params: [1] }, 7],
    [[], null],
    [[1], null],
  ])('refuses %j as an invalid request (id %p)', (body, id) => {
    expect(invalidMessage(body)).toEqual({ id, message: expect.stringMatching(/^Invalid Request/) });
  });

  it('recognises JSON-RPC in unparseable text', () => {
    expect(looksLikeJsonRpc('{"jsonrpc": "2.0", "id": 1,,}')).toBe(true);
    expect(looksLikeJsonRpc('{"tool": "x",,}')).toBe(false);
    expect(looksLikeJsonRpc(undefined)).toBe(false);
  });

  it('normalises a bare curl request for the Streamable HTTP transport', () => {
    const req = {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'mcp-protocol-version': '2026-07-28' },
      rawHeaders: ['Content-Type', 'application/x-www-form-urlencoded', 'MCP-Protocol-Version', '2026-07-28'],
    } as unknown as IncomingMessage;
    normaliseRequest(req);
    expect(req.headers).toMatchObject({
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': '2025-11-25',
    });
    expect(req.rawHeaders).toEqual([
      'accept',
      'application/json, text/event-stream',
      'content-type',
      'application/json',
      'mcp-protocol-version',
      '2025-11-25',
    ]);
  });
});

describe('session argument summaries', () => {
  it('redacts secret-looking keys and cuts long arguments', () => {
    expect(JSON.parse(summarizeArgs({ user: 'ann', password: 'hunter2', nested: { api_key: 'k' } }).text)).toEqual({
      user: 'ann',
      password: '[redacted]',
      nested: { api_key: '[redacted]' },
    });
    const long = summarizeArgs({ text: 'x'.repeat(5000) });
    expect(long.truncated).toBe(true);
    expect(long.text).toHaveLength(ARGS_MAX);
  });
});

describe('displayUrl', () => {
  it('drops credentials and query strings', () => {
    expect(displayUrl('http://user:secret@example.test:8080/base/?token=abc')).toBe('http://example.test:8080/base');
    expect(displayUrl('not a url')).toBe('(invalid url)');
  });
});

describe('configuration', () => {
  it('builds the registry from the inventory, honouring <ID>_URL and <ID>_PORT', () => {
    const config = readConfig({ SYSTEM_MCP_PORT: '9999', TERMINAL_MCP_URL: 'http://terminal.internal:8003/' });
    const byId = new Map(config.downstreams!.map((d) => [d.id, d]));
    expect(byId.get('system-mcp')).toMatchObject({ url: 'http://127.0.0.1:9999', primaryFor: ['system_info'] });
    expect(byId.get('terminal-mcp')?.url).toBe('http://terminal.internal:8003');
    expect(byId.get('filesystem-mcp')?.tools).toContain('file_read');
    expect(byId.has('mega-orchestrator')).toBe(false);
    expect(byId.has('vision-mcp')).toBe(false);
    expect(config).toMatchObject({
      HEALTH_POLL_MS: 5000,
      DOWNSTREAM_TIMEOUT_MS: 30_000,
      BREAKER_FAILURES: 5,
      BREAKER_COOLDOWN_MS: 10_000,
      // the whole catalog in one tools/list page unless MCP_PAGE_SIZE is set
      MCP_PAGE_SIZE: 0,
    });
  });

  it('polls just the services FLEET_SERVICES names, and refuses an id it does not know', () => {
    const config = readConfig({ FLEET_SERVICES: 'system-mcp, git-mcp', STDIO_SERVERS: 'false' });
    expect(config.downstreams!.map((d) => d.id).sort()).toEqual(['git-mcp', 'system-mcp']);
    expect(readConfig({ STDIO_SERVERS: 'false' }).downstreams!.length).toBeGreaterThan(10);
    expect(() => readConfig({ FLEET_SERVICES: 'system-mcp,gti-mcp' })).toThrow(/gti-mcp.*built services: .*git-mcp/);
  });

  it('fails fast naming every bad variable', () => {
    let message = '';
    try {
      readConfig({ HEALTH_POLL_MS: 'soon', LLM_BASE_URL: 'not a url', BREAKER_FAILURES: '0' });
    } catch (err) {
      message = (err as Error).message;
    }
    for (const variable of ['HEALTH_POLL_MS', 'LLM_BASE_URL', 'BREAKER_FAILURES']) expect(message).toContain(variable);
  });
});
