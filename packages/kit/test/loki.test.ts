import type http from 'node:http';
import { closeLogger, createLogger, LokiTransport } from '@mcp-fleet/kit';
import { serve } from '../src/test-support';

type Push = { streams: { stream: Record<string, string>; values: [string, string][] }[] };

/** A local server that speaks Loki's push API: what a real Loki receives, kept for the assertions. */
async function fakeLoki(status = 204) {
  const pushes: Push[] = [];
  const paths: string[] = [];
  const running = await serve((req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      if (status < 300) pushes.push(JSON.parse(body));
      res.writeHead(status).end();
    });
  });
  return { pushes, paths, running, set: (s: number) => (status = s) };
}

describe('LokiTransport', () => {
  it('pushes the JSON lines to /loki/api/v1/push, one stream per level, labelled with the service', async () => {
    const loki = await fakeLoki();
    const logger = createLogger({ service: 'loki-test', level: 'info', lokiUrl: loki.running.url });
    for (const t of logger.transports) if (!(t instanceof LokiTransport)) t.silent = true;
    logger.info('first line', { n: 1, password: 'hunter2' });
    logger.warn('second line');
    const transport = logger.transports.find((t) => t instanceof LokiTransport) as LokiTransport;
    await transport.flush();
    expect(loki.paths).toEqual(['POST /loki/api/v1/push application/json']);
    const streams = loki.pushes[0].streams;
    expect(streams.map((s) => s.stream).sort((a, b) => a.level.localeCompare(b.level))).toEqual([
      { job: 'mcp-fleet', service: 'loki-test', level: 'info' },
      { job: 'mcp-fleet', service: 'loki-test', level: 'warn' },
    ]);
    const info = streams.find((s) => s.stream.level === 'info')!;
    const line = JSON.parse(info.values[0][1]);
    expect(line).toMatchObject({ message: 'first line', n: 1, service: 'loki-test', password: '[redacted]' });
    expect(info.values[0][0]).toMatch(/^\d{19}$/);
    transport.close();
    await loki.running.stop();
  });

  it('keeps lines while Loki fails and sends them once it answers again, within its bound', async () => {
    const loki = await fakeLoki(503);
    const transport = new LokiTransport({ url: loki.running.url, labels: { service: 's' }, maxQueued: 3, intervalMs: 60_000 });
    const logger = createLogger({ service: 's', level: 'info' });
    logger.clear().add(transport);
    for (let i = 0; i < 5; i++) logger.info(`line ${i}`);
    await transport.flush();
    expect(loki.pushes).toHaveLength(0);
    expect(transport.dropped).toBe(2);
    loki.set(204);
    await transport.flush();
    const lines = loki.pushes.flatMap((p) => p.streams.flatMap((s) => s.values.map((v) => JSON.parse(v[1]).message)));
    expect(lines).toEqual(['line 2', 'line 3', 'line 4']);
    expect(transport.pushed).toBe(3);
    transport.close();
    await loki.running.stop();
  });

  it('pushes the last lines when the logger is closed at shutdown, before the process may exit', async () => {
    const loki = await fakeLoki();
    const transport = new LokiTransport({ url: loki.running.url, labels: { service: 's' }, intervalMs: 60_000 });
    const logger = createLogger({ service: 's', level: 'info' });
    logger.clear().add(transport);
    logger.info('s stopping');
    logger.info('s stopped');
    await closeLogger(logger, 1000);
    await loki.running.stop();
    const lines = loki.pushes.flatMap((p) => p.streams.flatMap((s) => s.values.map((v) => JSON.parse(v[1]).message)));
    expect(lines).toEqual(['s stopping', 's stopped']);
  });

  it('never throws when Loki is unreachable', async () => {
    const transport = new LokiTransport({ url: 'http://127.0.0.1:9', labels: { service: 's' }, intervalMs: 60_000 });
    const logger = createLogger({ service: 's', level: 'info' });
    logger.clear().add(transport);
    logger.info('nobody listens');
    await expect(transport.flush()).resolves.toBeUndefined();
    expect(transport.pushed).toBe(0);
    transport.close();
  });
});

/**
 * Against a real Grafana Loki: none can be installed here (Debian's `loki` package is an unrelated
 * program and Grafana publishes no npm or Debian build), so this runs when TEST_LOKI_URL is given,
 * and REQUIRE_LOKI=1 makes its absence fail.
 */
const lokiUrl = process.env.TEST_LOKI_URL;
(lokiUrl ? describe : process.env.REQUIRE_LOKI === '1' ? describe : describe.skip)('LokiTransport against a real Loki', () => {
  it('finds the pushed line with LogQL', async () => {
    if (!lokiUrl) throw new Error('TEST_LOKI_URL is not set (REQUIRE_LOKI=1)');
    const marker = `marker-${Date.now()}`;
    const logger = createLogger({ service: 'loki-real-test', level: 'info', lokiUrl });
    logger.info('real loki line', { marker });
    await (logger.transports.find((t) => t instanceof LokiTransport) as LokiTransport).flush();
    const q = encodeURIComponent(`{service="loki-real-test"} |= "${marker}"`);
    let found = 0;
    for (let i = 0; i < 20 && !found; i++) {
      const res = (await (await fetch(`${lokiUrl}/loki/api/v1/query_range?query=${q}&limit=10`)).json()) as {
        data: { result: { values: unknown[] }[] };
      };
      found = res.data.result.reduce((n, s) => n + s.values.length, 0);
      if (!found) await new Promise((r) => setTimeout(r, 500));
    }
    expect(found).toBe(1);
  });
});
