import expressLib from 'express';
import http from 'node:http';
import request from 'supertest';
import { z } from 'zod';
import { AppError, createServiceApp, defineTool, ERROR_CODES, idTracer, parseTraceparent, UPGRADE, type FleetTracer } from '../src';
import { countsAdded, requestCounts, testConfig, testLogger, unmatchedAs } from '../src/test-support';

const echo = defineTool({
  name: 'echo',
  description: 'Echo the text back.',
  input: z.object({ text: z.string().max(10), times: z.number().int().min(1).max(3).default(1), loud: z.boolean().optional() }).strict(),
  annotations: { readOnlyHint: true, idempotentHint: true },
  handler: (a) => ({ text: (a.loud ? a.text.toUpperCase() : a.text).repeat(a.times) }),
});
const boom = defineTool({
  name: 'boom',
  description: 'Throws an unexpected error.',
  input: z.object({}),
  handler: () => {
    throw new Error('secret internals');
  },
});
const slow = defineTool({
  name: 'slow',
  description: 'Sleeps.',
  input: z.object({}),
  timeoutMs: 100,
  handler: () => new Promise((r) => setTimeout(r, 1000)),
});
const conflict = defineTool({
  name: 'conflict',
  description: 'Conflicts.',
  input: z.object({}),
  handler: () => {
    throw new AppError('RATE_LIMITED', 'slow down', { retryAfter: 7 });
  },
});

/** What a tool is handed of its request: the request id, the span's trace id and the credential. */
const context = defineTool({
  name: 'context',
  description: 'Shows its call context.',
  input: z.object({}),
  handler: (_a, ctx) => ({
    requestId: ctx.requestId,
    traceId: parseTraceparent(ctx.traceparent)?.traceId,
    authorization: ctx.authorization,
  }),
});
/** Runs until its call is aborted, and records why. */
const aborted: string[] = [];
let waiting: () => void = () => undefined;
const wait = defineTool({
  name: 'wait',
  description: 'Waits for its abort.',
  input: z.object({}),
  handler: (_a, ctx) =>
    new Promise((_resolve, reject) => {
      ctx.signal.addEventListener('abort', () => {
        aborted.push((ctx.signal.reason as AppError).code);
        reject(ctx.signal.reason);
      });
      waiting();
    }),
});

/** The spans of every request, as the tracer saw them. */
interface SpanRecord {
  name: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  failed?: string;
  ended: boolean;
}
const spans: SpanRecord[] = [];
const recording: FleetTracer = {
  startSpan(name, options = {}) {
    const span = idTracer().startSpan(name, options);
    const record: SpanRecord = { name, parentSpanId: span.parentSpanId, attributes: { ...options.attributes }, ended: false };
    spans.push(record);
    return {
      ...span,
      setAttribute: (k, v) => void (record.attributes[k] = v),
      fail: (code) => void (record.failed = code),
      end: () => void (record.ended = true),
    };
  },
  shutdown: async () => undefined,
};

const svc = createServiceApp({
  service: 'kit-test',
  config: { ...testConfig, BODY_LIMIT: '2kb' },
  logger: testLogger(),
  tools: [echo, boom, slow, conflict, context, wait],
  tracer: recording,
  routes: (r) => {
    r.tool('get', '/echo/*text', 'echo');
    r.tool('post', '/echo', 'echo');
  },
});
const app = svc.app;

describe('service kit', () => {
  it('maps every error code to its documented HTTP status', () => {
    expect(ERROR_CODES.VALIDATION_ERROR.status).toBe(400);
    expect(ERROR_CODES.UNKNOWN_TOOL.status).toBe(404);
    expect(ERROR_CODES.UPSTREAM_UNAVAILABLE.status).toBe(503);
    expect(ERROR_CODES.TIMEOUT.status).toBe(504);
    expect(ERROR_CODES.PAYLOAD_TOO_LARGE.status).toBe(413);
  });

  it('serves REST routes through the tool handler, coercing query strings by the schema', async () => {
    const res = await request(app).get('/echo/a/b?times=2&loud=true').expect(200);
    expect(res.body.result).toEqual({ text: 'A/BA/B' });
    const post = await request(app).post('/echo').send({ text: 'hi' }).expect(200);
    expect(post.body.result.text).toBe('hi');
  });

  it('returns field-level details for bad arguments', async () => {
    const res = await request(app)
      .post('/tools/echo')
      .send({ text: 'x'.repeat(11), times: 9 })
      .expect(400);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['text', 'times']);
  });

  it('answers malformed JSON with VALIDATION_ERROR and oversize bodies with PAYLOAD_TOO_LARGE', async () => {
    const bad = await request(app).post('/tools/call').set('Content-Type', 'application/json').send('{"name": "echo",').expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect(bad.body.error).toMatch(/not valid JSON/);
    // valid JSON that is not an object: said so
    for (const path of ['/tools/call', '/tools/echo']) {
      const bare = await request(app).post(path).set('Content-Type', 'application/json').send('42').expect(400);
      expect(bare.body).toMatchObject({
        code: 'VALIDATION_ERROR',
        error: 'The request body is a JSON number, not a JSON object; send {...}.',
      });
    }
    const big = await request(app)
      .post('/tools/call')
      .send({ name: 'echo', arguments: { text: 'x'.repeat(5000) } })
      .expect(413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('hides unexpected errors behind INTERNAL', async () => {
    const res = await request(app).post('/tools/boom').send({}).expect(500);
    expect(res.body).toMatchObject({ success: false, code: 'INTERNAL', service: 'kit-test' });
    expect(JSON.stringify(res.body)).not.toContain('secret internals');
  });

  it('times out slow tools with TIMEOUT and sets Retry-After when asked', async () => {
    const res = await request(app).post('/tools/slow').send({}).expect(504);
    expect(res.body.code).toBe('TIMEOUT');
    const limited = await request(app).post('/tools/conflict').send({}).expect(429);
    expect(limited.headers['retry-after']).toBe('7');
  });

  it('answers unknown routes and tools with NOT_FOUND and UNKNOWN_TOOL', async () => {
    expect((await request(app).get('/nope').expect(404)).body.code).toBe('NOT_FOUND');
    expect((await request(app).post('/tools/call').send({ name: 'nope' }).expect(404)).body.code).toBe('UNKNOWN_TOOL');
    expect((await request(app).post('/tools/call').send({ name: 5 }).expect(400)).body.code).toBe('VALIDATION_ERROR');
  });

  it('echoes a safe X-Request-Id and replaces an unsafe one', async () => {
    const ok = await request(app).get('/health').set('X-Request-Id', 'abc-123').expect(200);
    expect(ok.headers['x-request-id']).toBe('abc-123');
    const bad = await request(app).get('/health').set('X-Request-Id', 'a b\tc').expect(200);
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the hot path (POST /tools/* with a plain JSON body, answered before Express)', () => {
  // `application/vnd.fleet+json` is JSON to the body parser but not to the hot path: the same
  // request through both must get the same answer, headers, metrics, span and call context.
  const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  let sent = 0;
  const settle = () => new Promise((resolve) => setTimeout(resolve, 5));
  const send = async (type: string, path: string, raw: string) => {
    const requestId = `hot-${String(++sent).padStart(4, '0')}`;
    const before = await requestCounts(svc.metrics.registry);
    const res = await request(app)
      .post(path)
      .set({ 'Content-Type': type, 'X-Request-Id': requestId, traceparent: TRACEPARENT, Authorization: 'Bearer t' })
      .send(raw);
    await settle();
    return { res, requestId, counted: countsAdded(before, await requestCounts(svc.metrics.registry)), span: spans[spans.length - 1] };
  };
  const both = async (path: string, raw: string) => ({
    fast: await send('application/json', path, raw),
    slow: await send('application/vnd.fleet+json', path, raw),
  });
  const comparable = ({ res, requestId }: Awaited<ReturnType<typeof send>>) => {
    const { timestamp: _t, ...body } = res.body as Record<string, unknown>;
    // An Express answer to a call carries an ETag; the hot path's does not (nor any error answer).
    const { date: _d, etag: _e, 'x-request-id': echoed, ...headers } = res.headers;
    return {
      status: res.status,
      headers,
      body: JSON.parse(JSON.stringify(body).replaceAll(requestId, '<id>')),
      echoed: echoed === requestId,
    };
  };
  // Where Express's body parser or router fails before a route matches, its route is "unmatched".
  const asRoute = (slow: Awaited<ReturnType<typeof send>>, route: string) => ({
    counted: unmatchedAs(slow.counted, route),
    span: { ...slow.span, attributes: { ...slow.span.attributes, 'http.route': route } },
  });

  it.each([
    ['a good call', '/tools/echo', '{"text": "hi", "times": 2}', false],
    ['/tools/call', '/tools/call', '{"name": "echo", "arguments": {"text": "yo"}}', false],
    ['bad arguments', '/tools/echo', '{"text": 5}', false],
    ['an empty body', '/tools/echo', '', false],
    ['malformed JSON', '/tools/echo', '{"text": ', true],
    ['a JSON scalar (strict mode)', '/tools/echo', '"text"', true],
    ['a JSON array', '/tools/echo', '[1, 2]', false],
    ['an unknown tool', '/tools/nope', '{}', false],
    ['a bad percent-escape', '/tools/%E0%A4%A', '{}', true],
    ['a bad /tools/call body', '/tools/call', '{"arguments": {}}', false],
    ['an oversize body', '/tools/echo', JSON.stringify({ text: 'x'.repeat(5000) }), true],
    ['a tool error with Retry-After', '/tools/conflict', '{}', false],
    ['an unexpected error', '/tools/boom', '{}', false],
    ['the call context (request id, trace, credential)', '/tools/context', '{}', false],
  ])('answers %s as the Express routes do', async (_what, path, raw, failsBeforeRoute) => {
    const { fast, slow } = await both(path, raw);
    expect(comparable(fast)).toEqual(comparable(slow));
    expect(comparable(fast).echoed).toBe(true);
    expect(fast.res.headers.etag).toBeUndefined();
    const route = path === '/tools/call' ? '/tools/call' : '/tools/:tool';
    const status = `"status":"${fast.res.status}"`;
    expect(Object.keys(fast.counted)).toContainEqual(`mcp_fleet_http_requests_total{"method":"POST","route":"${route}",${status}}`);
    const express = failsBeforeRoute ? asRoute(slow, route) : slow;
    expect(fast.counted).toEqual(express.counted);
    expect(fast.span).toEqual(express.span);
    expect(fast.span).toMatchObject({ name: `POST ${path}`, parentSpanId: 'b7ad6b7169203331', ended: true });
  });

  it('hands the tool the request id, the trace and the credential', async () => {
    const { fast } = await both('/tools/context', '{}');
    expect(fast.res.body.result).toEqual({
      requestId: fast.requestId,
      traceId: '0af7651916cd43dd8448eb211c80319c',
      authorization: 'Bearer t',
    });
  });

  it('aborts the call when the client goes away, as the Express route does', async () => {
    const server = http.createServer(app).listen(0);
    try {
      const port = (server.address() as { port: number }).port;
      const counted: Record<string, number>[] = [];
      for (const type of ['application/json', 'application/vnd.fleet+json']) {
        const before = await requestCounts(svc.metrics.registry);
        const started = new Promise<void>((resolve) => (waiting = resolve));
        const req = http.request({ port, method: 'POST', path: '/tools/wait', headers: { 'content-type': type } });
        req.on('error', () => undefined);
        req.end('{}');
        await started;
        req.destroy();
        const count = aborted.length;
        while (aborted.length === count) await settle();
        await settle();
        counted.push(countsAdded(before, await requestCounts(svc.metrics.registry)));
      }
      expect(aborted.slice(-2)).toEqual(['TIMEOUT', 'TIMEOUT']);
      expect(counted[0]).toEqual(counted[1]);
      expect(counted[0]).toMatchObject({ 'mcp_fleet_tool_calls_total{"tool":"wait","outcome":"TIMEOUT"}': 1 });
    } finally {
      server.close();
    }
  });

  it('leaves a call that asks for progress (X-Progress) to the Express route', async () => {
    const res = await request(app)
      .post('/tools/echo')
      .set({ 'Content-Type': 'application/json', 'X-Progress': 'ndjson' })
      .send('{"text": "p"}')
      .buffer(true)
      .parse((stream, done) => {
        let text = '';
        stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
        stream.on('end', () => done(null, text));
      })
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(JSON.parse(String(res.body).trim().split('\n').pop()!)).toMatchObject({ status: 200, envelope: { result: { text: 'p' } } });
  });

  it('stays behind the middleware a service mounts in extend', async () => {
    const guarded = createServiceApp({
      service: 'kit-guarded',
      config: testConfig,
      logger: testLogger(),
      tools: [echo],
      defaultMetrics: false,
      extend: (express, kit) =>
        express.use((req, res, next) =>
          req.headers.authorization === 'Bearer ok' ? next() : kit.sendError(res, new AppError('UNAUTHORIZED', 'Send the token.')),
        ),
    });
    const post = () => request(guarded.app).post('/tools/echo').set('Content-Type', 'application/json');
    expect((await post().send('{"text": "g"}').expect(401)).body.code).toBe('UNAUTHORIZED');
    const ok = await post().set('Authorization', 'Bearer ok').send('{"text": "g"}').expect(200);
    expect(ok.body.result).toEqual({ text: 'g' });
    expect(ok.headers.etag).toBeUndefined();
  });

  const extended = (extend: NonNullable<Parameters<typeof createServiceApp>[0]['extend']>) =>
    createServiceApp({ service: 'kit-extended', config: testConfig, logger: testLogger(), tools: [echo], defaultMetrics: false, extend });

  it('keeps its hot path and channel when extend only adds routes elsewhere; not when they could stand before the tools', () => {
    const routesOnly = extended((express) => {
      express.get('/page', (_req, res) => void res.send('page'));
      express.post('/hook/:id', expressLib.raw({ type: () => true }), (_req, res) => void res.status(204).end());
    });
    expect(UPGRADE in routesOnly.app).toBe(true);
    // middleware, even on another path, and a route of its own under /tools stand before the tool routes
    expect(UPGRADE in extended((express) => void express.use('/admin', (_req, _res, next) => next())).app).toBe(false);
    expect(UPGRADE in extended((express) => void express.post('/tools/echo', (_req, res) => void res.send('mine'))).app).toBe(false);
    expect(UPGRADE in app).toBe(true);
  });

  it('serves the routes extend added beside the hot path', async () => {
    const routesOnly = extended((express) => void express.get('/page', (_req, res) => void res.send('page')));
    expect((await request(routesOnly.app).get('/page').expect(200)).text).toBe('page');
    const ok = await request(routesOnly.app).post('/tools/echo').set('Content-Type', 'application/json').send('{"text": "r"}').expect(200);
    expect(ok.body.result).toEqual({ text: 'r' });
  });

  it('is the path a plain JSON call takes: no ETag on its answer, counted under the /tools/:tool route', async () => {
    const fast = await request(app).post('/tools/echo').set('Content-Type', 'application/json').send('{"text": "e"}').expect(200);
    expect(fast.headers.etag).toBeUndefined();
    const slow = await request(app).post('/tools/echo').set('Content-Type', 'application/vnd.fleet+json').send('{"text": "e"}').expect(200);
    expect(slow.headers.etag).toBeDefined();
    const metrics = (await request(app).get('/metrics').expect(200)).text;
    expect(metrics).toMatch(/requests_total\{[^}]*method="POST",route="\/tools\/:tool",status="200"/);
    expect(metrics).not.toMatch(/route="unmatched",status="200"/);
  });

  it('reads a chunked body over the limit as PAYLOAD_TOO_LARGE without a Content-Length', async () => {
    const { Readable } = await import('node:stream');
    const http = await import('node:http');
    const server = http.createServer(app).listen(0);
    try {
      const port = (server.address() as { port: number }).port;
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request({ port, method: 'POST', path: '/tools/echo', headers: { 'content-type': 'application/json' } }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        Readable.from(['{"text": "', 'x'.repeat(3000), '"}']).pipe(req);
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body).code).toBe('PAYLOAD_TOO_LARGE');
    } finally {
      server.close();
    }
  });
});
