import net from 'node:net';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Redis } from 'ioredis';
import { backendUrl, describeWithBackend, serve } from '@mcp-fleet/testing';
import { coordinator, startFakeGateway, type FakeGateway } from './fake-gateway';

let gateway: FakeGateway;
beforeAll(async () => {
  gateway = await startFakeGateway();
});
afterAll(() => gateway.close());

const tool = (app: ReturnType<typeof coordinator>, headers: Record<string, string> = {}) =>
  request(app.app).post('/mcp').set(headers).send({ tool: 'system_info', arguments: {} });

describe('coordinator rate limit, counted in this process', () => {
  it('allows 100 requests a minute per address by default, then 429 RATE_LIMITED with Retry-After', async () => {
    const app = coordinator(gateway.url);
    try {
      for (let i = 0; i < 100; i++) {
        const res = await tool(app);
        expect([i, res.status]).toEqual([i, 200]);
      }
      const over = await tool(app).expect(429);
      expect(over.body).toMatchObject({ success: false, code: 'RATE_LIMITED', service: 'coordinator', timestamp: expect.any(String) });
      expect(over.body.error).toMatch(/More than 100 requests in 60 s .* wait \d+ s/);
      expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(over.headers['ratelimit-limit']).toBe('100');
      expect(over.headers['ratelimit-remaining']).toBe('0');
      const metrics = await request(app.app).get('/metrics').expect(200);
      expect(metrics.text).toMatch(/mcp_fleet_coordinator_rate_limited_total\{[^}]*\} 1/);
    } finally {
      await app.close();
    }
  });

  it('takes its limit and window from the environment, counts every route but the probes, and starts again after the window', async () => {
    const app = coordinator(gateway.url, { COORDINATOR_RATE_LIMIT: '3', COORDINATOR_RATE_WINDOW_MS: '1000' });
    try {
      await tool(app).expect(200);
      expect((await request(app.app).get('/tools/list').expect(200)).headers['ratelimit-remaining']).toBe('1');
      await request(app.app).get('/status').expect(200);
      // monitoring probes are never counted nor refused
      for (let i = 0; i < 5; i++) {
        await request(app.app).get('/health').expect(200);
        await request(app.app).get('/metrics').expect(200);
      }
      await request(app.app).get('/tools/list').expect(429);
      await tool(app).expect(429);
      await new Promise((r) => setTimeout(r, 1100));
      await tool(app).expect(200);
    } finally {
      await app.close();
    }
  });

  it('is off with COORDINATOR_RATE_LIMIT=0', async () => {
    const app = coordinator(gateway.url, { COORDINATOR_RATE_LIMIT: '0' });
    try {
      for (let i = 0; i < 5; i++) {
        const res = await tool(app).expect(200);
        expect(res.headers['ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await app.close();
    }
  });

  it('counts per client address: behind TRUST_PROXY each forwarded address has its own count', async () => {
    const app = coordinator(gateway.url, { COORDINATOR_RATE_LIMIT: '2', TRUST_PROXY: 'loopback' });
    try {
      for (const ip of ['203.0.113.1', '203.0.113.1']) await tool(app, { 'X-Forwarded-For': ip }).expect(200);
      await tool(app, { 'X-Forwarded-For': '203.0.113.1' }).expect(429);
      await tool(app, { 'X-Forwarded-For': '203.0.113.2' }).expect(200);
    } finally {
      await app.close();
    }
  });
});

describeWithBackend('redis', 'coordinator rate limit shared through Redis', () => {
  const prefix = `mcp-fleet-test:coordinator:${randomUUID()}:`;
  const redis = new Redis(backendUrl('redis'), { lazyConnect: true });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  const shared = (env: Record<string, string> = {}) =>
    coordinator(gateway.url, { REDIS_URL: backendUrl('redis'), COORDINATOR_RATE_PREFIX: prefix, ...env });

  it('counts one limit across two instances: the 101st request, whichever instance gets it, is 429 with Retry-After', async () => {
    const a = shared();
    const b = shared();
    try {
      // both healthy with Redis connected before counting starts
      for (const app of [a, b]) expect((await request(app.app).get('/health').expect(200)).body.checks.redis.status).toBe('ok');
      for (let i = 0; i < 100; i++) {
        const res = await tool(i % 2 ? b : a);
        expect([i, res.status]).toEqual([i, 200]);
      }
      for (const app of [a, b]) {
        const over = await tool(app).expect(429);
        expect(over.body.code).toBe('RATE_LIMITED');
        expect(Number(over.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(Number(over.headers['retry-after'])).toBeLessThanOrEqual(60);
      }
      const keys = await redis.keys(`${prefix}*`);
      expect(keys).toHaveLength(1);
      expect(Number(await redis.get(keys[0]))).toBe(102);
      // the in-process counter would have let a third instance start from zero; the shared one does not
      const c = shared();
      try {
        await request(c.app).get('/health').expect(200);
        await tool(c).expect(429);
      } finally {
        await c.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('lets requests through uncounted while Redis cannot be reached, degraded in /health and counted in /metrics', async () => {
    const closed = await serve((_req, res) => res.end());
    const port = new URL(closed.url).port;
    await closed.stop();
    const app = coordinator(gateway.url, { REDIS_URL: `redis://127.0.0.1:${port}`, COORDINATOR_RATE_LIMIT: '1' });
    try {
      for (let i = 0; i < 3; i++) await tool(app).expect(200);
      expect((await request(app.app).get('/health').expect(200)).body).toMatchObject({
        status: 'degraded',
        checks: { redis: { status: 'error' } },
      });
      const metrics = await request(app.app).get('/metrics').expect(200);
      expect(metrics.text).toMatch(/mcp_fleet_coordinator_rate_limit_store_errors_total\{[^}]*\} 3/);
    } finally {
      await app.close();
    }
  });

  it('does not wait on a Redis that accepts the connection and never answers: the request goes through after the time limit', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((s) => sockets.add(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    const app = coordinator(gateway.url, { REDIS_URL: `redis://127.0.0.1:${port}`, COORDINATOR_RATE_REDIS_TIMEOUT_MS: '200' });
    try {
      const started = Date.now();
      await tool(app).expect(200);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await app.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});
