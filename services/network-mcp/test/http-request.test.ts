import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import type { ServiceApp } from '@mcp-fleet/kit';
import { tempDir, testConfig, testLogger, localhostCert } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const hits: string[] = [];
const target = http.createServer((req, res) => {
  hits.push(req.url ?? '');
  const url = new URL(req.url ?? '/', 'http://x');
  switch (url.pathname) {
    case '/json':
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ hello: 'world' }));
      return;
    case '/echo': {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ method: req.method, contentType: req.headers['content-type'], body: Buffer.concat(chunks).toString() }));
      });
      return;
    }
    case '/binary':
      res.setHeader('content-type', 'application/octet-stream');
      res.end(Buffer.from([0, 1, 2, 255]));
      return;
    case '/to-metadata':
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/iam' });
      res.end();
      return;
    case '/to-private':
      res.writeHead(301, { location: 'http://10.0.0.1/admin' });
      res.end();
      return;
    case '/hop':
      res.writeHead(302, { location: `/json` });
      res.end();
      return;
    case '/big':
      res.setHeader('content-type', 'text/plain');
      res.end('x'.repeat(50_000));
      return;
    case '/slow':
      setTimeout(() => res.end('late'), 3000).unref();
      return;
    case '/status':
      res.statusCode = Number(url.searchParams.get('code') ?? 200);
      res.end();
      return;
    default:
      res.end('plain');
  }
});
const tmp = tempDir();
const cert = localhostCert();
const caFile = path.join(tmp.dir, 'ca.pem');
const secure = https.createServer({ key: cert.key, cert: cert.cert }, (_req, res) => res.end('secure hello'));
let base = '';
let securePort = 0;
let strict: ServiceApp;
let open: ServiceApp;

beforeAll(async () => {
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => secure.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  securePort = (secure.address() as AddressInfo).port;
  fs.writeFileSync(caFile, cert.cert);
  strict = await createApp({
    config: configSchema.parse({ ...testConfig, DATA_DIR: path.join(tmp.dir, 'a') }),
    logger: testLogger(),
    defaultMetrics: false,
  });
  open = await createApp({
    config: configSchema.parse({
      ...testConfig,
      DATA_DIR: path.join(tmp.dir, 'b'),
      OUTBOUND_ALLOWLIST: '127.0.0.1,localhost,::1',
      OUTBOUND_CA_FILE: caFile,
      HTTP_MAX_RESPONSE_BYTES: '20000',
    }),
    logger: testLogger(),
    defaultMetrics: false,
  });
});

afterAll(async () => {
  await strict.close();
  await open.close();
  target.closeAllConnections();
  secure.closeAllConnections();
  await new Promise((r) => target.close(r));
  await new Promise((r) => secure.close(r));
  tmp.cleanup();
});

describe('network-mcp catalog', () => {
  it('lists its tools with zod-generated schemas and annotations', async () => {
    const res = await request(open.app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'api_test',
      'dns_lookup',
      'http_request',
      'webhook_create',
      'webhook_delete',
      'webhook_list',
      'webhook_logs',
    ]);
    const hr = res.body.tools.find((t: { name: string }) => t.name === 'http_request');
    expect(hr.inputSchema.properties.maxResponseBytes).toMatchObject({ maximum: 20000, default: 20000 });
    expect(hr.inputSchema.additionalProperties).toBe(false);
    expect(hr.annotations).toMatchObject({ openWorldHint: true, readOnlyHint: false });
    for (const t of res.body.tools) expect(t.description).toMatch(/\d/);
    await request(open.app).get('/health').expect(200);
  });
});

describe('http_request without an allowlist', () => {
  it.each([
    ['127.0.0.1', () => `${base}/json`],
    ['localhost', () => base.replace('127.0.0.1', 'localhost') + '/json'],
    ['::1', () => 'http://[::1]:9/'],
    ['IPv4-mapped loopback', () => base.replace('127.0.0.1', '[::ffff:127.0.0.1]') + '/json'],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/'],
    ['metadata host name', () => 'http://metadata.google.internal/'],
    ['private network', () => 'http://192.168.1.1/'],
  ])('refuses %s with FORBIDDEN and the allowlist hint, sending nothing', async (_label, url) => {
    const before = hits.length;
    const res = await request(strict.app).post('/tools/http_request').send({ url: url() }).expect(403);
    expect(res.body).toMatchObject({ success: false, code: 'FORBIDDEN', service: 'network-mcp' });
    expect(res.body.error).toContain('OUTBOUND_ALLOWLIST');
    expect(hits.length).toBe(before);
  });
});

describe('http_request with 127.0.0.1, localhost and ::1 allowlisted', () => {
  const call = (args: Record<string, unknown>) => request(open.app).post('/tools/http_request').send(args);

  it('returns status, headers, parsed JSON, timing and the final URL', async () => {
    const res = await call({ url: `${base}/json` }).expect(200);
    expect(res.body.result).toMatchObject({
      url: `${base}/json`,
      status: 200,
      ok: true,
      bodyEncoding: 'utf8',
      json: { hello: 'world' },
      truncated: false,
      redirects: [],
      headers: { 'content-type': 'application/json' },
    });
    expect(res.body.result.timing.totalMs).toBeGreaterThanOrEqual(res.body.result.timing.firstByteMs);
  });

  it('sends method, headers and a JSON or text body', async () => {
    const j = await call({ url: `${base}/echo`, method: 'POST', json: { a: 1 } }).expect(200);
    expect(j.body.result.json).toEqual({ method: 'POST', contentType: 'application/json', body: '{"a":1}' });
    const t = await call({ url: `${base}/echo`, method: 'PUT', body: 'raw', headers: { 'Content-Type': 'text/plain' } }).expect(200);
    expect(t.body.result.json).toEqual({ method: 'PUT', contentType: 'text/plain', body: 'raw' });
  });

  it('returns binary bodies as base64 and non-2xx statuses as results', async () => {
    const bin = await call({ url: `${base}/binary` }).expect(200);
    expect(bin.body.result).toMatchObject({ bodyEncoding: 'base64', body: Buffer.from([0, 1, 2, 255]).toString('base64') });
    const notFound = await call({ url: `${base}/status?code=404` }).expect(200);
    expect(notFound.body.result).toMatchObject({ status: 404, ok: false });
  });

  it('follows redirects and reports the chain; maxRedirects 0 fails; followRedirects false returns the 3xx', async () => {
    const res = await call({ url: `${base}/hop` }).expect(200);
    expect(res.body.result.url).toBe(`${base}/json`);
    expect(res.body.result.redirects).toEqual([expect.objectContaining({ url: `${base}/hop`, status: 302, location: `${base}/json` })]);
    const limited = await call({ url: `${base}/hop`, maxRedirects: 0 }).expect(502);
    expect(limited.body.code).toBe('UPSTREAM_ERROR');
    const raw = await call({ url: `${base}/hop`, followRedirects: false }).expect(200);
    expect(raw.body.result).toMatchObject({ status: 302, headers: { location: '/json' } });
  });

  it('refuses a redirect hop to the metadata service or a private network, before connecting', async () => {
    for (const p of ['/to-metadata', '/to-private']) {
      const res = await call({ url: `${base}${p}` }).expect(403);
      expect(res.body.code).toBe('FORBIDDEN');
      expect(res.body.error).toMatch(/^Redirect hop 1 refused/);
      expect(res.body.details.redirects[0]).toMatchObject({ url: `${base}${p}` });
    }
  });

  it('cuts the body at maxResponseBytes and refuses a cap above HTTP_MAX_RESPONSE_BYTES', async () => {
    const res = await call({ url: `${base}/big`, maxResponseBytes: 100 }).expect(200);
    expect(res.body.result).toMatchObject({ truncated: true, bodyBytes: 100 });
    expect(res.body.result.body).toBe('x'.repeat(100));
    const dflt = await call({ url: `${base}/big` }).expect(200);
    expect(dflt.body.result).toMatchObject({ truncated: true, bodyBytes: 20000 });
    await call({ url: `${base}/big`, maxResponseBytes: 20001 }).expect(400);
  });

  it('times out with TIMEOUT (504)', async () => {
    const res = await call({ url: `${base}/slow`, timeoutMs: 200 }).expect(504);
    expect(res.body.code).toBe('TIMEOUT');
  });

  it('reaches the self-signed HTTPS server because OUTBOUND_CA_FILE trusts it', async () => {
    const res = await call({ url: `https://localhost:${securePort}/` }).expect(200);
    expect(res.body.result).toMatchObject({ status: 200, body: 'secure hello' });
  });

  it('answers every kind of bad input with VALIDATION_ERROR', async () => {
    const bad: Record<string, unknown>[] = [
      {},
      { url: 'ftp://example.com/file' },
      { url: 'not a url' },
      { url: 'http://user:pass@example.com/' },
      { url: `${base}/`, method: 'BREW' },
      { url: `${base}/`, body: 'x' },
      { url: `${base}/`, method: 'POST', body: 'x', json: {} },
      { url: `${base}/`, headers: { Host: 'evil' } },
      { url: `${base}/`, headers: { 'bad header': 'x' } },
      { url: `${base}/`, headers: { 'x-a': 'line\r\nInjected: 1' } },
      { url: `${base}/`, timeoutMs: 10 },
      { url: `${base}/`, maxRedirects: 99 },
      { url: `${base}/`, unknown: 1 },
      { url: 42 },
    ];
    for (const args of bad) {
      const res = await call(args);
      expect({ args, status: res.status, code: res.body.code }).toEqual({ args, status: 400, code: 'VALIDATION_ERROR' });
    }
  });

  it('maps an unreachable target to UPSTREAM_UNAVAILABLE, not 500', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const res = await call({ url: `http://127.0.0.1:${port}/` }).expect(503);
    expect(res.body.code).toBe('UPSTREAM_UNAVAILABLE');
  });
});

describe('api_test', () => {
  const call = (app: ServiceApp, args: Record<string, unknown>) => request(app.app).post('/tools/api_test').send(args);

  it('checks expected statuses and summarises latency per endpoint', async () => {
    const res = await call(open, {
      repeat: 3,
      endpoints: [
        { url: `${base}/json` },
        { url: `${base}/status?code=404`, expectedStatus: 404 },
        { url: `${base}/status?code=500`, expectedStatus: [200, 201] },
        { url: `${base}/echo`, method: 'POST', body: 'ping', expectedStatus: 200 },
      ],
    }).expect(200);
    const { summary, endpoints } = res.body.result;
    expect(summary).toMatchObject({ endpoints: 4, passed: 3, failed: 1, requests: 12 });
    expect(endpoints[0]).toMatchObject({ passed: true, attempts: 3, failures: 0, statuses: { '200': 3 }, expectedStatus: '2xx' });
    expect(endpoints[1]).toMatchObject({ passed: true, statuses: { '404': 3 } });
    expect(endpoints[2]).toMatchObject({ passed: false, failures: 3, statuses: { '500': 3 }, expectedStatus: [200, 201] });
    const lat = endpoints[0].latencyMs;
    expect(lat.min).toBeLessThanOrEqual(lat.p50);
    expect(lat.p50).toBeLessThanOrEqual(lat.p95);
    expect(lat.p95).toBeLessThanOrEqual(lat.max);
    expect(lat.avg).toBeGreaterThanOrEqual(lat.min);
  });

  it('reports refused and timed-out endpoints as failures with their codes', async () => {
    const res = await call(strict, { endpoints: [{ url: `${base}/json` }, { url: 'http://169.254.169.254/' }] }).expect(200);
    expect(res.body.result.summary).toMatchObject({ passed: 0, failed: 2 });
    expect(res.body.result.endpoints[0]).toMatchObject({ passed: false, latencyMs: null, errors: [{ code: 'FORBIDDEN' }] });
    const slow = await call(open, { endpoints: [{ url: `${base}/slow`, timeoutMs: 150 }] }).expect(200);
    expect(slow.body.result.endpoints[0].errors[0].code).toBe('TIMEOUT');
  });

  it('refuses bad input with VALIDATION_ERROR', async () => {
    for (const args of [
      {},
      { endpoints: [] },
      { endpoints: [{ url: `${base}/`, body: 'x' }] },
      { endpoints: [{ url: 'gopher://x/' }] },
      { endpoints: [{ url: `${base}/`, expectedStatus: 99 }] },
      { endpoints: [{ url: `${base}/` }], repeat: 11 },
      { endpoints: Array.from({ length: 21 }, () => ({ url: `${base}/` })) },
    ]) {
      const res = await call(open, args);
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 400, code: 'VALIDATION_ERROR' });
    }
  });
});
