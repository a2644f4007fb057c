import request from 'supertest';
import { SignJWT, decodeJwt } from 'jose';
import { captureLogger, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const JWT_SECRET = 'jwt-secret-for-tests-0123456789abcdef-XYZ';
const ADMIN = 'admin-credential-for-tests-42';
const config = configSchema.parse({
  ...testConfig,
  DATA_DIR: '/tmp',
  JWT_SECRET,
  SECURITY_ADMIN_TOKEN: ADMIN,
  JWT_MAX_TTL_SECONDS: '86400',
});
const captured = captureLogger('security-mcp');
const { app } = createApp({ config, logger: captured.logger, defaultMetrics: false });
const responses: string[] = [];

async function call(tool: string, args: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await request(app).post(`/tools/${tool}`).set(headers).send(args);
  responses.push(res.text);
  return res;
}

const key = new TextEncoder().encode(JWT_SECRET);

describe('security-mcp catalog', () => {
  it('lists its seven tools with zod-generated strict schemas and annotations', async () => {
    const res = await request(app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'decrypt',
      'encrypt',
      'jwt_token',
      'jwt_verify',
      'password_hash',
      'password_verify',
      'ssl_check',
    ]);
    for (const t of res.body.tools) {
      expect(t.inputSchema.additionalProperties).toBe(false);
      expect(typeof t.annotations.readOnlyHint).toBe('boolean');
    }
    const mint = res.body.tools.find((t: { name: string }) => t.name === 'jwt_token');
    expect(mint.inputSchema.properties.ttlSeconds).toMatchObject({ minimum: 60, maximum: 86400, default: 3600 });
    expect(JSON.stringify(res.body)).not.toContain(ADMIN);
  });
});

describe('jwt_token', () => {
  it('mints with the admin credential as a bearer header, with sub, scope, iss, iat, exp and jti', async () => {
    const res = await call(
      'jwt_token',
      { subject: 'ci-runner', scope: 'market:read market:install' },
      { Authorization: `Bearer ${ADMIN}` },
    );
    expect(res.status).toBe(200);
    const { token, claims, expiresIn, tokenType } = res.body.result;
    expect(tokenType).toBe('Bearer');
    expect(expiresIn).toBe(3600);
    const decoded = decodeJwt(token);
    expect(decoded).toMatchObject({ sub: 'ci-runner', scope: 'market:read market:install', iss: 'mcp-fleet' });
    expect(decoded.exp! - decoded.iat!).toBe(3600);
    expect(claims).toMatchObject({ sub: 'ci-runner', exp: decoded.exp, jti: decoded.jti });
  });

  it('mints with admin_token as an argument (the gateway path) and through /tools/call with the header', async () => {
    const arg = await call('jwt_token', {
      subject: 'agent',
      admin_token: ADMIN,
      scope: ['market:read'],
      ttlSeconds: 120,
      audience: 'marketplace',
    });
    expect(arg.status).toBe(200);
    expect(decodeJwt(arg.body.result.token)).toMatchObject({ scope: 'market:read', aud: 'marketplace' });
    const viaCall = await request(app)
      .post('/tools/call')
      .set('Authorization', `Bearer ${ADMIN}`)
      .send({ name: 'jwt_token', arguments: { subject: 'agent2' } });
    expect(viaCall.status).toBe(200);
    expect(decodeJwt(viaCall.body.result.token)).toMatchObject({ sub: 'agent2', scope: 'market:read' });
  });

  it('refuses without, or with a wrong, admin credential (401)', async () => {
    const none = await call('jwt_token', { subject: 'x' });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(none.body.error).toContain('Authorization: Bearer');
    expect((await call('jwt_token', { subject: 'x', admin_token: 'wrong' })).status).toBe(401);
    expect((await call('jwt_token', { subject: 'x' }, { Authorization: 'Bearer wrong-credential' })).status).toBe(401);
    expect((await call('jwt_token', { subject: 'x' }, { Authorization: `Basic ${ADMIN}` })).status).toBe(401);
  });

  it('answers bad arguments with VALIDATION_ERROR', async () => {
    const auth = { Authorization: `Bearer ${ADMIN}` };
    for (const args of [
      {},
      { subject: '' },
      { subject: 'x', ttlSeconds: 10 },
      { subject: 'x', ttlSeconds: 86_401 },
      { subject: 'x', scope: 'bad"scope' },
      { subject: 'x', claims: { exp: 1 } },
      { subject: 'x', claims: { big: 'x'.repeat(5000) } },
      { subject: 'x', unknown: true },
    ]) {
      const res = await call('jwt_token', args, auth);
      expect({ args, status: res.status, code: res.body.code }).toEqual({ args, status: 400, code: 'VALIDATION_ERROR' });
    }
  });
});

describe('jwt_verify', () => {
  let token = '';
  beforeAll(async () => {
    const res = await call('jwt_token', { subject: 'reader', scope: 'market:read', audience: 'marketplace', admin_token: ADMIN });
    token = res.body.result.token;
  });

  it('accepts a token it minted, with scopes and audience, and a Bearer prefix', async () => {
    const res = await call('jwt_verify', { token: `Bearer ${token}`, audience: 'marketplace', requiredScopes: 'market:read' });
    expect(res.body.result).toMatchObject({ valid: true, subject: 'reader', scopes: ['market:read'], algorithm: 'HS256' });
  });

  it('reports missing scopes, wrong audience, expiry, tampering and foreign secrets as results', async () => {
    const scope = await call('jwt_verify', { token, requiredScopes: ['market:admin'] });
    expect(scope.body.result).toMatchObject({ valid: false, reason: 'missing-scope', missingScopes: ['market:admin'] });
    const aud = await call('jwt_verify', { token, audience: 'other' });
    expect(aud.body.result).toMatchObject({ valid: false, reason: 'claim-mismatch' });

    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({ scope: 'market:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('old')
      .setIssuer('mcp-fleet')
      .setIssuedAt(now - 7200)
      .setExpirationTime(now - 3600)
      .sign(key);
    expect((await call('jwt_verify', { token: expired })).body.result).toMatchObject({ valid: false, reason: 'expired' });

    const [h, p, s] = token.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, scope: 'market:admin' })).toString('base64url')}.${s}`;
    expect((await call('jwt_verify', { token: forged })).body.result).toMatchObject({ valid: false, reason: 'bad-signature' });

    const foreign = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x')
      .setIssuer('mcp-fleet')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-another-secret-1234'));
    expect((await call('jwt_verify', { token: foreign })).body.result).toMatchObject({ valid: false, reason: 'bad-signature' });

    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
    expect((await call('jwt_verify', { token: none })).body.result).toMatchObject({ valid: false });
    const hs512 = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS512' })
      .setSubject('x')
      .setIssuer('mcp-fleet')
      .setExpirationTime('1h')
      .sign(key);
    expect((await call('jwt_verify', { token: hs512 })).body.result).toMatchObject({ valid: false, reason: 'wrong-algorithm' });
    expect((await call('jwt_verify', { token: 'not.a.jwt' })).body.result).toMatchObject({ valid: false, reason: 'malformed' });
    const noExp = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('x').setIssuer('mcp-fleet').sign(key);
    expect((await call('jwt_verify', { token: noExp })).body.result).toMatchObject({ valid: false, reason: 'claim-mismatch' });
  });

  it('answers bad arguments with VALIDATION_ERROR', async () => {
    for (const args of [{}, { token: '' }, { token: 'x'.repeat(9000) }, { token, extra: 1 }, { token, audience: [] }]) {
      const res = await call('jwt_verify', args);
      expect({ args: Object.keys(args), status: res.status, code: res.body.code }).toEqual({
        args: Object.keys(args),
        status: 400,
        code: 'VALIDATION_ERROR',
      });
    }
  });
});

describe('without JWT_SECRET or SECURITY_ADMIN_TOKEN', () => {
  it('answers NOT_CONFIGURED instead of minting with a made-up key', async () => {
    const bare = createApp({
      config: configSchema.parse({ ...testConfig, DATA_DIR: '/tmp' }),
      logger: testLogger(),
      defaultMetrics: false,
    });
    const mint = await request(bare.app).post('/tools/jwt_token').send({ subject: 'x', admin_token: ADMIN }).expect(503);
    expect(mint.body.code).toBe('NOT_CONFIGURED');
    await request(bare.app).post('/tools/jwt_verify').send({ token: 'a.b.c' }).expect(503);
    const health = await request(bare.app).get('/health').expect(200);
    expect(health.body.checks.keys.detail).toEqual({
      jwt: 'not configured',
      adminToken: 'not configured',
      encryptionKey: 'not configured',
    });

    const noAdmin = createApp({
      config: configSchema.parse({ ...testConfig, DATA_DIR: '/tmp', JWT_SECRET }),
      logger: testLogger(),
      defaultMetrics: false,
    });
    const res = await request(noAdmin.app).post('/tools/jwt_token').send({ subject: 'x', admin_token: 'anything' }).expect(503);
    expect(res.body.error).toContain('SECURITY_ADMIN_TOKEN');
  });

  it('refuses weak secrets at config time', () => {
    expect(configSchema.safeParse({ ...testConfig, JWT_SECRET: 'short' }).success).toBe(false);
    expect(configSchema.safeParse({ ...testConfig, SECURITY_ADMIN_TOKEN: 'short' }).success).toBe(false);
    expect(configSchema.safeParse({ ...testConfig, BCRYPT_COST: '8' }).success).toBe(false);
    expect(configSchema.safeParse({ ...testConfig, ENCRYPTION_KEY: 'not-32-bytes' }).success).toBe(false);
  });
});

describe('secrets stay secret', () => {
  it('never puts JWT_SECRET or the admin credential in a response or a log line', async () => {
    const health = await request(app).get('/health');
    responses.push(health.text);
    expect(captured.lines.length).toBeGreaterThan(0);
    for (const text of [...responses, ...captured.lines]) {
      expect(text).not.toContain(JWT_SECRET);
      expect(text).not.toContain(ADMIN);
    }
  });
});

describe('admin credential guessing', () => {
  it('refuses every attempt with RATE_LIMITED after 10 wrong credentials in a minute, then recovers', async () => {
    const { AdminGuard } = await import('../src/admin');
    const guard = new AdminGuard(ADMIN, { maxFailures: 10, windowMs: 60_000 });
    const t0 = 1_000_000;
    for (let i = 0; i < 10; i++)
      expect(() => guard.check(`guess-${i}`, 'jwt_token', t0 + i)).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
    expect(() => guard.check(ADMIN, 'jwt_token', t0 + 20)).toThrow(expect.objectContaining({ code: 'RATE_LIMITED', retryAfter: 60 }));
    expect(() => guard.check(ADMIN, 'jwt_token', t0 + 60_001)).not.toThrow();
  });

  it('answers 429 with Retry-After over HTTP once the limit is reached', async () => {
    const own = createApp({ config, logger: testLogger(), defaultMetrics: false }).app;
    for (let i = 0; i < 10; i++) {
      await request(own).post('/tools/jwt_token').set('Authorization', `Bearer wrong-${i}`).send({ subject: 'x' }).expect(401);
    }
    const limited = await request(own).post('/tools/jwt_token').set('Authorization', `Bearer ${ADMIN}`).send({ subject: 'x' }).expect(429);
    expect(limited.body.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.text).not.toContain(ADMIN);
  });
});
