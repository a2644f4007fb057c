import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { SERVICES } from '@mcp-fleet/inventory';
import { parseEnvFile } from '@mcp-fleet/kit';
import { ADMIN, makeApp } from './support';

const auth = { Authorization: `Bearer ${ADMIN}` };
const VALUE = "s3cr3t-'quoted' $HOME `id` value";

describe('secrets-ui API', () => {
  const t = makeApp();
  afterAll(() => t.cleanup());

  it('answers /health healthy with the token file present and the store usable, naming no value', async () => {
    const res = await request(t.app).get('/health');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('healthy');
    expect(res.body.checks.token.status).toBe('ok');
    expect(res.body.checks.store).toMatchObject({ status: 'ok', detail: { kind: 'file' } });
    // the store token was created on first start, mode 600, and never shown
    const token = fs.readFileSync(res.body.checks.token.detail.file, 'utf8').trim();
    expect(token.length).toBeGreaterThan(20);
    expect(fs.statSync(res.body.checks.token.detail.file).mode & 0o777).toBe(0o600);
    expect(JSON.stringify(res.body)).not.toContain(token);
  });

  it('refuses the API without the admin token, or with a wrong one', async () => {
    expect((await request(t.app).get('/api/services')).status).toBe(401);
    const wrong = await request(t.app).get('/api/services').set('Authorization', 'Bearer not-the-token');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ success: false, code: 'UNAUTHORIZED' });
  });

  it('lists every inventory service with its secret variables, store path and restart', async () => {
    const res = await request(t.app).get('/api/services').set(auth);
    expect(res.status).toBe(200);
    const services = res.body.result.services as any[];
    expect(services.map((s) => s.id)).toEqual(SERVICES.map((s) => s.id));
    const security = services.find((s) => s.id === 'security-mcp');
    expect(security.variables.map((v: any) => v.name)).toEqual(
      expect.arrayContaining(['JWT_SECRET', 'SECURITY_ADMIN_TOKEN', 'ENCRYPTION_KEY']),
    );
    expect(security.storePath).toBe(t.storeFile('security-mcp'));
    expect(security.restart).toMatchObject({ required: true, services: ['security-mcp'], command: 'docker compose restart security-mcp' });
    // names that merely look like secrets but are marked otherwise are not offered
    const terminal = services.find((s) => s.id === 'terminal-mcp');
    expect(terminal.variables).toEqual([]);
  });

  it('refuses unknown services and keys, listing the valid ones', async () => {
    const svc = await request(t.app)
      .put('/api/secrets/nope-mcp')
      .set(auth)
      .send({ values: { A: 'b' } });
    expect(svc.status).toBe(404);
    expect(svc.body.error).toContain('security-mcp');
    const key = await request(t.app)
      .put('/api/secrets/security-mcp')
      .set(auth)
      .send({ values: { PATH: '/evil' } });
    expect(key.status).toBe(400);
    expect(key.body.error).toMatch(/does not read PATH; its secret variables are JWT_SECRET, SECURITY_ADMIN_TOKEN, ENCRYPTION_KEY/);
    const none = await request(t.app)
      .put('/api/secrets/filesystem-mcp')
      .set(auth)
      .send({ values: { X: 'y' } });
    expect(none.body.error).toContain('reads no secret variables');
  });

  it('caps value sizes and refuses NUL bytes and malformed bodies', async () => {
    const big = await request(t.app)
      .put('/api/secrets/security-mcp')
      .set(auth)
      .send({ values: { JWT_SECRET: 'x'.repeat(8193) } });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');
    const nul = await request(t.app)
      .put('/api/secrets/security-mcp')
      .set(auth)
      .send({ values: { JWT_SECRET: 'a\u0000b' } });
    expect(nul.status).toBe(400);
    for (const body of [{}, { values: [] }, { values: { JWT_SECRET: 5 } }, { values: {} }, { values: { JWT_SECRET: 'x' }, extra: 1 }]) {
      const res = await request(t.app).put('/api/secrets/security-mcp').set(auth).send(body);
      expect(res.status).toBe(400);
    }
    expect(fs.existsSync(t.storeFile('security-mcp'))).toBe(false);
  });

  it('writes, regenerates the export file (mode 600, safely quoted) and answers what must restart', async () => {
    const res = await request(t.app)
      .put('/api/secrets/security-mcp')
      .set({ ...auth, 'X-Actor': 'alice' })
      .send({ values: { JWT_SECRET: VALUE, SECURITY_ADMIN_TOKEN: 'second-value-0123456789' } });
    expect(res.status).toBe(200);
    expect(res.body.result).toMatchObject({
      service: 'security-mcp',
      version: 1,
      set: ['JWT_SECRET', 'SECURITY_ADMIN_TOKEN'],
      exportFile: t.exportFile('security-mcp'),
      restart: { required: true, services: ['security-mcp'], command: 'docker compose restart security-mcp' },
    });
    expect(JSON.stringify(res.body)).not.toContain(VALUE);
    const file = t.exportFile('security-mcp');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(parseEnvFile(fs.readFileSync(file, 'utf8'))).toEqual({ JWT_SECRET: VALUE, SECURITY_ADMIN_TOKEN: 'second-value-0123456789' });
    // a POSIX shell sourcing it gets exactly the value: no expansion, no command substitution
    const sh = spawnSync('sh', ['-c', `set -a; . "$1"; set +a; printf %s "$JWT_SECRET"`, 'sh', file], { encoding: 'utf8' });
    expect(sh.stdout).toBe(VALUE);
  });

  it('masks values until one is revealed, and removes a value given null', async () => {
    const masked = await request(t.app).get('/api/secrets/security-mcp').set(auth);
    expect(masked.status).toBe(200);
    expect(JSON.stringify(masked.body)).not.toContain(VALUE);
    const jwt = masked.body.result.keys.find((k: any) => k.name === 'JWT_SECRET');
    expect(jwt).toMatchObject({ set: true, value: '••••••••' });
    expect(masked.body.result.keys.find((k: any) => k.name === 'ENCRYPTION_KEY')).toMatchObject({ set: false, value: null });
    const revealed = await request(t.app).post('/api/secrets/security-mcp/reveal').set(auth).send({ key: 'JWT_SECRET' });
    expect(revealed.body.result).toMatchObject({ key: 'JWT_SECRET', value: VALUE, version: 1 });
    const unset = await request(t.app).post('/api/secrets/security-mcp/reveal').set(auth).send({ key: 'ENCRYPTION_KEY' });
    expect(unset.status).toBe(404);
    const removed = await request(t.app)
      .put('/api/secrets/security-mcp')
      .set(auth)
      .send({ values: { SECURITY_ADMIN_TOKEN: null } });
    expect(removed.body.result).toMatchObject({ version: 2, removed: ['SECURITY_ADMIN_TOKEN'] });
    expect(parseEnvFile(fs.readFileSync(t.exportFile('security-mcp'), 'utf8'))).toEqual({ JWT_SECRET: VALUE });
  });

  it('keeps every one of concurrent writes to different variables, and exports the newest version', async () => {
    const names = ['LLM_API_KEY', 'EMBEDDINGS_API_KEY', 'MARKETPLACE_JWT_TOKEN'];
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        request(t.app)
          .put('/api/secrets/mega-orchestrator')
          .set(auth)
          .send({ values: { [names[i % 3]]: `value-${i}` } }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(answers.map((r) => r.body.result.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    // Each variable holds the value of the last write (by version) that set it: no write undid another.
    const expected = Object.fromEntries(
      names.map((name) => {
        const last = answers.filter((r) => r.body.result.set[0] === name).sort((a, b) => b.body.result.version - a.body.result.version)[0];
        return [name, `value-${answers.indexOf(last)}`];
      }),
    );
    for (const name of names) {
      const revealed = await request(t.app).post('/api/secrets/mega-orchestrator/reveal').set(auth).send({ key: name });
      expect(revealed.body.result).toMatchObject({ value: expected[name], version: 12 });
    }
    expect(parseEnvFile(fs.readFileSync(t.exportFile('mega-orchestrator'), 'utf8'))).toEqual(expected);
  });

  it('audits every reveal and write with who, when and which keys, and logs no value', async () => {
    const entries = t.auditLines();
    const write = entries.find((e) => e.action === 'write' && e.version === 1);
    expect(write).toMatchObject({ actor: 'alice', via: 'api', service: 'security-mcp', keys: ['JWT_SECRET', 'SECURITY_ADMIN_TOKEN'] });
    expect(new Date(write.at).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(entries.find((e) => e.action === 'reveal')).toMatchObject({ service: 'security-mcp', keys: ['JWT_SECRET'] });
    const audit = fs.readFileSync(`${t.dir}/secrets-ui/audit.log`, 'utf8');
    expect(audit).not.toContain(VALUE);
    expect(t.lines.some((l) => l.includes('"action":"reveal"'))).toBe(true);
    for (const line of t.lines) {
      expect(line).not.toContain(VALUE);
      expect(line).not.toContain('second-value-0123456789');
      expect(line).not.toContain(ADMIN);
    }
    const api = await request(t.app).get('/api/audit?limit=2').set(auth);
    expect(api.body.result.entries).toHaveLength(2);
  });

  it('serves the UI only to a signed-in browser, with a strict Content-Security-Policy', async () => {
    const anon = await request(t.app).get('/');
    expect(anon.status).toBe(303);
    expect(anon.headers.location).toBe('/login');
    const login = await request(t.app).get('/login');
    const csp = login.headers['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(login.text).not.toMatch(/<script(?![^>]*src=)/);
    const js = await request(t.app).get('/static/app.js');
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect((await request(t.app).get('/static/../config.ts')).status).toBe(404);
  });

  it('signs in with the admin token: HttpOnly SameSite=Strict cookie, CSRF token needed for writes', async () => {
    const bad = await request(t.app).post('/login').type('form').send({ actor: 'mallory', token: 'wrong' });
    expect(bad.status).toBe(401);
    expect(bad.headers['set-cookie']).toBeUndefined();
    const ok = await request(t.app).post('/login').type('form').send({ actor: 'bob', token: ADMIN });
    expect(ok.status).toBe(303);
    const cookie = ok.headers['set-cookie'][0] as string;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const sid = cookie.split(';')[0];
    const page = await request(t.app).get('/').set('Cookie', sid);
    expect(page.status).toBe(200);
    expect(page.text).toContain('/static/app.js');
    const session = await request(t.app).get('/api/session').set('Cookie', sid);
    expect(session.body.result).toMatchObject({ actor: 'bob', via: 'ui' });
    const csrf = session.body.result.csrfToken as string;
    const body = { values: { ENCRYPTION_KEY: 'a'.repeat(64) } };
    expect((await request(t.app).put('/api/secrets/security-mcp').set('Cookie', sid).send(body)).status).toBe(403);
    expect((await request(t.app).put('/api/secrets/security-mcp').set({ Cookie: sid, 'X-CSRF-Token': 'forged' }).send(body)).status).toBe(
      403,
    );
    const crossSite = await request(t.app)
      .put('/api/secrets/security-mcp')
      .set({ Cookie: sid, 'X-CSRF-Token': csrf, Origin: 'http://evil.example' })
      .send(body);
    expect(crossSite.status).toBe(403);
    const good = await request(t.app).put('/api/secrets/security-mcp').set({ Cookie: sid, 'X-CSRF-Token': csrf }).send(body);
    expect(good.status).toBe(200);
    expect(t.auditLines().at(-1)).toMatchObject({ actor: 'bob', via: 'ui', action: 'write', keys: ['ENCRYPTION_KEY'] });
    const out = await request(t.app).post('/logout').set({ Cookie: sid, 'X-CSRF-Token': csrf });
    expect(out.status).toBe(200);
    expect((await request(t.app).get('/api/session').set('Cookie', sid)).status).toBe(401);
  });
});

describe('secrets-ui brake on wrong tokens', () => {
  const t = makeApp({ LOGIN_MAX_FAILURES: '3' });
  afterAll(() => t.cleanup());

  it('answers RATE_LIMITED with Retry-After after too many wrong tokens, even to the right one', async () => {
    for (let i = 0; i < 3; i++)
      expect((await request(t.app).get('/api/services').set('Authorization', `Bearer wrong-${i}`)).status).toBe(401);
    const limited = await request(t.app).get('/api/services').set('Authorization', `Bearer ${ADMIN}`);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const login = await request(t.app).post('/login').type('form').send({ actor: 'x', token: ADMIN });
    expect(login.status).toBe(429);
    expect(login.headers['retry-after']).toBeDefined();
  });
});

describe('secrets-ui health without a token file', () => {
  const t = makeApp({ VAULT_TOKEN_FILE: '/nonexistent/secrets-ui-token' });
  afterAll(() => t.cleanup());

  it('answers 503 naming the missing token file', async () => {
    const res = await request(t.app).get('/health');
    expect(res.status).toBe(503);
    expect(res.body.checks.token).toMatchObject({ status: 'error', error: expect.stringContaining('/nonexistent/secrets-ui-token') });
  });
});

describe('secrets-ui exports into a per-service folder (compose)', () => {
  const t = makeApp();
  afterAll(() => t.cleanup());

  it('writes <export dir>/<service>/<service>.env when that folder is there, else <service>.env beside the others', async () => {
    // compose mounts security-mcp's own export volume on env/security-mcp (docs/deployment.md, "Compose")
    const folder = path.join(t.dir, 'secrets-ui', 'env', 'security-mcp');
    fs.mkdirSync(folder, { recursive: true });
    const inFolder = path.join(folder, 'security-mcp.env');
    const res = await request(t.app)
      .put('/api/secrets/security-mcp')
      .set(auth)
      .send({ values: { JWT_SECRET: VALUE } });
    expect(res.status).toBe(200);
    expect(res.body.result.exportFile).toBe(inFolder);
    expect(parseEnvFile(fs.readFileSync(inFolder, 'utf8'))).toEqual({ JWT_SECRET: VALUE });
    expect(fs.existsSync(t.exportFile('security-mcp'))).toBe(false);
    expect((await request(t.app).get('/api/secrets/security-mcp').set(auth)).body.result.exportFile).toBe(inFolder);
    // a service without its folder: the flat layout the launcher reads
    const flat = await request(t.app)
      .put('/api/secrets/mega-orchestrator')
      .set(auth)
      .send({ values: { LLM_API_KEY: 'value-0123456789' } });
    expect(flat.body.result.exportFile).toBe(t.exportFile('mega-orchestrator'));
    expect(parseEnvFile(fs.readFileSync(t.exportFile('mega-orchestrator'), 'utf8'))).toEqual({ LLM_API_KEY: 'value-0123456789' });
  });
});
