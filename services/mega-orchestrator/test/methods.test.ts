/**
 * One table of MCP methods for both revisions (issue 29, src/mcp/methods.ts): every method of the
 * table is served alike by a 2025-11-25 session (the SDK server, and its hot path for tools/call,
 * prompts/get and resources/read), a sessionless 2025-era request and a 2026-07-28 request; what
 * differs is written by each revision's codec (resultType and cache hints, error statuses). And the
 * one place failures become statuses and codes (src/mcp/errors.ts) follows the kit's table.
 */
import { tempDir } from '@mcp-fleet/testing';
import { AppError, ERROR_CODES, HttpRpcError, JSONRPC_CODES } from '@mcp-fleet/kit';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { METHODS } from '../src/mcp/methods';
import { rpcFailure, statusOfRpcCode } from '../src/mcp/errors';
import { alphaTools, initSession, post2026, startDownstream, startGateway, type Downstream, type RunningGateway } from './helpers';

let tmp: ReturnType<typeof tempDir>;
let alpha: Downstream;
let g: RunningGateway;

beforeAll(async () => {
  tmp = tempDir();
  alpha = await startDownstream('alpha-mcp', alphaTools);
  g = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmp.dir);
});

afterAll(async () => {
  await g.stop();
  await alpha.stop();
  tmp.cleanup();
});

/** Params each method of the table is asked with; the answer (result or error) must be the same in both revisions. */
const ASKED: Record<keyof typeof METHODS, Record<string, unknown>> = {
  'tools/list': {},
  'tools/call': { name: 'echo', arguments: { text: 'hi' } },
  'prompts/list': {},
  'prompts/get': { name: 'no-such-prompt' },
  'completion/complete': { ref: { type: 'ref/resource', uri: 'mega://health' }, argument: { name: 'x', value: '' } },
  'resources/list': {},
  'resources/templates/list': {},
  'resources/read': { uri: 'mega://schema' },
  'skills/list': {},
  'skills/get': { uri: 'skill://alpha-mcp/none/SKILL.md' },
  'resources/directory/read': { uri: 'skill://alpha-mcp/none/' },
};

type Answer = { result?: Record<string, unknown>; error?: { code: number; message: string } };

/** What the 2026-07-28 codec adds to a result: its resultType and cache hints. */
const without2026 = ({ resultType: _t, ttlMs: _ttl, cacheScope: _scope, ...rest }: Record<string, unknown>) => rest;

async function session2025(method: string, params: Record<string, unknown>, sid?: string): Promise<{ status: number; body: Answer }> {
  const res = await fetch(`${g.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(sid ? { 'mcp-session-id': sid } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

describe('one method table, both revisions', () => {
  it('covers what both revisions serve', () => {
    expect(Object.keys(METHODS).sort()).toEqual(Object.keys(ASKED).sort());
  });

  it.each(Object.keys(ASKED))('%s: a 2025 session, a sessionless 2025 request and a 2026-07-28 request answer alike', async (method) => {
    const params = ASKED[method as keyof typeof METHODS];
    const sid = await initSession(g.url);
    const inSession = await session2025(method, params, sid);
    const sessionless = await session2025(method, params);
    const res2026 = await post2026(g.url, method, params, params.uri ? { headers: { 'mcp-name': String(params.uri) } } : {});
    const modern = (await res2026.json()) as Answer;
    for (const answer of [inSession.body, sessionless.body, modern]) expect(answer.error?.code).not.toBe(JSONRPC_CODES.METHOD_NOT_FOUND);
    expect(inSession.status).toBe(200);
    expect(sessionless.status).toBe(200);
    if (inSession.body.error) {
      // the same error, by code, everywhere (HTTP 200 in both: the table's errors are the method's, not the transport's)
      expect(sessionless.body.error?.code).toBe(inSession.body.error.code);
      expect(modern.error?.code).toBe(inSession.body.error.code);
      expect(res2026.status).toBe(200);
      return;
    }
    expect(res2026.status).toBe(200);
    expect(modern.result?.resultType).toBe('complete');
    // tools/call's and resources/read's live parts (durations, the health view) are compared by shape
    const strip = (r: Record<string, unknown>) => (method === 'tools/call' || method === 'resources/read' ? Object.keys(r).sort() : r);
    expect(strip(without2026(modern.result!))).toEqual(strip(inSession.body.result!));
    expect(strip(sessionless.body.result!)).toEqual(strip(inSession.body.result!));
  });
});

describe('failures become statuses and JSON-RPC codes in one place', () => {
  it('reads the protocol codes and the kit table', () => {
    expect(statusOfRpcCode(JSONRPC_CODES.PARSE_ERROR)).toBe(400);
    expect(statusOfRpcCode(JSONRPC_CODES.INVALID_REQUEST)).toBe(400);
    expect(statusOfRpcCode(JSONRPC_CODES.SESSION_NOT_FOUND)).toBe(404);
    expect(statusOfRpcCode(JSONRPC_CODES.CONNECTION_CLOSED)).toBe(503);
    expect(statusOfRpcCode(JSONRPC_CODES.MISSING_REQUIRED_CLIENT_CAPABILITY)).toBe(400);
    for (const { status, rpc } of [
      ERROR_CODES.RATE_LIMITED,
      ERROR_CODES.PAYLOAD_TOO_LARGE,
      ERROR_CODES.UPSTREAM_UNAVAILABLE,
      ERROR_CODES.TIMEOUT,
    ])
      expect(statusOfRpcCode(rpc)).toBe(status);
    expect(statusOfRpcCode(-31999)).toBe(500);
  });

  it('answers a fleet error by the kit table over 2026-07-28 and with 200 over 2025; hides internal errors', () => {
    const down = new AppError('UPSTREAM_UNAVAILABLE', 'alpha is down', { details: { service: 'alpha' } });
    expect(rpcFailure(down, '2026-07-28')).toEqual({
      status: 503,
      code: ERROR_CODES.UPSTREAM_UNAVAILABLE.rpc,
      message: 'alpha is down',
      data: { service: 'alpha' },
      internal: false,
    });
    expect(rpcFailure(down, '2025-11-25')).toMatchObject({ status: 200, code: ERROR_CODES.UPSTREAM_UNAVAILABLE.rpc });
    expect(rpcFailure(new McpError(JSONRPC_CODES.METHOD_NOT_FOUND, 'no'), '2026-07-28')).toMatchObject({ status: 404, message: 'no' });
    expect(rpcFailure(new McpError(JSONRPC_CODES.METHOD_NOT_FOUND, 'no'), '2025-11-25')).toMatchObject({ status: 200 });
    expect(rpcFailure(new HttpRpcError(400, JSONRPC_CODES.HEADER_MISMATCH, 'h'), '2025-11-25')).toMatchObject({
      status: 400,
      code: -32020,
    });
    const boom = new Error('secret detail');
    expect(rpcFailure(boom, '2026-07-28')).toMatchObject({ status: 500, code: JSONRPC_CODES.INTERNAL_ERROR, internal: true });
    expect(rpcFailure(boom, '2026-07-28').message).not.toContain('secret');
    expect(rpcFailure(boom, '2025-11-25')).toMatchObject({ status: 200, message: 'Internal error', internal: true });
  });
});
