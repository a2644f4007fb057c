/**
 * Express is loaded on first use (app.ts): the gateway's polls (GET /health, /tools/list,
 * /prompts/list) and tool calls are answered before it, as its routes answer them; any other
 * request, a conditional GET included, loads it and is answered by it.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { z } from 'zod';
import { createServiceApp, defineTool, type PromptSource, type ServiceApp, type ServiceAppOptions } from '../src';
import { weakEtag } from '../src/app';
import { countsAdded, requestCounts, testConfig, testLogger } from '../src/test-support';

const echo = defineTool({
  name: 'echo',
  description: 'Echo the text back.',
  input: z.object({ text: z.string(), times: z.number().int().optional() }),
  handler: (a) => ({ text: a.text }),
});
const prompts: PromptSource = {
  list: () => [{ name: 'greet', description: 'Says hello: é, ü and ✓ (multi-byte).', arguments: [{ name: 'who', required: true }] }],
  get: (_name, args) => ({ messages: [{ role: 'user', content: { type: 'text', text: `hello ${args.who}` } }] }),
};
const app = (withPrompts: boolean, routes: ServiceAppOptions['routes'] = (r) => r.tool('get', '/echo/:text', 'echo')): ServiceApp =>
  createServiceApp({
    service: 'lazy-test',
    config: testConfig,
    logger: testLogger('lazy-test'),
    tools: [echo],
    defaultMetrics: false,
    ...(withPrompts ? { prompts } : {}),
    routes,
  });

/** A GET answered by Express: If-None-Match with a tag no answer has takes the request past the fast path, and Express answers it in full. */
const viaExpress = (svc: ServiceApp, path: string) => request(svc.app).get(path).set('If-None-Match', '"no-such-tag"');
/** The same GET answered before Express and by it, and what each counted. */
async function bothWays(svc: ServiceApp, path: string) {
  const before = await requestCounts(svc.metrics.registry);
  const fast = await request(svc.app).get(path);
  const afterFast = await requestCounts(svc.metrics.registry);
  const slow = await viaExpress(svc, path);
  const afterSlow = await requestCounts(svc.metrics.registry);
  return { fast, slow, countedFast: countsAdded(before, afterFast), countedSlow: countsAdded(afterFast, afterSlow) };
}
const answer = (res: request.Response) => ({
  status: res.status,
  type: res.headers['content-type'],
  length: res.headers['content-length'],
  etag: res.headers.etag,
  body: res.text,
});

describe('the polled GETs before Express', () => {
  it.each([
    ['/tools/list', true],
    ['/prompts/list', true],
    ['/tools/list', false],
  ])('GET %s (prompts: %s) is answered as Express answers it, with the ETag Express gives it', async (path, withPrompts) => {
    const svc = app(withPrompts);
    const fast = await request(svc.app).get(path);
    const slow = await viaExpress(svc, path);
    expect(fast.status).toBe(200);
    expect(answer(fast)).toEqual(answer(slow));
    expect(fast.headers.etag).toBe(weakEtag(fast.text));
    // Express's own freshness check accepts the fast answer's tag
    const conditional = await request(svc.app).get(path).set('If-None-Match', fast.headers.etag);
    expect(conditional.status).toBe(304);
    expect(conditional.text).toBe('');
  });

  it('GET /health: the same report, status and headers (its timestamp aside), counted under the same route', async () => {
    const { fast, slow, countedFast, countedSlow } = await bothWays(app(false), '/health');
    const report = (res: request.Response) => ({ ...(res.body as Record<string, unknown>), timestamp: 'T', uptimeSeconds: 0 });
    expect(fast.status).toBe(200);
    expect(report(fast)).toEqual(report(slow));
    expect(report(fast)).toMatchObject({ service: 'lazy-test', tools: 1 });
    expect(fast.headers['content-type']).toBe(slow.headers['content-type']);
    expect(fast.headers.etag).toBe(weakEtag(fast.text));
    expect(slow.headers.etag).toBe(weakEtag(slow.text));
    expect(fast.headers['x-request-id']).toBeDefined();
    expect(countedFast).toEqual(countedSlow);
    expect(Object.keys(countedFast)).toContain('mcp_fleet_http_requests_total{"method":"GET","route":"/health","status":"200"}');
  });

  it('GET /prompts/list of a service without prompts: the not-found envelope Express gives, counted as unmatched', async () => {
    const { fast, slow, countedFast, countedSlow } = await bothWays(app(false), '/prompts/list?x=1');
    const envelope = (res: request.Response) => ({ ...(res.body as Record<string, unknown>), timestamp: 'T' });
    expect(fast.status).toBe(404);
    expect(slow.status).toBe(404);
    expect(envelope(fast)).toEqual(envelope(slow));
    expect(fast.body.error).toBe('No route GET /prompts/list on lazy-test; GET /tools/list shows its tools, POST /tools/call runs one.');
    expect(fast.headers.etag).toBeUndefined();
    expect(countedFast).toEqual(countedSlow);
    expect(Object.keys(countedFast)).toContain('mcp_fleet_http_requests_total{"method":"GET","route":"unmatched","status":"404"}');
  });

  it('a refused Host, a HEAD and the REST routes still reach Express and its guard', async () => {
    const svc = app(true);
    expect((await request(svc.app).get('/health').set('Host', 'evil.example')).status).toBe(403);
    const head = await request(svc.app).head('/tools/list');
    expect(head.status).toBe(200);
    expect(head.headers.etag).toBeDefined();
    const rest = await request(svc.app).get('/echo/hi');
    expect(rest.status).toBe(200);
    expect(rest.body.result).toEqual({ text: 'hi' });
  });

  it('a route Express cannot take shows at the first request that builds the app: a 500 (INTERNAL, its cause for the log), the polls still answered', async () => {
    const svc = app(false, (r) => r.tool('get', '/bad/:', 'echo'));
    expect((await request(svc.app).get('/health')).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await request(svc.app).get('/metrics');
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ success: false, code: 'INTERNAL', service: 'lazy-test' });
    }
    expect((await request(svc.app).get('/tools/list')).status).toBe(200);
  });

  it('a route naming an unknown tool still stops the start, before any request', () => {
    expect(() => app(false, (r) => r.tool('get', '/nope', 'nope'))).toThrow('lazy-test: route GET /nope names unknown tool nope');
  });
});

it('a service process loads Express only when a request needs it: not for the polls and a tool call, at GET /metrics', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', path.join(__dirname, 'fixtures', 'lazy-service.ts')], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({
    atStart: { express: false },
    afterPolls: { statuses: [200, 200, 404, 200], express: false },
    afterMetrics: { status: 200, express: true },
  });
});
