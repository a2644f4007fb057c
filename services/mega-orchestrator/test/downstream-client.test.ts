/**
 * The gateway's HTTP client for downstreams (node:http with a keep-alive Agent), over real sockets:
 * keep-alive reuse, answer size limits (declared and streamed), timeouts, a caller that goes away,
 * refused connections (not delivered, safe to fail over) and non-JSON answers.
 */
import net from 'node:net';
import type http from 'node:http';
import { serve } from '@mcp-fleet/testing';
import type { RunningServer } from '@mcp-fleet/kit';
import { DownstreamClient, DownstreamFailure } from '../src/downstream/http-client';

describe('DownstreamClient', () => {
  let server: RunningServer;
  let client: DownstreamClient;
  const sockets = new Set<unknown>();
  const handlers: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void> = {
    '/json': (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ got: body ? JSON.parse(body) : null, requestId: req.headers['x-request-id'] }));
      });
    },
    '/big-declared': (_req, res) => {
      res.setHeader('content-length', '5000');
      res.end('x'.repeat(5000));
    },
    '/big-streamed': (_req, res) => {
      res.write('['); // chunked: no length to refuse up front
      const timer = setInterval(() => res.write('"' + 'y'.repeat(200) + '",'), 1);
      res.on('close', () => clearInterval(timer));
    },
    '/slow': (_req, res) => {
      const timer = setTimeout(() => res.end('{}'), 2000);
      res.on('close', () => clearTimeout(timer));
    },
    '/text': (_req, res) => res.end('plain words'),
  };

  beforeAll(async () => {
    server = await serve((req, res) => {
      sockets.add(req.socket);
      (handlers[req.url ?? ''] ?? ((_q, r) => ((r.statusCode = 404), r.end('{}'))))(req, res);
    });
    client = new DownstreamClient(`${server.url}/`, { connections: 2, maxResponseBytes: 1024, connectTimeoutMs: 500 });
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('sends the body and request id and reuses its keep-alive connections', async () => {
    sockets.clear();
    for (let i = 0; i < 10; i++) {
      const answer = await client.request({
        method: 'POST',
        path: '/json',
        body: JSON.stringify({ i }),
        requestId: `r-${i}`,
        timeoutMs: 2000,
      });
      expect(answer).toEqual({ status: 200, json: { got: { i }, requestId: `r-${i}` } });
    }
    expect(sockets.size).toBe(1);
  });

  it('refuses answers over maxResponseBytes, whether declared or streamed, and stays usable', async () => {
    const declared = await client.request({ method: 'GET', path: '/big-declared', timeoutMs: 2000 });
    expect(declared).toMatchObject({ status: 200, json: undefined, problem: 'an answer larger than 1024 bytes' });
    const streamed = await client.request({ method: 'GET', path: '/big-streamed', timeoutMs: 2000 });
    expect(streamed).toMatchObject({ status: 200, json: undefined, problem: 'an answer larger than 1024 bytes' });
    expect((await client.request({ method: 'GET', path: '/json', timeoutMs: 2000 })).status).toBe(200);
  });

  it('says when an answer is not JSON', async () => {
    expect(await client.request({ method: 'GET', path: '/text', timeoutMs: 2000 })).toMatchObject({
      json: undefined,
      problem: 'a non-JSON answer ("plain words")',
    });
  });

  it('fails a slow downstream with timeout, and a call whose caller went away with aborted', async () => {
    const started = Date.now();
    const slow = await client.request({ method: 'GET', path: '/slow', timeoutMs: 100 }).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(DownstreamFailure);
    expect(slow).toMatchObject({ kind: 'timeout', delivered: true });
    expect(Date.now() - started).toBeLessThan(1000);
    const caller = new AbortController();
    setTimeout(() => caller.abort(), 50);
    const gone = await client.request({ method: 'GET', path: '/slow', timeoutMs: 5000, signal: caller.signal }).catch((e: unknown) => e);
    expect(gone).toMatchObject({ kind: 'aborted', delivered: true });
  });

  it('marks a refused connection as not delivered, so the call may go to another owner', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const nowhere = new DownstreamClient(`http://127.0.0.1:${port}`, { connections: 1, maxResponseBytes: 1024, connectTimeoutMs: 500 });
    const failure = await nowhere.request({ method: 'GET', path: '/json', timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ kind: 'refused', delivered: false, message: `connection refused at http://127.0.0.1:${port}` });
    await nowhere.destroy();
  });
});

/**
 * A kit service's answers read at the gateway's edge (src/downstream/kit-answers.ts): each operation's
 * typed value only when its route answered 200 with the shape MCP's result has; anything else is a
 * failure with its status and envelope, and the JSON-RPC error an envelope carries (a gateway behind
 * the gateway) as rpcError. A real HTTP service answers every route as `shapes` says.
 */
describe("a kit service's answers, typed where they come in", () => {
  let server: RunningServer;
  let client: DownstreamClient;
  const rpcEnvelope = {
    success: false,
    code: 'UPSTREAM_ERROR',
    error: 'inner answered an MCP error -32042',
    details: { mcpError: { code: -32042, message: 'open this', data: { elicitations: [] } } },
  };
  /** Each route's status and body, per case. */
  let shapes: Record<string, [number, unknown]> = {};

  beforeAll(async () => {
    server = await serve((req, res) => {
      req.resume();
      req.on('end', () => {
        const [status, body] = shapes[req.url ?? ''] ?? [404, { success: false, code: 'NOT_FOUND', error: 'no such route' }];
        res.statusCode = status;
        res.setHeader('content-type', 'application/json');
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      });
    });
    client = new DownstreamClient(server.url, { connections: 2, maxResponseBytes: 1 << 20, connectTimeoutMs: 500 });
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });
  const o = { timeoutMs: 5000 };

  it('gives each operation its value when the route answered its shape', async () => {
    const messages = [{ role: 'user', content: { type: 'text', text: 'hi' } }];
    shapes = {
      '/health': [200, { status: 'degraded' }],
      '/tools/list': [200, { tools: [{ name: 'a' }], more: true }],
      '/prompts/list': [200, { prompts: [] }],
      '/prompts/get': [200, { messages }],
      '/resources/read': [200, { contents: [{ uri: 'x://1', text: 't' }] }],
      '/completion/complete': [200, { completion: { values: ['v'] } }],
      '/resources/subscribe': [200, {}],
      '/tools/call': [200, { success: true, service: 'kit', result: [1, 2] }],
    };
    expect((await client.health(o)).value).toEqual({ status: 'degraded' });
    expect((await client.list('tools', o)).value).toEqual({ items: [{ name: 'a' }], more: true });
    expect((await client.list('prompts', o)).value).toEqual({ items: [], more: false });
    expect((await client.getPrompt('p', {}, o)).value).toEqual({ messages });
    expect((await client.readResource('x://1', o)).value).toEqual({ contents: [{ uri: 'x://1', text: 't' }] });
    expect((await client.complete({ ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' } }, o)).value).toEqual({
      completion: { values: ['v'] },
    });
    expect((await client.subscribe('x://1', o)).value).toBe(true);
    // a result that is not an object is structuredContent's {result}, its JSON the text
    expect((await client.callTool('t', {}, o)).result).toEqual({
      content: [{ type: 'text', text: '[1,2]' }],
      structuredContent: { result: [1, 2] },
      isError: false,
    });
  });

  it('gives no value for a 200 without the shape, a non-JSON answer, or an error, keeping status and envelope', async () => {
    shapes = {
      '/health': [503, { status: 'down' }],
      '/tools/list': [200, { tools: 'many' }],
      '/prompts/list': [200, 'not json'],
      '/prompts/get': [200, { messages: {} }],
      '/resources/read': [400, { success: false, code: 'VALIDATION_ERROR', error: 'bad uri' }],
      '/completion/complete': [200, { completion: { values: 'v' } }],
      '/resources/subscribe': [502, { success: false, code: 'UPSTREAM_ERROR', error: 'no' }],
      '/tools/call': [200, { result: 'no success field' }],
    };
    const health = await client.health(o);
    expect([health.value, health.status]).toEqual([undefined, 503]);
    expect((await client.list('tools', o)).value).toBeUndefined();
    const prompts = await client.list('prompts', o);
    expect([prompts.value, prompts.problem]).toEqual([undefined, expect.stringContaining('non-JSON')]);
    expect((await client.getPrompt('p', {}, o)).value).toBeUndefined();
    const read = await client.readResource('x://1', o);
    expect([read.value, read.status, read.json]).toEqual([undefined, 400, expect.objectContaining({ error: 'bad uri' })]);
    expect(
      (await client.complete({ ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' } }, o)).value,
    ).toBeUndefined();
    expect((await client.subscribe('x://1', o)).value).toBeUndefined();
    const call = await client.callTool('t', {}, o);
    expect([call.result, call.status]).toEqual([undefined, 200]);
  });

  it('reads the JSON-RPC error and the MCP result an envelope carries (a gateway behind the gateway)', async () => {
    const own = { content: [{ type: 'text', text: 'tool failed' }], structuredContent: { why: 'x' } };
    shapes = {
      '/prompts/get': [502, rpcEnvelope],
      '/resources/read': [502, rpcEnvelope],
      '/tools/call': [502, { success: false, code: 'UPSTREAM_ERROR', error: 'inner: tool failed', mcp: own }],
    };
    expect((await client.getPrompt('p', {}, o)).rpcError).toEqual(rpcEnvelope.details.mcpError);
    expect((await client.readResource('x://1', o)).rpcError).toEqual(rpcEnvelope.details.mcpError);
    expect((await client.callTool('t', {}, o)).result).toEqual({ ...own, isError: true });
    shapes['/tools/call'] = [502, rpcEnvelope];
    const call = await client.callTool('t', {}, o);
    expect([call.result, call.rpcError]).toEqual([undefined, rpcEnvelope.details.mcpError]);
  });
});
