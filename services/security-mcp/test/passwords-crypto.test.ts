import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import request from 'supertest';
import { captureLogger, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const PASSWORD = 'correct horse battery staple';
const captured = captureLogger('security-mcp');
const { app } = createApp({
  config: configSchema.parse({ ...testConfig, DATA_DIR: '/tmp', BCRYPT_COST: '10', ENCRYPTION_KEY }),
  logger: captured.logger,
  defaultMetrics: false,
});
const responses: string[] = [];

async function call(tool: string, args: Record<string, unknown>) {
  const res = await request(app).post(`/tools/${tool}`).send(args);
  responses.push(res.text);
  return res;
}

describe('password_hash and password_verify', () => {
  it('hashes with the configured cost and verifies right and wrong passwords', async () => {
    const hashed = await call('password_hash', { password: PASSWORD });
    expect(hashed.status).toBe(200);
    expect(hashed.body.result).toMatchObject({ algorithm: 'bcrypt', cost: 10 });
    expect(hashed.body.result.hash).toMatch(/^\$2b\$10\$/);
    const ok = await call('password_verify', { password: PASSWORD, hash: hashed.body.result.hash });
    expect(ok.body.result).toEqual({ valid: true, cost: 10, needsRehash: false });
    const bad = await call('password_verify', { password: 'wrong', hash: hashed.body.result.hash });
    expect(bad.body.result.valid).toBe(false);
  });

  it('takes a higher cost on request and reports old low-cost hashes as needing a rehash', async () => {
    const hashed = await call('password_hash', { password: 'p', cost: 11 });
    expect(hashed.body.result.hash).toMatch(/^\$2b\$11\$/);
    // A cost-4 hash made elsewhere (below our floor) still verifies, and is flagged for rehashing.
    const legacy = bcrypt.hashSync('p', 4);
    const res = await call('password_verify', { password: 'p', hash: legacy });
    expect(res.status).toBe(200);
    expect(res.body.result).toEqual({ valid: true, cost: 4, needsRehash: true });
  });

  it('refuses costs below the floor, passwords bcrypt would cut, and malformed hashes', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['password_hash', { password: 'p', cost: 9 }],
      ['password_hash', { password: 'p', cost: 16 }],
      ['password_hash', { password: 'x'.repeat(73) }],
      ['password_hash', { password: 'é'.repeat(37) }],
      ['password_hash', { password: 'abc\0def' }],
      ['password_hash', { password: '' }],
      ['password_hash', { password: 'p', salt: 'x' }],
      ['password_verify', { password: 'p', hash: 'plain-text' }],
      ['password_verify', { password: 'p', hash: '$2b$31$' + 'a'.repeat(53) }],
      ['password_verify', { password: 'p' }],
    ];
    for (const [tool, args] of cases) {
      const res = await call(tool, args);
      expect({ tool, status: res.status, code: res.body.code }).toEqual({ tool, status: 400, code: 'VALIDATION_ERROR' });
    }
  });
});

describe('encrypt and decrypt', () => {
  it('round-trips with a password and with the configured key, with fresh salt and nonce each time', async () => {
    const a = await call('encrypt', { plaintext: 'top secret ✓', password: PASSWORD });
    const b = await call('encrypt', { plaintext: 'top secret ✓', password: PASSWORD });
    expect(a.body.result).toMatchObject({ algorithm: 'AES-256-GCM', kdf: 'scrypt', format: 'fleet1' });
    expect(a.body.result.ciphertext).toMatch(/^fleet1\.p\./);
    expect(a.body.result.ciphertext).not.toBe(b.body.result.ciphertext);
    const opened = await call('decrypt', { ciphertext: a.body.result.ciphertext, password: PASSWORD });
    expect(opened.body.result).toEqual({ plaintext: 'top secret ✓', encoding: 'utf8' });

    const k = await call('encrypt', { plaintext: 'with key' });
    expect(k.body.result).toMatchObject({ kdf: 'hkdf-sha256' });
    expect(k.body.result.ciphertext).toMatch(/^fleet1\.k\./);
    expect((await call('decrypt', { ciphertext: k.body.result.ciphertext })).body.result.plaintext).toBe('with key');
  });

  it('round-trips binary data as base64', async () => {
    const bytes = randomBytes(300);
    const sealed = await call('encrypt', { plaintext: bytes.toString('base64'), encoding: 'base64' });
    const asText = await call('decrypt', { ciphertext: sealed.body.result.ciphertext });
    expect(asText.status).toBe(400);
    const opened = await call('decrypt', { ciphertext: sealed.body.result.ciphertext, encoding: 'base64' });
    expect(Buffer.from(opened.body.result.plaintext, 'base64').equals(bytes)).toBe(true);
  });

  it('detects a wrong password and every kind of tampering as "authentication failed"', async () => {
    const sealed = (await call('encrypt', { plaintext: 'pay 10 EUR', password: PASSWORD })).body.result.ciphertext as string;
    const wrong = await call('decrypt', { ciphertext: sealed, password: 'not it' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(wrong.body.error).toContain('authentication failed');
    const parts = sealed.split('.');
    const flip = (s: string) => {
      const buf = Buffer.from(s, 'base64url');
      buf[0] ^= 1;
      return buf.toString('base64url');
    };
    for (const index of [2, 3, 4, 5]) {
      const tampered = parts.map((p, i) => (i === index ? flip(p) : p)).join('.');
      const res = await call('decrypt', { ciphertext: tampered, password: PASSWORD });
      expect({ index, status: res.status, error: res.body.error }).toEqual({
        index,
        status: 400,
        error: expect.stringContaining('authentication failed'),
      });
    }
    // Switching the mode letter does not turn a password box into a key box.
    const switched = ['fleet1', 'k', ...parts.slice(2)].join('.');
    expect((await call('decrypt', { ciphertext: switched })).status).toBe(400);
  });

  it('answers bad input and missing configuration with documented codes', async () => {
    const cases: [string, Record<string, unknown>, number, string][] = [
      ['decrypt', { ciphertext: 'garbage' }, 400, 'VALIDATION_ERROR'],
      ['decrypt', { ciphertext: 'fleet1.p.a.b.c.d', password: 'x' }, 400, 'VALIDATION_ERROR'],
      ['encrypt', { plaintext: 'x', encoding: 'base64', password: 'p' }, 200, ''],
      ['encrypt', { plaintext: '***', encoding: 'base64', password: 'p' }, 400, 'VALIDATION_ERROR'],
      ['encrypt', { plaintext: 'x', password: '' }, 400, 'VALIDATION_ERROR'],
      ['encrypt', {}, 400, 'VALIDATION_ERROR'],
    ];
    for (const [tool, args, status, code] of cases) {
      const res = await call(tool, args);
      expect({ tool, args, status: res.status, code: res.body.code ?? '' }).toEqual({ tool, args, status, code });
    }
    const sealed = (await call('encrypt', { plaintext: 'x', password: 'p' })).body.result.ciphertext;
    expect((await call('decrypt', { ciphertext: sealed })).body.details[0].path).toBe('password');

    const keyless = createApp({
      config: configSchema.parse({ ...testConfig, DATA_DIR: '/tmp' }),
      logger: testLogger(),
      defaultMetrics: false,
    });
    const res = await request(keyless.app).post('/tools/encrypt').send({ plaintext: 'x' }).expect(503);
    expect(res.body.code).toBe('NOT_CONFIGURED');
    const withKey = (await call('encrypt', { plaintext: 'x' })).body.result.ciphertext;
    expect((await request(keyless.app).post('/tools/decrypt').send({ ciphertext: withKey })).body.code).toBe('NOT_CONFIGURED');
  });

  it('never puts passwords, plaintext keys or ENCRYPTION_KEY in logs, nor the password in responses', () => {
    expect(captured.lines.length).toBeGreaterThan(0);
    for (const line of captured.lines) {
      expect(line).not.toContain(PASSWORD);
      expect(line).not.toContain(ENCRYPTION_KEY);
    }
    for (const text of responses) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(ENCRYPTION_KEY);
    }
  });
});
