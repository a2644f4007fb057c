/**
 * Rate limits (RATE_LIMIT_PER_MINUTE): the embedded counter's windows, the limiter on a real gateway
 * (429 envelope or JSON-RPC error, RateLimit headers, reads not counted, one count per caller), and a
 * Redis that cannot be reached, or stalls, letting requests through.
 */
import net from 'node:net';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { describeWithBackend, tempDir } from '@mcp-fleet/testing';
import { callerKey, MemoryRateStore, RedisRateStore } from '../src/http/rate-limit';
import { alphaTools, startDownstream, startGateway, type Downstream, type RunningGateway } from './helpers';

describe('MemoryRateStore', () => {
  it('counts per key within a window and starts again when the window turns', async () => {
    let now = 60_000 * 10 + 15_000;
    const store = new MemoryRateStore(() => now);
    expect(await store.hit('a', 60_000)).toEqual({ count: 1, resetMs: 45_000 });
    expect((await store.hit('a', 60_000)).count).toBe(2);
    expect((await store.hit('b', 60_000)).count).toBe(1);
    now += 45_000;
    expect(await store.hit('a', 60_000)).toEqual({ count: 1, resetMs: 60_000 });
  });
});

describe('callerKey', () => {
  it('counts against the token subject when authorization is on, else the client address', () => {
    const principal = { kind: 'oauth', subject: 'svc-1', scopes: new Set<string>() };
    expect(callerKey({ res: { locals: { principal } }, ip: '10.0.0.9', socket: {} } as never)).toBe('oauth:svc-1');
    expect(callerKey({ res: { locals: {} }, ip: '10.0.0.9', socket: {} } as never)).toBe('ip:10.0.0.9');
  });

  it('counts a very long subject under its hash, one key per subject, never an unbounded Redis key', () => {
    const key = (subject: string) =>
      callerKey({ res: { locals: { principal: { kind: 'oauth', subject, scopes: new Set() } } }, socket: {} } as never);
    const long = 'x'.repeat(10_000);
    expect(key(long)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(key(long)).toBe(key(long));
    expect(key(long)).not.toBe(key(long + 'y'));
    expect(key('y'.repeat(100))).toBe(`oauth:${'y'.repeat(100)}`);
  });
});

describe('rate limits on a gateway', () => {
  const tmp = tempDir();
  let alpha: Downstream;
  let g: RunningGateway;

  beforeAll(async () => {
    alpha = await startDownstream('alpha-mcp', alphaTools);
    g = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmp.dir, { RATE_LIMIT_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await g.stop();
    await alpha.stop();
    tmp.cleanup();
  });

  it('lets a caller send its limit, then answers 429 RATE_LIMITED with Retry-After; reads are not counted', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await request(g.url)
        .post('/mcp')
        .send({ tool: 'echo', arguments: { text: 'x' } })
        .expect(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(res.headers['ratelimit-remaining']).toBe(String(2 - i));
      await request(g.url).get('/tools/list').expect(200);
    }
    const native = await request(g.url)
      .post('/mcp')
      .send({ tool: 'echo', arguments: { text: 'x' } });
    expect(native.status).toBe(429);
    expect(native.body).toMatchObject({ success: false, code: 'RATE_LIMITED', error: expect.stringMatching(/3 requests per minute/) });
    const retry = Number(native.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    const rpc = await request(g.url)
      .post('/mcp')
      .set({ 'mcp-protocol-version': '2025-11-25', accept: 'application/json, text/event-stream' })
      .send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } });
    expect(rpc.status).toBe(429);
    expect(rpc.body).toMatchObject({ jsonrpc: '2.0', id: 5, error: { code: -32029, data: { retryAfter: expect.any(Number) } } });
    // notifications are not counted: a caller at its limit can still cancel what it started
    const cancel = await request(g.url)
      .post('/mcp')
      .set({ 'mcp-protocol-version': '2025-11-25', accept: 'application/json, text/event-stream' })
      .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } });
    expect(cancel.status).toBe(202);
    expect(cancel.headers['ratelimit-limit']).toBeUndefined();
    // other POST routes and a trailing slash are counted once, like before
    expect(
      (
        await request(g.url)
          .post('/mcp/')
          .send({ tool: 'echo', arguments: { text: 'x' } })
      ).status,
    ).toBe(429);
    expect(alpha.calls.get('echo')).toBe(3);
    const stats = await request(g.url).get('/stats').expect(200);
    expect(JSON.stringify(stats.body)).toMatch(/RATE_LIMITED/);
  });
});

describe('a Redis that cannot be reached', () => {
  it('lets requests through (fail open) rather than refusing them', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const store = new RedisRateStore(`redis://127.0.0.1:${port}`, 'test');
    await expect(store.hit('a', 60_000)).rejects.toThrow();
    await store.close();

    const tmp = tempDir();
    const alpha = await startDownstream('alpha-mcp', alphaTools);
    const g = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmp.dir, {
      RATE_LIMIT_PER_MINUTE: '1',
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    try {
      for (let i = 0; i < 3; i++)
        await request(g.url)
          .post('/mcp')
          .send({ tool: 'echo', arguments: { text: 'x' } })
          .expect(200);
    } finally {
      await g.stop();
      await alpha.stop();
      tmp.cleanup();
    }
  });
});

/** A TCP relay to the real Redis that can go silent (a stalled Redis, or a network partition). */
async function silenceableRelay(target: { host: string; port: number }) {
  let silent = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    client.on('data', (d) => void (silent || upstream.write(d)));
    upstream.on('data', (d) => void (silent || client.write(d)));
    const end = () => (client.destroy(), upstream.destroy());
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    silence: () => void (silent = true),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describeWithBackend('redis', 'a Redis that stops answering', () => {
  it('lets a request through uncounted after RATE_LIMIT_REDIS_TIMEOUT_MS, and counts it in /metrics', async () => {
    const redisUrl = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
    const relay = await silenceableRelay({ host: redisUrl.hostname, port: Number(redisUrl.port || 6379) });
    const tmp = tempDir();
    const alpha = await startDownstream('alpha-mcp', alphaTools);
    const g = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmp.dir, {
      RATE_LIMIT_PER_MINUTE: '1',
      REDIS_URL: relay.url,
      RATE_LIMIT_PREFIX: `test-${randomUUID()}`,
      RATE_LIMIT_REDIS_TIMEOUT_MS: '200',
    });
    const echo = () =>
      request(g.url)
        .post('/mcp')
        .send({ tool: 'echo', arguments: { text: 'x' } });
    try {
      // counted in Redis through the relay (the first hit may come before the connection is ready)
      let first = await echo();
      for (let i = 0; i < 40 && first.headers['ratelimit-limit'] === undefined; i++) {
        await new Promise((r) => setTimeout(r, 50));
        first = await echo();
      }
      expect(first.headers['ratelimit-remaining']).toBe('0');
      expect((await echo()).status).toBe(429);
      const storeErrors = async () => {
        const text = (await request(g.url).get('/metrics').expect(200)).text;
        return Number(/^mcp_fleet_gateway_rate_limit_store_errors_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0);
      };
      const errorsBefore = await storeErrors();
      relay.silence();
      const started = Date.now();
      const through = await echo();
      expect(through.status).toBe(200);
      expect(through.headers['ratelimit-limit']).toBeUndefined();
      expect(Date.now() - started).toBeLessThan(1500);
      expect(await storeErrors()).toBe(errorsBefore + 1);
    } finally {
      await g.stop();
      await alpha.stop();
      await relay.close();
      tmp.cleanup();
    }
  });
});
