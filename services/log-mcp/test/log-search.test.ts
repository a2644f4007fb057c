import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { fleetLogger, jsonLine, makeApp, waitForLines } from './helpers';

const h = makeApp();
afterAll(() => h.close());

const search = (args: unknown) =>
  request(h.app)
    .post('/tools/log_search')
    .send(args as object);
const T0 = Date.parse('2025-03-01T10:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

beforeAll(async () => {
  // the fleet's own log, written by the kit logger exactly as a running service writes it
  const file = path.join(h.logDir, 'system-mcp.log');
  const logger = fleetLogger('system-mcp', file);
  logger.info('system-mcp listening', { url: 'http://127.0.0.1:7007', port: 7007 });
  logger.warn('disk almost full', { mount: '/', percent: 93 });
  logger.error('tool call failed', { tool: 'disk_usage', token: 'tok-should-never-leak' });
  logger.info('connecting with password=hunter2 to postgres://app:pgpass@db/x');
  await waitForLines(file, 4);
  logger.close();

  h.write('plain/app.log', [
    '2025-03-01T10:00:00Z INFO server started on port 8080',
    '2025-03-01 10:05:00,123 [WARN] slow request /api/users took 1200ms',
    '[2025-03-01T10:10:00.000Z] ERROR: database timeout after 30s',
    'ERROR 2025-03-01T10:15:00Z second form: level first',
    'time=2025-03-01T10:20:00Z level=error msg="logfmt failure for user 42"',
    'a line with no timestamp and no level',
    '2025-03-01T10:30:00+02:00 DEBUG zone offset line',
  ]);
  h.write(
    'api-mcp.log',
    Array.from({ length: 25 }, (_, i) => jsonLine(at(i), i % 5 === 0 ? 'error' : 'info', `request ${i} handled`)),
  );
});

describe('log_search over the fleet logs', () => {
  it('finds lines written by the kit logger, parsed, with secrets redacted', async () => {
    const res = await search({ files: ['system-mcp.log'] }).expect(200);
    const { matches } = res.body.result;
    expect(matches).toHaveLength(4);
    expect(matches[0]).toMatchObject({
      file: path.join(h.logDir, 'system-mcp.log'),
      line: 1,
      level: 'info',
      service: 'system-mcp',
      message: 'system-mcp listening',
      json: true,
    });
    expect(new Date(matches[0].timestamp).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(matches[2]).toMatchObject({ level: 'error', message: 'tool call failed' });
    expect(JSON.parse(matches[2].raw)).toMatchObject({ tool: 'disk_usage', token: '[redacted]' });
    expect(matches[3].message).toBe('connecting with password=[redacted] to postgres://app:[redacted]@db/x');
    expect(JSON.stringify(res.body)).not.toMatch(/hunter2|pgpass|tok-should-never-leak/);
  });

  it('filters by service, level and minLevel across all files', async () => {
    const errors = await search({ service: 'system-mcp', minLevel: 'warn' }).expect(200);
    expect(errors.body.result.matches.map((m: { message: string }) => m.message)).toEqual(['disk almost full', 'tool call failed']);
    const levelList = await search({ level: ['error', 'fatal'], files: ['plain/app.log'] }).expect(200);
    expect(levelList.body.result.matches.map((m: { line: number }) => m.line)).toEqual([3, 4, 5]);
    const one = await search({ level: 'debug', files: ['plain/*.log'] }).expect(200);
    expect(one.body.result.matches).toHaveLength(1);
    expect(one.body.result.matches[0]).toMatchObject({ timestamp: '2025-03-01T08:30:00.000Z', message: 'zone offset line' });
  });

  it('parses plain and logfmt lines and filters by time range', async () => {
    const res = await search({ files: ['plain/app.log'], from: '2025-03-01T10:05:00Z', to: '2025-03-01T10:20:00Z' }).expect(200);
    expect(
      res.body.result.matches.map((m: { timestamp: string; level: string; message: string }) => [m.timestamp, m.level, m.message]),
    ).toEqual([
      ['2025-03-01T10:05:00.123Z', 'warn', 'slow request /api/users took 1200ms'],
      ['2025-03-01T10:10:00.000Z', 'error', 'database timeout after 30s'],
      ['2025-03-01T10:15:00.000Z', 'error', 'second form: level first'],
    ]);
    const logfmt = await search({ files: ['plain/app.log'], query: 'LOGFMT' }).expect(200);
    expect(logfmt.body.result.matches[0]).toMatchObject({
      level: 'error',
      message: 'logfmt failure for user 42',
      timestamp: '2025-03-01T10:20:00.000Z',
    });
    const bare = await search({ files: ['plain/app.log'], query: 'no timestamp' }).expect(200);
    expect(bare.body.result.matches[0]).toMatchObject({ timestamp: null, level: null, line: 6 });
    const caseSensitive = await search({ files: ['plain/app.log'], query: 'LOGFMT', caseSensitive: true }).expect(200);
    expect(caseSensitive.body.result.matches).toHaveLength(0);
  });

  it('pages with a cursor that resumes exactly where the last page ended', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const res = await search({ files: ['api-mcp.log'], limit: 10, ...(cursor ? { cursor } : {}) }).expect(200);
      seen.push(...res.body.result.matches.map((m: { line: number }) => m.line));
      cursor = res.body.result.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));

    const first = await search({ files: ['api-mcp.log'], level: 'error', limit: 2 }).expect(200);
    expect(first.body.result.matches.map((m: { message: string }) => m.message)).toEqual(['request 0 handled', 'request 5 handled']);
    const second = await search({ files: ['api-mcp.log'], level: 'error', limit: 2, cursor: first.body.result.nextCursor }).expect(200);
    expect(second.body.result.matches.map((m: { message: string }) => m.message)).toEqual(['request 10 handled', 'request 15 handled']);

    const changed = await search({ files: ['api-mcp.log'], level: 'warn', cursor: first.body.result.nextCursor }).expect(400);
    expect(changed.body.error).toMatch(/different filters/);
    await search({ cursor: 'not-a-cursor' }).expect(400);
  });

  it('matches regular expressions in a worker', async () => {
    const res = await search({ files: ['api-mcp.log'], regex: 'request (1\\d) HANDLED' }).expect(200);
    expect(res.body.result.matches).toHaveLength(10);
    const strict = await search({ files: ['api-mcp.log'], regex: 'request (1\\d) HANDLED', caseSensitive: true }).expect(200);
    expect(strict.body.result.matches).toHaveLength(0);
    const invalid = await search({ regex: '([a-z' }).expect(400);
    expect(invalid.body.error).toMatch(/does not compile/);
    await search({ regex: 'a'.repeat(501) }).expect(400);
  });

  it('stops a catastrophic regex promptly and stays responsive meanwhile', async () => {
    h.write(
      'redos.log',
      Array.from({ length: 20 }, () => `${'a'.repeat(200)}!`),
    );
    let slowDone = false;
    const slow = search({ files: ['redos.log'], regex: '(a+)+$' }).then((res) => {
      slowDone = true;
      return res;
    });
    const health = await request(h.app).get('/health').expect(200);
    expect(health.body.service).toBe('log-mcp');
    expect(slowDone).toBe(false);
    const res = await slow;
    expect(res.status).toBe(504);
    expect(res.body.code).toBe('TIMEOUT');
    expect(res.body.error).toMatch(/LOG_REGEX_TIMEOUT_MS/);
    await search({ files: ['api-mcp.log'], regex: 'request 3 ' }).expect(200);
  });

  it('refuses more than four concurrent regex searches with RATE_LIMITED', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => search({ files: ['redos.log'], regex: '(a+)+$' })));
    expect(results.map((r) => r.status).sort()).toEqual([429, 504, 504, 504, 504]);
    const limited = results.find((r) => r.status === 429)!;
    expect(limited.body.code).toBe('RATE_LIMITED');
    expect(limited.headers['retry-after']).toBe('1');
    await search({ files: ['api-mcp.log'], regex: 'request 3 ' }).expect(200);
  });

  it('cuts scans at LOG_MAX_SCAN_BYTES with truncated and a cursor to continue', async () => {
    const small = makeApp({ LOG_MAX_SCAN_BYTES: '2048' });
    try {
      small.write(
        'big.log',
        Array.from({ length: 100 }, (_, i) => `2025-03-01T10:00:00Z INFO line ${i} ${'x'.repeat(40)}`),
      );
      const call = (cursor?: string) =>
        request(small.app)
          .post('/tools/log_search')
          .send({ query: 'line', limit: 500, ...(cursor ? { cursor } : {}) });
      const first = await call().expect(200);
      expect(first.body.result).toMatchObject({ truncated: true, truncatedReason: 'scan_limit' });
      expect(first.body.result.scannedBytes).toBeLessThanOrEqual(2048);
      let total = first.body.result.matches.length;
      let cursor = first.body.result.nextCursor;
      while (cursor) {
        const next = await call(cursor).expect(200);
        total += next.body.result.matches.length;
        cursor = next.body.result.nextCursor;
      }
      expect(total).toBe(100);
    } finally {
      await small.close();
    }
  });

  it('refuses files outside the log roots, including through symlinks and globs', async () => {
    const outside = path.join(h.tmp, 'secret.log');
    fs.writeFileSync(outside, 'password=outside\n');
    fs.symlinkSync(outside, path.join(h.logDir, 'escape.log'));
    for (const files of [['../secret.log'], [outside], ['/etc/passwd'], ['escape.log'], ['../*.log'], ['/tmp/**/*.log']]) {
      const res = await search({ files }).expect(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
    const all = await search({ query: 'outside' }).expect(200);
    expect(all.body.result.matches).toHaveLength(0);
    await search({ files: ['missing.log'] }).expect(404);
    await search({ files: ['plain'] }).expect(400);
  });

  it('rejects malformed arguments with VALIDATION_ERROR', async () => {
    for (const args of [
      { level: 'loud' },
      { minLevel: 'error', extra: 1 },
      { from: 'yesterday' },
      { from: '2025-03-02T00:00:00Z', to: '2025-03-01T00:00:00Z' },
      { query: 'a', regex: 'a' },
      { limit: 0 },
      { limit: 501 },
      { files: [] },
      { service: 'bad service!' },
      { query: '' },
    ]) {
      const res = await search(args);
      expect({ args, status: res.status, code: res.body.code }).toEqual({ args, status: 400, code: 'VALIDATION_ERROR' });
    }
  });
});
