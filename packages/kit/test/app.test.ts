import request from 'supertest';
import { z } from 'zod';
import { AppError, createServiceApp, defineTool, ERROR_CODES } from '../src';
import { testConfig, testLogger } from '../src/test-support';

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

const svc = createServiceApp({
  service: 'kit-test',
  config: { ...testConfig, BODY_LIMIT: '2kb' },
  logger: testLogger(),
  tools: [echo, boom, slow, conflict],
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

describe('the hot path (POST /tools/* with a plain JSON body, answered before the router)', () => {
  // `application/vnd.fleet+json` is JSON to the body parser but not to the hot path: the same
  // request through both must get the same answer.
  const both = async (path: string, raw: string) => {
    const fast = await request(app).post(path).set('Content-Type', 'application/json').send(raw);
    const slow = await request(app).post(path).set('Content-Type', 'application/vnd.fleet+json').send(raw);
    return { fast, slow };
  };
  const comparable = (res: request.Response) => {
    const { timestamp: _t, ...body } = res.body as Record<string, unknown>;
    return { status: res.status, type: res.headers['content-type'], body };
  };

  it.each([
    ['a good call', '/tools/echo', '{"text": "hi", "times": 2}'],
    ['/tools/call', '/tools/call', '{"name": "echo", "arguments": {"text": "yo"}}'],
    ['bad arguments', '/tools/echo', '{"text": 5}'],
    ['an empty body', '/tools/echo', ''],
    ['malformed JSON', '/tools/echo', '{"text": '],
    ['a JSON scalar (strict mode)', '/tools/echo', '"text"'],
    ['a JSON array', '/tools/echo', '[1, 2]'],
    ['an unknown tool', '/tools/nope', '{}'],
    ['a bad percent-escape', '/tools/%E0%A4%A', '{}'],
    ['a bad /tools/call body', '/tools/call', '{"arguments": {}}'],
    ['an oversize body', '/tools/echo', JSON.stringify({ text: 'x'.repeat(5000) })],
    ['a tool error with Retry-After', '/tools/conflict', '{}'],
    ['an unexpected error', '/tools/boom', '{}'],
  ])('answers %s as the Express routes do', async (_what, path, raw) => {
    const { fast, slow } = await both(path, raw);
    expect(comparable(fast)).toEqual(comparable(slow));
    expect(fast.headers['retry-after']).toBe(slow.headers['retry-after']);
    expect(fast.headers['x-request-id']).toBeDefined();
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
