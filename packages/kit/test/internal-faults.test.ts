import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { z } from 'zod';
import { AppError, createLogger, createServiceApp, defineTool, MAX_INPUT_DEPTH, toAppError, type ServiceApp } from '../src';
import { tempDir, testConfig } from '../src/test-support';

// Regression: the kit mapped every stack overflow to the caller's VALIDATION_ERROR, so code-graph-mcp's
// runaway recursion over `x = x.strip()` told the caller to "flatten" a perfectly ordinary file.

/** Recurses until the stack overflows, as a service bug would. */
function runaway(n: number): number {
  return runaway(n + 1) + 1;
}

const overflow = defineTool({
  name: 'overflow',
  description: 'Overflows the stack.',
  input: z.object({ text: z.string().max(100) }).strict(),
  handler: (args) => ({ n: runaway(args.text.length) }),
});
/** A library error with a 4xx status (an upstream's 404), thrown from a handler. */
const upstream404 = defineTool({
  name: 'upstream_404',
  description: 'Throws a library error carrying status 404.',
  input: z.object({}).strict(),
  handler: () => {
    throw Object.assign(new Error('Not Found: GET https://api.example/x'), { status: 404 });
  },
});
const store = defineTool({
  name: 'store',
  description: 'Stores any JSON value.',
  input: z.object({ value: z.unknown() }).strict(),
  handler: (args) => ({ bytes: JSON.stringify(args.value).length }),
});

/** A backend that is missing (NOT_CONFIGURED) or down (UPSTREAM_UNAVAILABLE, with the library's error as its cause). */
const backend = defineTool({
  name: 'backend',
  description: 'Fails as a missing or failing backend.',
  input: z.object({ missing: z.boolean() }).strict(),
  handler: (args) => {
    if (args.missing) throw new AppError('NOT_CONFIGURED', 'Mail is not configured: set SMTP_URL.');
    throw new AppError('UPSTREAM_UNAVAILABLE', 'The database did not answer; retry later.', {
      cause: new Error('connect ECONNREFUSED 127.0.0.1:5'),
    });
  },
});

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

const tmp = tempDir('kit-internal-');
const logFile = path.join(tmp.dir, 'svc.log');
const logger = createLogger({ service: 'kit-internal', file: logFile, level: 'info' });
logger.transports[0].silent = true; // the file transport is under test
let svc: ServiceApp;

beforeAll(() => {
  svc = createServiceApp({ service: 'kit-internal', config: testConfig, logger, tools: [overflow, upstream404, store, backend] });
});

afterAll(async () => {
  await svc.close();
  tmp.cleanup();
});

/** The matching log lines once there are `atLeast` of them (the file transport writes asynchronously; 5 s at most). */
async function logLines(match: (line: Record<string, unknown>) => boolean, atLeast = 1): Promise<Record<string, unknown>[]> {
  let hits: Record<string, unknown>[] = [];
  for (let i = 0; i < 250 && hits.length < atLeast; i++) {
    const lines = fs.existsSync(logFile)
      ? fs
          .readFileSync(logFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .flatMap((l): Record<string, unknown>[] => {
            try {
              return [JSON.parse(l) as Record<string, unknown>];
            } catch {
              return []; // a line still being written
            }
          })
      : [];
    hits = lines.filter(match);
    if (hits.length < atLeast) await new Promise((r) => setTimeout(r, 20));
  }
  return hits;
}

describe('internal faults are INTERNAL, never the caller’s fault', () => {
  it('maps a RangeError (stack overflow, invalid length) to INTERNAL', () => {
    expect(toAppError(new RangeError('Maximum call stack size exceeded')).code).toBe('INTERNAL');
    expect(toAppError(new RangeError('Invalid array length')).code).toBe('INTERNAL');
  });

  it('keeps the errors the edge raises about the request itself the caller’s (body reader, body parser, router)', () => {
    // the kit's own body reader (fast-json) when the client stops sending mid-body
    expect(toAppError(Object.assign(new Error('aborted'), { type: 'request.aborted', status: 400 })).code).toBe('VALIDATION_ERROR');
    // http-errors from Express's body parser and static files carry expose: true
    expect(toAppError(Object.assign(new Error('request size did not match content length'), { status: 400, expose: true })).code).toBe(
      'VALIDATION_ERROR',
    );
    // the router's undecodable path parameter
    expect(toAppError(Object.assign(new URIError("Failed to decode param '%E0'"), { status: 400 })).code).toBe('VALIDATION_ERROR');
  });

  it('answers a stack overflow in a handler with 500 INTERNAL and logs its cause', async () => {
    for (const send of [
      () => request(svc.app).post('/tools/overflow').send({ text: 'x = x.strip()' }),
      () =>
        request(svc.app)
          .post('/tools/call')
          .send({ name: 'overflow', arguments: { text: 'ok' } }),
    ]) {
      const res = await send();
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 500, code: 'INTERNAL' });
      expect(res.body.error).toMatch(/service log/);
      expect(JSON.stringify(res.body)).not.toMatch(/call stack|runaway/);
    }
    const logged = await logLines((l) => l.level === 'error' && l.code === 'INTERNAL', 2);
    expect(logged.length).toBeGreaterThanOrEqual(2);
    expect(logged[0].err).toMatchObject({ name: 'RangeError', message: 'Maximum call stack size exceeded' });
    expect((logged[0].err as { stack: string }).stack).toMatch(/runaway/);
  });

  it('logs a missing or failing backend as a warning with its cause, without a stack: a state, not a fault, which a caller must not grow the log with', async () => {
    await request(svc.app).post('/tools/backend').send({ missing: true }).expect(503);
    await request(svc.app).post('/tools/backend').send({ missing: false }).expect(503);
    const [missing] = await logLines((l) => l.code === 'NOT_CONFIGURED' && l.message !== 'tool call');
    expect(missing).toMatchObject({ level: 'warn', message: 'Mail is not configured: set SMTP_URL.' });
    expect(missing).not.toHaveProperty('err');
    const [down] = await logLines((l) => l.code === 'UPSTREAM_UNAVAILABLE' && l.message !== 'tool call');
    expect(down).toMatchObject({ level: 'warn', cause: 'connect ECONNREFUSED 127.0.0.1:5' });
    expect(JSON.stringify(down)).not.toMatch(/\bat \S+ \(/); // no stack frames
  });

  it('answers a library error carrying a 4xx status with INTERNAL, not VALIDATION_ERROR', async () => {
    const res = await request(svc.app).post('/tools/upstream_404').send({}).expect(500);
    expect(res.body.code).toBe('INTERNAL');
    const logged = await logLines((l) => l.level === 'error' && (l.err as { message?: string })?.message?.includes('api.example') === true);
    expect(logged).toHaveLength(1);
  });

  it('refuses input nested deeper than MAX_INPUT_DEPTH at the edge (400), before any handler recursion', async () => {
    for (const depth of [MAX_INPUT_DEPTH + 1, 10_000, 100_000]) {
      for (const [route, body] of [
        ['/tools/store', `{"value":${nested(depth)}}`],
        ['/tools/call', `{"name":"store","arguments":{"value":${nested(depth)}}}`],
      ]) {
        const res = await request(svc.app).post(route).set('content-type', 'application/json').send(body);
        expect([route, depth, res.status, res.body.code]).toEqual([route, depth, 400, 'VALIDATION_ERROR']);
        expect(res.body.error).toMatch(/nested deeper than 256 levels; flatten it/);
      }
    }
    // as deep as allowed: the tool runs (its argument object is one level, the value the rest)
    const ok = await request(svc.app)
      .post('/tools/store')
      .set('content-type', 'application/json')
      .send(`{"value":${nested(MAX_INPUT_DEPTH - 1)}}`)
      .expect(200);
    expect(ok.body.result.bytes).toBe(2 * (MAX_INPUT_DEPTH - 1));
  });

  it('still answers bad request bodies with VALIDATION_ERROR and PAYLOAD_TOO_LARGE', async () => {
    const bad = await request(svc.app).post('/tools/store').set('content-type', 'application/json').send('{"value":').expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    const big = await request(svc.app)
      .post('/tools/store')
      .send({ value: 'x'.repeat(2 * 1024 * 1024) })
      .expect(413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
