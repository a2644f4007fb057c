/**
 * Regression: a successful tool call left no log line in its service (the only line was at debug),
 * so the trace id docs/observability.md promises in the service's log appeared nowhere. Every call
 * now leaves one access line at info: tool, status, duration, request id, trace_id and span_id.
 */
import request from 'supertest';
import { z } from 'zod';
import { AppError, createLogger, createServiceApp, defineTool } from '../src';
import { mountMcpEndpoint } from '../src/mcp-endpoint';
import { testConfig } from '../src/test-support';

const echo = defineTool({
  name: 'echo',
  description: 'Echo the text back.',
  input: z.object({ text: z.string().max(10) }).strict(),
  handler: (a) => ({ text: a.text }),
});
const boom = defineTool({
  name: 'boom',
  description: 'Throws an unexpected error.',
  input: z.object({}),
  handler: () => {
    throw new Error('secret internals');
  },
});
const denied = defineTool({
  name: 'denied',
  description: 'Refuses.',
  input: z.object({}),
  handler: () => {
    throw new AppError('FORBIDDEN', 'not here');
  },
});

// the default level (info), as a service runs: what a line below it would not show
const logger = createLogger({ service: 'access-test' });
for (const t of logger.transports) t.silent = true;
const lines: Record<string, unknown>[] = [];
logger.on('data', (info: Record<string | symbol, unknown>) => lines.push(JSON.parse(String(info[Symbol.for('message')]))));

const svc = createServiceApp({
  service: 'access-test',
  config: testConfig,
  logger,
  tools: [echo, boom, denied],
  defaultMetrics: false,
  routes: (r) => r.tool('post', '/echo', 'echo'),
  extend: (app, kit) => mountMcpEndpoint(app, kit, { name: 'access-test', tools: [echo, boom, denied], bodyLimit: '1mb' }),
});

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const traceparent = `00-${TRACE}-00f067aa0ba902b7-01`;
const accessLines = () => lines.filter((l) => l.message === 'tool call');

/** The access lines one request left: exactly one is expected. */
async function linesOf(send: () => Promise<unknown>) {
  lines.length = 0;
  await send();
  await new Promise((r) => setImmediate(r));
  return accessLines();
}

describe('the access line of a tool call', () => {
  afterAll(() => svc.close());

  it.each([
    [
      'POST /tools/call',
      () =>
        request(svc.app)
          .post('/tools/call')
          .set('traceparent', traceparent)
          .send({ name: 'echo', arguments: { text: 'hi' } }),
    ],
    ['POST /tools/echo', () => request(svc.app).post('/tools/echo').set('traceparent', traceparent).send({ text: 'hi' })],
    ['a REST route (r.tool)', () => request(svc.app).post('/echo').set('traceparent', traceparent).send({ text: 'hi' })],
    [
      'POST /mcp tools/call',
      () =>
        request(svc.app)
          .post('/mcp')
          .set('traceparent', traceparent)
          .set('accept', 'application/json, text/event-stream')
          .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }),
    ],
  ])('a successful call through %s: one line at info with its trace id, tool, status and duration', async (_route, send) => {
    const found = await linesOf(send);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ level: 'info', service: 'access-test', tool: 'echo', status: 200, trace_id: TRACE });
    expect(found[0].span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(found[0].durationMs).toEqual(expect.any(Number));
    expect(found[0].requestId).toEqual(expect.any(String));
  });

  it.each([
    ['bad arguments', 'echo', { text: 'far too long text' }, 400, 'VALIDATION_ERROR'],
    ["the tool's refusal", 'denied', {}, 403, 'FORBIDDEN'],
    ['an internal fault', 'boom', {}, 500, 'INTERNAL'],
    ['an unknown tool', 'no_such_tool', {}, 404, 'UNKNOWN_TOOL'],
  ])('a failed call (%s): one line at info with its status and code', async (_what, name, args, status, code) => {
    const found = await linesOf(() =>
      request(svc.app).post('/tools/call').set('traceparent', traceparent).send({ name, arguments: args }).expect(status),
    );
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ level: 'info', tool: name, status, code, trace_id: TRACE });
    // the internal fault's cause stays in its own error line, never in the access line
    expect(JSON.stringify(found[0])).not.toContain('secret internals');
  });

  it('without a traceparent the call starts a trace, and its line carries that id', async () => {
    const found = await linesOf(() => request(svc.app).post('/tools/echo').send({ text: 'hi' }).expect(200));
    expect(found).toHaveLength(1);
    expect(found[0].trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(found[0].trace_id).not.toBe(TRACE);
  });
});
