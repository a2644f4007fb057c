import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import fs from 'node:fs';
import request from 'supertest';
import type { ServiceApp } from '@mcp-fleet/kit';
import { captureLogger, tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { OutboundPolicy } from '@mcp-fleet/outbound';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const received: Received[] = [];
let receiverStatus = 200;
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks) });
    res.statusCode = receiverStatus;
    res.end('ok');
  });
});

const tmp = tempDir();
const SECRET = 'test-webhook-secret-0123456789abcdef';
let targetUrl = '';
let service: ServiceApp;
let lines: string[];
const responses: string[] = [];

const config = (extra: Record<string, string> = {}) =>
  configSchema.parse({ ...testConfig, DATA_DIR: tmp.dir, OUTBOUND_ALLOWLIST: '127.0.0.1', WEBHOOK_LOG_MAX: '10', ...extra });

function signed(secret: string, body: string, timestamp = Math.floor(Date.now() / 1000)) {
  const sig = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return { 'X-Fleet-Signature': `sha256=${sig}`, 'X-Fleet-Timestamp': String(timestamp) };
}

/** Sends an inbound event; checks the status when given; keeps the response text for the secret scan. */
async function send(id: string, body: string, headers: Record<string, string>, status?: number) {
  const res = await request(service.app)
    .post(`/webhooks/${id}`)
    .set({ 'Content-Type': 'application/json', ...headers })
    .send(body);
  responses.push(res.text);
  if (status !== undefined) expect({ status: res.status, body: res.body }).toMatchObject({ status });
  return res;
}

async function createHook(args: Record<string, unknown>, status?: number) {
  const res = await request(service.app).post('/tools/webhook_create').send(args);
  responses.push(res.text);
  if (status !== undefined) expect({ status: res.status, body: res.body }).toMatchObject({ status });
  return res;
}

beforeAll(async () => {
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  targetUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const captured = captureLogger('network-mcp');
  lines = captured.lines;
  service = await createApp({ config: config(), logger: captured.logger, defaultMetrics: false });
});

afterAll(async () => {
  await service.close();
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
  tmp.cleanup();
});

describe('webhook round trip', () => {
  let hookId = '';

  it('creates a webhook with a given secret and never shows the secret again', async () => {
    const res = await createHook({ targetUrl, secret: SECRET, events: ['order.created', 'order.paid'], description: 'orders' }, 200);
    expect(res.body.result.webhook).toMatchObject({ targetUrl, events: ['order.created', 'order.paid'], hasSecret: true });
    expect(res.body.result.secret).toBeUndefined();
    hookId = res.body.result.webhook.id;
    expect(hookId).toMatch(/^wh_/);
    expect(res.body.result.inboundPath).toBe(`/webhooks/${hookId}`);
    const list = await request(service.app).get('/webhooks').expect(200);
    responses.push(list.text);
    expect(list.body.result.webhooks).toContainEqual(expect.objectContaining({ id: hookId, hasSecret: true }));
    expect(list.text).not.toContain(SECRET);
  });

  it('verifies a signed event, forwards it with a fresh valid signature and logs the delivery', async () => {
    const body = JSON.stringify({ order: 42 });
    received.length = 0;
    const res = await send(hookId, body, { ...signed(SECRET, body), 'X-Fleet-Event': 'order.created' }, 200);
    expect(res.body.result).toMatchObject({ status: 'delivered', targetStatus: 200 });
    expect(received).toHaveLength(1);
    const got = received[0];
    expect(got.body.toString()).toBe(body);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['x-fleet-event']).toBe('order.created');
    expect(got.headers['x-fleet-webhook-id']).toBe(hookId);
    expect(got.headers['x-fleet-delivery']).toBe(res.body.result.deliveryId);
    const expected = createHmac('sha256', SECRET).update(`${got.headers['x-fleet-timestamp']}.`).update(got.body).digest('hex');
    expect(got.headers['x-fleet-signature']).toBe(`sha256=${expected}`);

    const logs = await request(service.app).get('/webhook-logs').query({ webhookId: hookId }).expect(200);
    responses.push(logs.text);
    expect(logs.body.result.logs[0]).toMatchObject({
      deliveryId: res.body.result.deliveryId,
      webhookId: hookId,
      event: 'order.created',
      status: 'delivered',
      targetStatus: 200,
      requestBytes: Buffer.byteLength(body),
    });
  });

  it('refuses a bad signature with 401, forwards nothing, and logs the rejection', async () => {
    const body = JSON.stringify({ order: 43 });
    received.length = 0;
    const wrong = await send(hookId, body, signed('another-secret-value-000000', body), 401);
    expect(wrong.body).toMatchObject({ code: 'UNAUTHORIZED', details: { reason: 'bad-signature' } });
    const tampered = await send(hookId, body.replace('43', '44'), signed(SECRET, body), 401);
    expect(tampered.body.details.reason).toBe('bad-signature');
    const missing = await send(hookId, body, {}, 401);
    expect(missing.body.details.reason).toBe('missing-signature');
    const stale = await send(hookId, body, signed(SECRET, body, Math.floor(Date.now() / 1000) - 3600), 401);
    expect(stale.body.details.reason).toBe('stale-timestamp');
    expect(received).toHaveLength(0);
    const logs = await request(service.app).post('/tools/webhook_logs').send({ webhookId: hookId, status: 'rejected' }).expect(200);
    expect(logs.body.result.logs.map((l: { reason: string }) => l.reason)).toEqual([
      'stale-timestamp',
      'missing-signature',
      'bad-signature',
      'bad-signature',
    ]);
  });

  it('refuses a replayed signature within the window', async () => {
    const body = '{"order":45}';
    const headers = { ...signed(SECRET, body), 'X-Fleet-Event': 'order.paid' };
    await send(hookId, body, headers, 200);
    const again = await send(hookId, body, headers, 401);
    expect(again.body.details.reason).toBe('replayed');
  });

  it('skips events the webhook does not subscribe to', async () => {
    const body = '{}';
    received.length = 0;
    const res = await send(hookId, body, { ...signed(SECRET, body), 'X-Fleet-Event': 'user.deleted' }, 200);
    expect(res.body.result.status).toBe('skipped');
    expect(received).toHaveLength(0);
  });

  it('answers 502 and logs a failure when the target answers an error', async () => {
    receiverStatus = 500;
    try {
      const body = '{"x":1}';
      const res = await send(hookId, body, { ...signed(SECRET, body), 'X-Fleet-Event': 'order.paid' }, 502);
      expect(res.body).toMatchObject({ code: 'UPSTREAM_ERROR', details: { targetStatus: 500 } });
      const logs = await request(service.app).post('/tools/webhook_logs').send({ status: 'failed', limit: 1 }).expect(200);
      expect(logs.body.result.logs[0]).toMatchObject({ webhookId: hookId, status: 'failed', targetStatus: 500 });
    } finally {
      receiverStatus = 200;
    }
  });

  it('answers 404 for an unknown or malformed webhook id', async () => {
    await send('wh_AAAAAAAAAAAAAAAAAAAAAA', '{}', {}, 404);
    const res = await send('../../etc/passwd', '{}', {});
    expect(res.status).toBe(404);
  });

  it('no secret appears in any response or log line', () => {
    expect(lines.length).toBeGreaterThan(0);
    for (const text of [...responses, ...lines]) expect(text).not.toContain(SECRET);
  });
});

describe('webhook definitions', () => {
  it('generates a secret when none is given, returns it once, and forwards unsigned when signed is false', async () => {
    const gen = await createHook({ targetUrl }, 200);
    expect(gen.body.result.secret).toMatch(/^[0-9a-f]{64}$/);
    const secret = gen.body.result.secret as string;
    const id = gen.body.result.webhook.id;
    const list = await request(service.app).get('/webhooks').query({ limit: 500 }).expect(200);
    expect(list.text).not.toContain(secret);
    const body = 'plain text';
    await send(id, body, { ...signed(secret, body), 'Content-Type': 'text/plain' }, 200);

    const unsigned = await createHook({ targetUrl, signed: false }, 200);
    expect(unsigned.body.result.webhook.hasSecret).toBe(false);
    expect(unsigned.body.result.secret).toBeUndefined();
    received.length = 0;
    await send(unsigned.body.result.webhook.id, '{"a":1}', {}, 200);
    expect(received[0].headers['x-fleet-signature']).toBeUndefined();
  });

  it('refuses bad definitions with documented codes', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [{}, 400, 'VALIDATION_ERROR'],
      [{ targetUrl: 'ftp://x/' }, 400, 'VALIDATION_ERROR'],
      [{ targetUrl, secret: 'short' }, 400, 'VALIDATION_ERROR'],
      [{ targetUrl, signed: false, secret: SECRET }, 400, 'VALIDATION_ERROR'],
      [{ targetUrl, events: ['bad event!'] }, 400, 'VALIDATION_ERROR'],
      [{ targetUrl, events: [] }, 400, 'VALIDATION_ERROR'],
      [{ targetUrl, extra: 1 }, 400, 'VALIDATION_ERROR'],
      [{ targetUrl: 'http://169.254.169.254/hook' }, 403, 'FORBIDDEN'],
      [{ targetUrl: 'http://10.0.0.5/hook' }, 403, 'FORBIDDEN'],
    ];
    for (const [args, status, code] of cases) {
      const res = await createHook(args);
      expect({ args, status: res.status, code: res.body.code }).toEqual({ args, status, code });
    }
  });

  it('refuses forwarding at delivery time when the target name resolves to a non-allowlisted address', async () => {
    // The name is accepted at creation (names are resolved per delivery); at delivery it resolves to 10.0.0.7.
    const resolve = async (host: string) => (host === 'hooks.rebind.test' ? [{ address: '10.0.0.7', family: 4 }] : []);
    const other = await createApp({
      config: config({ DATA_DIR: path.join(tmp.dir, 'rebind') }),
      logger: testLogger(),
      policy: new OutboundPolicy(['127.0.0.1'], { resolve }),
      defaultMetrics: false,
    });
    try {
      const hook = await request(other.app)
        .post('/tools/webhook_create')
        .send({ targetUrl: 'http://hooks.rebind.test/in', signed: false })
        .expect(200);
      const id = hook.body.result.webhook.id;
      const res = await request(other.app).post(`/webhooks/${id}`).send({ a: 1 }).expect(502);
      expect(res.body).toMatchObject({ code: 'UPSTREAM_ERROR', details: { code: 'FORBIDDEN' } });
      expect(res.body.error).toContain('10.0.0.7');
      const logs = await request(other.app).get('/webhook-logs').expect(200);
      expect(logs.body.result.logs[0]).toMatchObject({ webhookId: id, status: 'failed', reason: 'FORBIDDEN' });
    } finally {
      await other.close();
    }
  });

  it('keeps at most WEBHOOK_LOG_MAX rows, newest first, paginated with a stable cursor', async () => {
    const hook = await createHook({ targetUrl, signed: false }, 200);
    const id = hook.body.result.webhook.id;
    for (let i = 0; i < 12; i++) await send(id, `{"n":${i}}`, { 'X-Fleet-Event': `e${i}` }, 200);
    const all = await request(service.app).get('/webhook-logs').query({ limit: 500 }).expect(200);
    expect(all.body.result.logs).toHaveLength(10);
    expect(all.body.result.logs[0].event).toBe('e11');
    const page1 = await request(service.app).get('/webhook-logs').query({ limit: 4 }).expect(200);
    expect(page1.body.result.logs.map((l: { event: string }) => l.event)).toEqual(['e11', 'e10', 'e9', 'e8']);
    await send(id, '{}', { 'X-Fleet-Event': 'newer' }, 200);
    const page2 = await request(service.app).get('/webhook-logs').query({ limit: 4, cursor: page1.body.result.nextCursor }).expect(200);
    expect(page2.body.result.logs.map((l: { event: string }) => l.event)).toEqual(['e7', 'e6', 'e5', 'e4']);
    await request(service.app).get('/webhook-logs').query({ cursor: 'garbage' }).expect(400);
    await request(service.app).get('/webhook-logs').query({ limit: 0 }).expect(400);
    await request(service.app).get('/webhook-logs').query({ status: 'weird' }).expect(400);
  });

  it('deletes a webhook; its inbound path then answers 404', async () => {
    const hook = await createHook({ targetUrl, signed: false }, 200);
    const id = hook.body.result.webhook.id;
    await request(service.app).delete(`/webhooks/${id}`).expect(200);
    await send(id, '{}', {}, 404);
    await request(service.app).post('/tools/webhook_delete').send({ webhook_id: id }).expect(404);
  });

  it('persists definitions and secrets across a restart, in a 0600 SQLite file', async () => {
    const created = await createHook({ targetUrl, secret: SECRET, description: 'survivor' }, 200);
    const id = created.body.result.webhook.id;
    await service.close();
    service = await createApp({ config: config(), logger: testLogger(), defaultMetrics: false });
    const list = await request(service.app).get('/webhooks').query({ limit: 500 }).expect(200);
    expect(list.body.result.webhooks).toContainEqual(expect.objectContaining({ id, description: 'survivor', hasSecret: true }));
    const body = '{"after":"restart"}';
    const headers = signed(SECRET, body);
    await send(id, body, headers, 200);
    // Accepted signatures are remembered in the file too: a replay after another restart is refused.
    await service.close();
    service = await createApp({ config: config(), logger: testLogger(), defaultMetrics: false });
    const replayed = await send(id, body, headers, 401);
    expect(replayed.body.details.reason).toBe('replayed');
    const file = path.join(tmp.dir, 'network-mcp', 'webhooks.sqlite');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });
});
