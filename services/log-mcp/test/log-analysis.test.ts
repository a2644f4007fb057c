import path from 'node:path';
import request from 'supertest';
import { fleetLogger, jsonLine, makeApp, waitForLines } from './helpers';

const h = makeApp();
afterAll(() => h.close());

const analyse = (args: unknown) =>
  request(h.app)
    .post('/tools/log_analysis')
    .send(args as object);
const T0 = Date.parse('2025-03-01T10:00:00.000Z');
const at = (minutes: number, seconds = 0) => new Date(T0 + minutes * 60_000 + seconds * 1000);

beforeAll(() => {
  // 60 minutes of traffic: 10 lines a minute with an occasional error, and a burst of errors at minute 40-41
  const lines: string[] = [];
  for (let m = 0; m < 60; m++) {
    for (let s = 0; s < 10; s++)
      lines.push(jsonLine(at(m, s * 6), s === 0 && m % 10 === 3 ? 'error' : 'info', `GET /api/items/${m * 10 + s} 200`));
    if (m === 40 || m === 41) {
      for (let e = 0; e < 30; e++) {
        lines.push(
          jsonLine(
            at(m, e),
            'error',
            `Connection to 10.0.0.${e % 7}:5432 refused after ${e} retries (request ${e.toString(16).padStart(8, 'a')}0f3e)`,
          ),
        );
      }
    }
  }
  lines.push(jsonLine(at(50), 'warn', 'cache miss ratio 0.7'));
  lines.push('not json and no timestamp');
  h.write('api-mcp.log', lines);
  h.write('worker.log', [
    '2025-03-01T10:40:05Z ERROR job "nightly-report" failed: ENOENT /var/data/reports/2025-03-01.csv',
    '2025-03-01T10:40:06Z ERROR job "weekly-digest" failed: ENOENT /var/data/reports/2025-02-28.csv',
    '2025-03-01T10:40:07Z FATAL out of memory in worker 7',
  ]);
});

describe('log_analysis', () => {
  it('counts levels, builds the time series and finds the error burst', async () => {
    const res = await analyse({ files: ['api-mcp.log'], bucket: '1m' }).expect(200);
    const r = res.body.result;
    expect(r.levels).toEqual({ fatal: 0, error: 6 + 60, warn: 1, info: 594, debug: 0, trace: 0, unknown: 1 });
    expect(r.untimedLines).toBe(1);
    expect(r.range).toEqual({ first: '2025-03-01T10:00:00.000Z', last: '2025-03-01T10:59:54.000Z' });
    expect(r.bucket).toBe('1m');
    expect(r.series).toHaveLength(60);
    expect(r.series[40]).toEqual({ start: '2025-03-01T10:40:00.000Z', total: 40, errors: 30, warnings: 0 });
    expect(r.series[3]).toMatchObject({ errors: 1 });
    expect(r.anomalies).toHaveLength(1);
    expect(r.anomalies[0]).toMatchObject({
      start: '2025-03-01T10:40:00.000Z',
      end: '2025-03-01T10:42:00.000Z',
      buckets: 2,
      errors: 60,
      total: 80,
      errorRate: 0.75,
      baselineErrorsPerBucket: 0.103,
    });
    expect(r.anomalyRule).toMatch(/median/);
    expect(r.anomalies[0].threshold).toBe(3);
  });

  it('groups error messages by shape', async () => {
    const res = await analyse({ top: 3 }).expect(200);
    const [first, second, third] = res.body.result.topErrors;
    expect(first).toMatchObject({
      shape: 'Connection to <ip> refused after <n> retries (request <hex>)',
      count: 60,
      firstSeen: '2025-03-01T10:40:00.000Z',
      lastSeen: '2025-03-01T10:41:29.000Z',
      services: ['api-mcp'],
      levels: ['error'],
    });
    expect(second).toMatchObject({ shape: 'GET <path> <n>', count: 6 });
    expect(third).toMatchObject({ shape: 'job <str> failed: ENOENT <path>', count: 2, services: ['worker'] });
    expect(res.body.result.topErrors).toHaveLength(3);
    expect(res.body.result.distinctErrorShapes).toBe(4);
  });

  it('restricts to a time range and a service, choosing a bucket automatically', async () => {
    const res = await analyse({ service: 'worker', from: '2025-03-01T10:30:00Z', to: '2025-03-01T11:00:00Z' }).expect(200);
    const r = res.body.result;
    expect(r.matchedLines).toBe(3);
    expect(r.levels).toMatchObject({ error: 2, fatal: 1 });
    expect(r.bucket).toBe('15s');
    expect(r.series[0].start).toBe('2025-03-01T10:30:00.000Z');
    expect(r.series).toHaveLength(120);
    expect(r.series.reduce((a: number, p: { errors: number }) => a + p.errors, 0)).toBe(3);
    expect(r.anomalies).toEqual([]); // 3 errors in one bucket are below minErrors (5)
  });

  it('widens a bucket that would give more than 1000 points', async () => {
    const res = await analyse({ files: ['api-mcp.log'], bucket: '1s' }).expect(200);
    expect(res.body.result).toMatchObject({ bucket: '5s', bucketAdjusted: true });
    expect(res.body.result.series.length).toBeLessThanOrEqual(1000);
  });

  it("analyses the fleet's own kit-logger output", async () => {
    const file = path.join(h.logDir, 'fleet', 'memory-mcp.log');
    const logger = fleetLogger('memory-mcp', file);
    for (let i = 0; i < 3; i++) logger.error(`store failed for key user:${i}`, { apiKey: 'k-leak' });
    logger.info('memory-mcp listening');
    await waitForLines(file, 4);
    logger.close();
    const res = await analyse({ service: 'memory-mcp' }).expect(200);
    expect(res.body.result.levels).toMatchObject({ error: 3, info: 1 });
    expect(res.body.result.topErrors[0]).toMatchObject({ shape: 'store failed for key user:<n>', count: 3, services: ['memory-mcp'] });
    expect(JSON.stringify(res.body)).not.toContain('k-leak');
  });

  it('reads the newest bytes first and says truncated when over the scan cap', async () => {
    const small = makeApp({ LOG_MAX_SCAN_BYTES: '4096' });
    try {
      small.write(
        'a.log',
        Array.from(
          { length: 200 },
          (_, i) => `2025-03-01T10:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z ERROR failure ${i}`,
        ),
      );
      const res = await request(small.app).post('/tools/log_analysis').send({}).expect(200);
      expect(res.body.result.truncated).toBe(true);
      expect(res.body.result.scannedBytes).toBeLessThanOrEqual(4096);
      expect(res.body.result.range.last).toBe('2025-03-01T10:03:19.000Z');
    } finally {
      await small.close();
    }
  });

  it('rejects malformed arguments', async () => {
    for (const args of [
      { bucket: '7m' },
      { top: 0 },
      { top: 101 },
      { sensitivity: 0 },
      { minErrors: 0 },
      { from: 'soon' },
      { query: 'x' },
      { files: ['../x.log'] },
    ]) {
      const res = await analyse(args);
      expect(res.status === 400 || res.status === 403).toBe(true);
      expect(res.body.success).toBe(false);
    }
  });
});
