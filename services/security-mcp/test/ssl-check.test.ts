import https from 'node:https';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { testConfig, testLogger, localhostCert } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const cert = localhostCert(20);
const server = https.createServer({ key: cert.key, cert: cert.cert }, (_req, res) => res.end('ok'));
let port = 0;
const strict = createApp({ config: configSchema.parse({ ...testConfig, DATA_DIR: '/tmp' }), logger: testLogger(), defaultMetrics: false });
const open = createApp({
  config: configSchema.parse({ ...testConfig, DATA_DIR: '/tmp', OUTBOUND_ALLOWLIST: '127.0.0.1,localhost,::1' }),
  logger: testLogger(),
  defaultMetrics: false,
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const check = (app: typeof open, args: Record<string, unknown>) => request(app.app).post('/tools/ssl_check').send(args);

describe('ssl_check', () => {
  it('reports the self-signed certificate: subject, SANs, issuer, expiry, days left, chain and hostname match', async () => {
    const res = await check(open, { host: 'localhost', port }).expect(200);
    const r = res.body.result;
    expect(r).toMatchObject({
      host: 'localhost',
      port,
      servername: 'localhost',
      address: '127.0.0.1',
      authorized: false,
      authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT',
      hostnameMatches: true,
      selfSigned: true,
      expired: false,
      subject: { CN: 'localhost' },
      issuer: { CN: 'localhost' },
      subjectAltNames: ['DNS:localhost', 'IP:127.0.0.1'],
    });
    expect(r.daysLeft).toBeGreaterThanOrEqual(18);
    expect(r.daysLeft).toBeLessThanOrEqual(20);
    expect(r.expiresSoon).toBe(false);
    expect(r.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(r.chain).toHaveLength(1);
    expect(r.chain[0].fingerprint256).toBe(r.fingerprint256);
    expect(new Date(r.validTo).getTime()).toBeGreaterThan(Date.now());
    expect(r.protocol).toMatch(/^TLS/);
  });

  it('reports a hostname mismatch (SNI name not in the certificate) and warns when expiry is near', async () => {
    const res = await check(open, { host: '127.0.0.1', port, servername: 'example.com', warnDays: 30 }).expect(200);
    expect(res.body.result).toMatchObject({ hostnameMatches: false, servername: 'example.com', expiresSoon: true });
    expect(res.body.result.hostnameError).toContain('example.com');
    const byIp = await check(open, { host: '127.0.0.1', port }).expect(200);
    expect(byIp.body.result).toMatchObject({ hostnameMatches: true, servername: null });
  });

  it('refuses loopback targets without an allowlist, before connecting', async () => {
    for (const host of ['localhost', '127.0.0.1', '::1', '169.254.169.254', 'metadata.google.internal']) {
      const res = await check(strict, { host, port });
      expect({ host, status: res.status, code: res.body.code }).toEqual({ host, status: 403, code: 'FORBIDDEN' });
    }
  });

  it('answers bad input and unreachable ports with documented codes', async () => {
    for (const args of [
      {},
      { host: 'https://example.com' },
      { host: 'a b' },
      { host: 'localhost', port: 0 },
      { host: 'localhost', servername: '1.2.3.4' },
      { host: 'x', extra: 1 },
    ]) {
      const res = await check(open, args);
      expect({ args, status: res.status, code: res.body.code }).toEqual({ args, status: 400, code: 'VALIDATION_ERROR' });
    }
    const plain = await new Promise<number>((resolve) => {
      const s = https.createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const res = await check(open, { host: '127.0.0.1', port: plain, timeoutMs: 2000 });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
  });
});
