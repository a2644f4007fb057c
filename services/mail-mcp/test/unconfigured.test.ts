import request from 'supertest';
import { getService } from '@mcp-fleet/inventory';
import { captureLogger, tempDir, testEnv, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';

const tmp = tempDir('mail-unconf-');
const config = readConfig(testEnv({ DATA_DIR: tmp.dir, WORKSPACE_ROOTS: tmp.dir }));
let svc: Awaited<ReturnType<typeof createApp>>;

beforeAll(async () => {
  svc = await createApp({ config, logger: testLogger(), defaultMetrics: false });
});
afterAll(async () => {
  await svc.close();
  tmp.cleanup();
});

const ID = `${Buffer.from('INBOX').toString('base64url')}.1.1`;

describe('mail-mcp with no mail server configured', () => {
  it('lists exactly the inventory tools, each documented from its schema', async () => {
    const res = await request(svc.app).get('/tools/list').expect(200);
    const names = res.body.tools.map((t: { name: string }) => t.name);
    expect(names).toEqual(getService('mail-mcp')!.tools);
    for (const t of res.body.tools) {
      expect(t.description.length).toBeGreaterThan(80);
      for (const [field, schema] of Object.entries(t.inputSchema.properties as Record<string, { description?: string }>)) {
        expect([t.name, field, typeof schema.description]).toEqual([t.name, field, 'string']);
      }
    }
  });

  it('answers /health 200 and says mail is not configured, naming the variables', async () => {
    const res = await request(svc.app).get('/health').expect(200);
    expect(res.body.status).toBe('degraded');
    expect(res.body.checks.imap).toMatchObject({ status: 'error', required: false });
    expect(res.body.checks.imap.error).toMatch(/mail is not configured: set IMAP_URL/);
    expect(res.body.checks.smtp.error).toMatch(/SMTP_URL/);
  });

  it.each([
    ['post', '/mail/search', {}],
    ['post', '/mail/count', {}],
    ['get', `/mail/email/${ID}`, undefined],
    ['get', '/mail/labels', undefined],
    ['post', '/mail/labels', { name: 'Projects' }],
    ['post', '/mail/labels/apply', { ids: [ID], add: ['todo'] }],
    ['post', '/mail/move', { ids: [ID], folder: 'Archive' }],
    ['post', '/mail/forward', { email_id: ID, to: 'a@example.com' }],
  ])('%s %s answers NOT_CONFIGURED naming IMAP_URL', async (method, path, body) => {
    const req = method === 'get' ? request(svc.app).get(path) : request(svc.app).post(path).send(body);
    const res = await req.expect(503);
    expect(res.body).toMatchObject({ success: false, code: 'NOT_CONFIGURED', service: 'mail-mcp' });
    expect(res.body.error).toMatch(/IMAP_URL/);
    expect(res.body.error).toMatch(/MAIL_USER and MAIL_PASSWORD/);
  });

  it('mail_send answers NOT_CONFIGURED naming SMTP_URL, also through POST /tool/{tool_name}', async () => {
    const direct = await request(svc.app).post('/mail/send').send({ to: 'a@example.com', subject: 'hi', text: 'x' }).expect(503);
    expect(direct.body.error).toMatch(/SMTP_URL/);
    const generic = await request(svc.app).post('/tool/mail_send').send({ to: 'a@example.com', text: 'x' }).expect(503);
    expect(generic.body.code).toBe('NOT_CONFIGURED');
    const unknown = await request(svc.app).post('/tool/mail_delete_everything').send({}).expect(404);
    expect(unknown.body.code).toBe('UNKNOWN_TOOL');
  });

  it('validates input before anything else: CR/LF in headers, bad addresses, bad ids', async () => {
    const crlf = await request(svc.app)
      .post('/mail/send')
      .send({ to: 'a@example.com', subject: 'hi\r\nBcc: victim@example.com' })
      .expect(400);
    expect(crlf.body.code).toBe('VALIDATION_ERROR');
    expect(crlf.body.details[0].path).toBe('subject');
    const name = await request(svc.app)
      .post('/mail/send')
      .send({ to: { name: 'x\nBcc: v@example.com', address: 'a@example.com' } })
      .expect(400);
    expect(name.body.code).toBe('VALIDATION_ERROR');
    for (const to of ['not-an-address', 'a@', '<a@b.example>\r\nX: y', ['ok@example.com', 'two@@example.com']]) {
      const res = await request(svc.app).post('/mail/send').send({ to, text: 'x' }).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    const ref = await request(svc.app).post('/mail/send').send({ to: 'a@example.com', inReplyTo: '<a@b>\nX-Evil: 1' }).expect(400);
    expect(ref.body.details[0].path).toBe('inReplyTo');
    const badId = await request(svc.app).get('/mail/email/not..an..id').expect(400);
    expect(badId.body.code).toBe('VALIDATION_ERROR');
    const badFolder = await request(svc.app).post('/mail/search').send({ folder: 'INBOX\r\nA1 DELETE INBOX' }).expect(400);
    expect(badFolder.body.details[0].path).toBe('folder');
    const extra = await request(svc.app).post('/mail/search').send({ query: 'x' }).expect(400);
    expect(extra.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('mail-mcp configuration', () => {
  it('refuses non-mail URLs at boot, naming the variable', () => {
    expect(() => readConfig(testEnv({ IMAP_URL: 'http://mail.example.com' }))).toThrow(/IMAP_URL/);
    expect(() => readConfig(testEnv({ SMTP_URL: 'not a url' }))).toThrow(/SMTP_URL/);
    expect(readConfig(testEnv({ IMAP_URL: '', SMTP_URL: '' })).IMAP_URL).toBeUndefined();
  });

  it('never logs or answers the password when the server is unreachable', async () => {
    const { logger, lines } = captureLogger('mail-mcp');
    const secret = 'S3cr3t-Pa55-word';
    const cfg = readConfig(
      testEnv({
        WORKSPACE_ROOTS: tmp.dir,
        IMAP_URL: `imap://someone:${secret}@127.0.0.1:1`,
        SMTP_URL: 'smtp://127.0.0.1:1',
        MAIL_USER: 'someone@example.com',
        MAIL_PASSWORD: secret,
        MAIL_CONNECT_TIMEOUT_MS: '2000',
      }),
    );
    const app = await createApp({ config: cfg, logger, defaultMetrics: false });
    try {
      const search = await request(app.app).post('/mail/search').send({}).expect(503);
      expect(search.body.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(search.body.error).toMatch(/imap:\/\/127\.0\.0\.1:1/);
      const send = await request(app.app).post('/mail/send').send({ to: 'a@example.com', text: 'x' }).expect(503);
      expect(send.body.code).toBe('UPSTREAM_UNAVAILABLE');
      const health = await request(app.app).get('/health').expect(200);
      const all = JSON.stringify([search.body, send.body, health.body]) + lines.join('\n');
      expect(lines.length).toBeGreaterThan(0);
      expect(all).not.toContain(secret);
    } finally {
      await app.close();
    }
  });
});
