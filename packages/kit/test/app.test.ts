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
