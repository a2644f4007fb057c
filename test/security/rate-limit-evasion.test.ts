/**
 * Class: dodging the coordinator's per-address rate limit (platform-interface.md, "Limits": 100
 * requests per minute per IP). A caller over its limit tries to look like another client (forged
 * X-Forwarded-For, Forwarded, X-Real-IP, several addresses in one header), or to reach a counted
 * route under a spelling the limiter might not count (case, trailing slash, query, a probe path that
 * routes elsewhere, another method). The limit is counted before any route, on the socket's address
 * unless TRUST_PROXY names the proxy, and only GET/HEAD of exactly /health and /metrics go free.
 */
import request from 'supertest';
import { coordinator, startFakeGateway, type FakeGateway } from '../../services/coordinator/test/fake-gateway';

let gateway: FakeGateway;
beforeAll(async () => {
  gateway = await startFakeGateway();
});
afterAll(() => gateway.close());

const systemInfo = { tool: 'system_info', arguments: {} };

describe('the coordinator rate limit cannot be dodged', () => {
  it('ignores forged client-address headers without TRUST_PROXY: every spelling counts against the one socket address', async () => {
    const app = coordinator(gateway.url, { COORDINATOR_RATE_LIMIT: '3' });
    try {
      const forged = [
        { 'X-Forwarded-For': '198.51.100.1' },
        { 'x-forwarded-for': '198.51.100.2, 198.51.100.3' },
        { Forwarded: 'for=198.51.100.4' },
        { 'X-Real-IP': '198.51.100.5' },
        { 'X-Forwarded-For': '::ffff:198.51.100.6', 'X-Client-IP': '198.51.100.7' },
      ];
      const statuses = [];
      for (const headers of forged) statuses.push((await request(app.app).post('/mcp').set(headers).send(systemInfo)).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await app.close();
    }
  });

  it('behind TRUST_PROXY=loopback, takes the address the proxy appended, not one the client put first', async () => {
    const app = coordinator(gateway.url, { COORDINATOR_RATE_LIMIT: '2', TRUST_PROXY: 'loopback' });
    try {
      // the proxy (loopback) appends the real client (203.0.113.9); the client's own value is further left
      const viaProxy = (claimed: string) =>
        request(app.app).post('/mcp').set('X-Forwarded-For', `${claimed}, 203.0.113.9`).send(systemInfo);
      expect([(await viaProxy('10.0.0.1')).status, (await viaProxy('10.0.0.2')).status, (await viaProxy('10.0.0.3')).status]).toEqual([
        200, 200, 429,
      ]);
      // a real other client still has its own count
      expect((await request(app.app).post('/mcp').set('X-Forwarded-For', '203.0.113.10').send(systemInfo)).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('counts every spelling of a counted route, and lets only GET/HEAD of exactly /health and /metrics go free', async () => {
    const app = coordinator(gateway.url, { COORDINATOR_RATE_LIMIT: '6' });
    try {
      const spellings = [
        request(app.app).post('/MCP').send(systemInfo),
        request(app.app).post('/mcp/').send(systemInfo),
        request(app.app).post('/mcp?tool=x').send(systemInfo),
        request(app.app).post('/Tools/Call').send({ name: 'system_info', arguments: {} }),
        request(app.app).post('/health').send({}),
        request(app.app).get('/health/../mcp'),
      ];
      const counted = [];
      for (const r of spellings) counted.push((await r).headers['ratelimit-remaining']);
      expect(counted).toEqual(['5', '4', '3', '2', '1', '0']);
      // the free probes answer what they are, never a tool
      for (let i = 0; i < 3; i++) {
        expect((await request(app.app).get('/health')).body.service).toBe('coordinator');
        expect((await request(app.app).head('/metrics')).status).toBe(200);
      }
      expect((await request(app.app).post('/mcp').send(systemInfo)).status).toBe(429);
      expect((await request(app.app).get('/HEALTH')).status).toBe(429);
    } finally {
      await app.close();
    }
  });

  it('still serves a caller under its limit, and tells one over it when to come back', async () => {
    const app = coordinator(gateway.url, { COORDINATOR_RATE_LIMIT: '1' });
    try {
      expect((await request(app.app).post('/mcp').send(systemInfo)).body.success).toBe(true);
      const over = await request(app.app).post('/mcp').send(systemInfo);
      expect(over.status).toBe(429);
      expect(over.body).toMatchObject({ success: false, code: 'RATE_LIMITED' });
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });
});
