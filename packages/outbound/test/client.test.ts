import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { localhostCert, tempDir } from '@mcp-fleet/testing';
import { request as undiciRequest } from 'undici';
import { connectTls, OutboundClient, OutboundPolicy, outboundEnvShape, parseAllowlist } from '../src';

const requests: string[] = [];
const server = http.createServer((req, res) => {
  requests.push(`${req.method} ${req.url}`);
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname === '/echo') {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ method: req.method, headers: req.headers, body }));
    });
    return;
  }
  if (url.pathname === '/redirect') {
    res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/echo' });
    res.end();
    return;
  }
  if (url.pathname === '/loop') {
    res.writeHead(302, { location: '/loop' });
    res.end();
    return;
  }
  if (url.pathname === '/big') {
    res.end(Buffer.alloc(200_000, 'a'));
    return;
  }
  if (url.pathname === '/slow') {
    setTimeout(() => res.end('late'), 2000).unref();
    return;
  }
  res.end('hello');
});
let port = 0;
let base = '';
const tmp = tempDir();
let tlsServer: https.Server;
let tlsPort = 0;

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  const { key, cert } = localhostCert(2);
  fs.writeFileSync(path.join(tmp.dir, 'cert.pem'), cert);
  tlsServer = https.createServer({ key, cert }, (_req, res) => res.end('secure'));
  await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', r));
  tlsPort = (tlsServer.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  tlsServer.closeAllConnections();
  await new Promise((r) => server.close(r));
  await new Promise((r) => tlsServer.close(r));
  tmp.cleanup();
});

describe('allowlist parsing', () => {
  it('accepts hosts, IPs, CIDRs and wildcards and names every bad entry', () => {
    const list = parseAllowlist(['127.0.0.1', 'localhost', '10.0.0.0/8', '[::1]', 'fc00::/7', '*.corp.internal']);
    expect(list.cidrs).toHaveLength(4);
    expect([...list.hosts]).toEqual(['localhost']);
    expect(list.suffixes).toEqual(['.corp.internal']);
    expect(() => parseAllowlist(['10.0.0.0/40', 'bad host', 'ok.example'])).toThrow(/"10.0.0.0\/40", "bad host"/);
  });

  it('fails config parsing on a bad entry', () => {
    const ok = outboundEnvShape.OUTBOUND_ALLOWLIST.safeParse('127.0.0.1, localhost');
    expect(ok.success && ok.data).toEqual(['127.0.0.1', 'localhost']);
    expect(outboundEnvShape.OUTBOUND_ALLOWLIST.safeParse('300.1.1.1/8').success).toBe(false);
  });

  it('allows by address, CIDR, host name or suffix', () => {
    const policy = new OutboundPolicy(['10.0.0.0/8', 'db.local', '*.corp.internal', '::1']);
    expect(policy.evaluateAddress('10.1.2.3').allowed).toBe(true);
    expect(policy.evaluateAddress('::ffff:10.1.2.3').allowed).toBe(true);
    expect(policy.evaluateAddress('192.168.0.1')).toEqual({ allowed: false, addressClass: 'private' });
    expect(policy.evaluateAddress('192.168.0.1', 'db.local').allowed).toBe(true);
    expect(policy.evaluateAddress('192.168.0.1', 'a.corp.internal').allowed).toBe(true);
    expect(policy.evaluateAddress('192.168.0.1', 'corp.internal').allowed).toBe(false);
    expect(policy.evaluateAddress('::1').allowed).toBe(true);
    expect(policy.evaluateAddress('8.8.8.8').allowed).toBe(true);
    expect(() => policy.assertHost('metadata.google.internal')).toThrow(/cloud-metadata/);
  });
});

describe('OutboundClient without an allowlist', () => {
  const client = new OutboundClient({ policy: new OutboundPolicy([]) });
  afterAll(() => client.close());

  it.each([
    ['loopback literal', () => `${base}/`, 'loopback'],
    ['localhost by name (resolved, then refused)', () => `http://localhost:${port}/`, 'loopback'],
    ['IPv4-mapped IPv6', () => `http://[::ffff:127.0.0.1]:${port}/`, 'loopback'],
    ['decimal IPv4 form', () => `http://2130706433:${port}/`, 'loopback'],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/', 'cloud-metadata'],
    ['metadata host name', () => 'http://metadata.google.internal/computeMetadata/v1/', 'cloud-metadata'],
    ['private 10/8', () => 'http://10.0.0.1/', 'private'],
    ['unspecified', () => `http://0.0.0.0:${port}/`, 'unspecified'],
  ])('refuses %s with FORBIDDEN', async (_name, url, cls) => {
    const before = requests.length;
    await expect(client.request(url())).rejects.toMatchObject({
      code: 'FORBIDDEN',
      details: expect.objectContaining({ addressClass: cls }),
      message: expect.stringContaining('OUTBOUND_ALLOWLIST'),
    });
    expect(requests.length).toBe(before);
  });

  it('refuses at connect time, through the dispatcher alone, without any pre-check', async () => {
    const before = requests.length;
    await expect(undiciRequest(`${base}/`, { dispatcher: client.dispatcher })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(undiciRequest(`http://localhost:${port}/`, { dispatcher: client.dispatcher })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect(requests.length).toBe(before);
  });

  it('refuses bad URLs and headers with VALIDATION_ERROR', async () => {
    await expect(client.request('ftp://example.com/')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(client.request('not a url')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(client.request('http://user:pw@example.com/')).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(client.request('http://example.com/', { headers: { host: 'x' } })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(client.request('http://example.com/', { headers: { 'x-a': 'a\r\nb: c' } })).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
  });
});

describe('OutboundClient with 127.0.0.1 and localhost allowlisted', () => {
  const client = new OutboundClient({ policy: new OutboundPolicy(['127.0.0.1', 'localhost']) });
  afterAll(() => client.close());

  it('reaches the local server by IP and by name', async () => {
    const res = await client.request(`${base}/`);
    expect(res).toMatchObject({ status: 200, truncated: false, redirects: [] });
    expect(res.body.toString()).toBe('hello');
    const byName = await client.request(`http://localhost:${port}/echo`, { method: 'POST', body: 'x=1', headers: { 'X-Test': 'yes' } });
    expect(JSON.parse(byName.body.toString())).toMatchObject({ method: 'POST', body: 'x=1', headers: { 'x-test': 'yes' } });
    expect(byName.timing.totalMs).toBeGreaterThanOrEqual(0);
  });

  it('follows redirects, records the chain, turns 303 into GET and drops credentials across origins', async () => {
    const to = encodeURIComponent(`http://localhost:${port}/echo`);
    const res = await client.request(`${base}/redirect?status=303&to=${to}`, {
      method: 'POST',
      body: 'payload',
      headers: { authorization: 'Bearer abc', 'x-keep': '1' },
    });
    expect(res.url).toBe(`http://localhost:${port}/echo`);
    expect(res.redirects).toEqual([
      expect.objectContaining({ status: 303, url: `${base}/redirect?status=303&to=${to}`, location: res.url }),
    ]);
    const echoed = JSON.parse(res.body.toString());
    expect(echoed.method).toBe('GET');
    expect(echoed.body).toBe('');
    expect(echoed.headers.authorization).toBeUndefined();
    expect(echoed.headers['x-keep']).toBe('1');
  });

  it('keeps method and body on 307', async () => {
    const res = await client.request(`${base}/redirect?status=307&to=/echo`, { method: 'PUT', body: 'same' });
    expect(JSON.parse(res.body.toString())).toMatchObject({ method: 'PUT', body: 'same' });
  });

  it('refuses a redirect hop to a non-allowlisted address before connecting, and reports the chain', async () => {
    for (const target of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://[::ffff:192.168.1.1]/']) {
      const err = await client.request(`${base}/redirect?to=${encodeURIComponent(target)}`).catch((e) => e);
      expect(err).toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/^Redirect hop 1 refused/) });
      expect(err.details.redirects).toEqual([
        expect.objectContaining({ status: 302, location: target.replace('::ffff:192.168.1.1', '::ffff:c0a8:101') }),
      ]);
    }
  });

  it('stops after maxRedirects, and returns the 3xx itself when not following', async () => {
    await expect(client.request(`${base}/loop`, { maxRedirects: 3 })).rejects.toMatchObject({
      code: 'UPSTREAM_ERROR',
      details: { redirects: expect.any(Array) },
    });
    const raw = await client.request(`${base}/loop`, { followRedirects: false });
    expect(raw.status).toBe(302);
    expect(raw.headers.location).toBe('/loop');
  });

  it('cuts the body at the cap and says so', async () => {
    const res = await client.request(`${base}/big`, { maxResponseBytes: 1000 });
    expect(res.truncated).toBe(true);
    expect(res.body.length).toBe(1000);
    const whole = await client.request(`${base}/big`);
    expect(whole.truncated).toBe(false);
    expect(whole.bodyBytes).toBe(200_000);
  });

  it('times out with TIMEOUT', async () => {
    await expect(client.request(`${base}/slow`, { timeoutMs: 200 })).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('maps a refused connection to UPSTREAM_UNAVAILABLE', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(client.request(`http://127.0.0.1:${freePort}/`)).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  });

  it('does not trust a self-signed HTTPS server unless its CA is configured', async () => {
    await expect(client.request(`https://localhost:${tlsPort}/`)).rejects.toMatchObject({ code: 'UPSTREAM_ERROR' });
    const trusting = new OutboundClient({
      policy: new OutboundPolicy(['localhost']),
      ca: fs.readFileSync(path.join(tmp.dir, 'cert.pem'), 'utf8'),
    });
    try {
      const res = await trusting.request(`https://localhost:${tlsPort}/`);
      expect(res.body.toString()).toBe('secure');
    } finally {
      await trusting.close();
    }
  });
});

describe('the resolver answer is what gets connected to', () => {
  it('connects only to allowed addresses of a mixed answer, and refuses a name that rebinds to loopback', async () => {
    const answers: Record<string, string[]> = {
      'mixed.test': ['10.0.0.1', '127.0.0.1'],
      'rebind.test': ['127.0.0.1'],
    };
    const resolve = async (host: string) => (answers[host] ?? []).map((address) => ({ address, family: 4 }));
    const allowLoopback = new OutboundClient({ policy: new OutboundPolicy(['127.0.0.1'], { resolve }) });
    const strict = new OutboundClient({ policy: new OutboundPolicy([], { resolve }) });
    try {
      const res = await allowLoopback.request(`http://mixed.test:${port}/`);
      expect(res.body.toString()).toBe('hello');
      await expect(strict.request(`http://rebind.test:${port}/`)).rejects.toMatchObject({
        code: 'FORBIDDEN',
        details: { host: 'rebind.test', address: '127.0.0.1', addressClass: 'loopback' },
      });
    } finally {
      await allowLoopback.close();
      await strict.close();
    }
  });
});

describe('connectTls', () => {
  it('applies the policy, then hands back an unverified socket with its certificate', async () => {
    await expect(connectTls(new OutboundPolicy([]), { host: 'localhost', port: tlsPort })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(connectTls(new OutboundPolicy([]), { host: '127.0.0.1', port: tlsPort })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    const socket = await connectTls(new OutboundPolicy(['localhost']), { host: 'localhost', port: tlsPort });
    try {
      expect(socket.authorized).toBe(false);
      expect(socket.getPeerCertificate().subject.CN).toBe('localhost');
    } finally {
      socket.destroy();
    }
  });
});
