import request from 'supertest';
import { makeApp } from './helpers';

const environment = {
  MCP_NAME: 'fleet',
  MCP_API_TOKEN: 'tok-very-secret',
  MCP_DB_PASSWORD: 'pw-very-secret',
  MCP_SIGNING_KEY: 'key-very-secret',
  MCP_DATABASE_URL: 'postgres://app:url-very-secret@db:5432/app',
  MCP_PORT: '7009',
  MCP_DEBUG: 'yes',
  MCP_MODE: 'production',
  NODE_ENV: 'test',
  LOG_LEVEL: 'info',
  HOME: '/root',
  AWS_SECRET_ACCESS_KEY: 'aws-very-secret',
  SESSION_COOKIE: 'cookie-very-secret',
  CUSTOM_FIELD: 'hidden-by-allowlist',
};

const h = makeApp({ environment, env: { ENV_ALLOWED_PREFIXES: 'MCP_,NODE_ENV,LOG_' } });
afterAll(() => h.close());

const call = (args: unknown) =>
  request(h.app)
    .post('/tools/env_vars')
    .send(args as object);
const noSecrets = (body: unknown) => expect(JSON.stringify(body)).not.toMatch(/very-secret|hidden-by-allowlist/);

describe('env_vars', () => {
  it('lists only allowlisted variables, redacting secret names and URL passwords', async () => {
    const res = await call({ action: 'list' }).expect(200);
    const byName = Object.fromEntries(res.body.result.variables.map((v: { name: string }) => [v.name, v]));
    expect(Object.keys(byName)).toEqual([
      'LOG_LEVEL',
      'MCP_API_TOKEN',
      'MCP_DATABASE_URL',
      'MCP_DB_PASSWORD',
      'MCP_DEBUG',
      'MCP_MODE',
      'MCP_NAME',
      'MCP_PORT',
      'MCP_SIGNING_KEY',
      'NODE_ENV',
    ]);
    expect(byName.MCP_API_TOKEN).toEqual({ name: 'MCP_API_TOKEN', value: '[redacted]', redacted: true });
    expect(byName.MCP_DB_PASSWORD.value).toBe('[redacted]');
    expect(byName.MCP_SIGNING_KEY.value).toBe('[redacted]');
    expect(byName.MCP_DATABASE_URL).toMatchObject({ value: 'postgres://app:[redacted]@db:5432/app', redacted: true });
    expect(byName.MCP_NAME).toEqual({ name: 'MCP_NAME', value: 'fleet', redacted: false });
    noSecrets(res.body);
  });

  it('filters by prefix and paginates', async () => {
    const first = await call({ action: 'list', prefix: 'MCP_', limit: 3 }).expect(200);
    expect(first.body.result.variables.map((v: { name: string }) => v.name)).toEqual([
      'MCP_API_TOKEN',
      'MCP_DATABASE_URL',
      'MCP_DB_PASSWORD',
    ]);
    expect(first.body.result.total).toBe(8);
    const next = await call({ action: 'list', prefix: 'MCP_', limit: 3, cursor: first.body.result.nextCursor }).expect(200);
    expect(next.body.result.variables[0].name).toBe('MCP_DEBUG');
    const none = await call({ action: 'list', prefix: 'HOME' }).expect(200);
    expect(none.body.result.variables).toEqual([]);
  });

  it('gets named variables without revealing ones outside the allowlist', async () => {
    const res = await call({ action: 'get', names: ['MCP_NAME', 'MCP_API_TOKEN', 'MCP_MISSING', 'CUSTOM_FIELD', 'HOME'] }).expect(200);
    expect(res.body.result.variables).toEqual([
      { name: 'MCP_NAME', allowed: true, set: true, value: 'fleet', redacted: false },
      { name: 'MCP_API_TOKEN', allowed: true, set: true, value: '[redacted]', redacted: true },
      { name: 'MCP_MISSING', allowed: true, set: false },
      { name: 'CUSTOM_FIELD', allowed: false },
      { name: 'HOME', allowed: false },
    ]);
    noSecrets(res.body);
  });

  it('validates required variables and rules, reporting each problem without values', async () => {
    const res = await call({
      action: 'validate',
      schema: {
        required: ['MCP_NAME', 'MCP_API_TOKEN', 'MCP_REQUIRED_MISSING', 'AWS_SECRET_ACCESS_KEY'],
        properties: {
          MCP_PORT: { type: 'integer', minimum: 1, maximum: 1000 },
          MCP_DEBUG: { type: 'boolean' },
          MCP_MODE: { enum: ['development', 'staging'] },
          MCP_NAME: { pattern: '^[a-z]+$', minLength: 2 },
          MCP_DATABASE_URL: { format: 'uri' },
          MCP_API_TOKEN: { minLength: 32 },
          NODE_ENV: { type: 'number' },
        },
      },
    }).expect(200);
    expect(res.body.result.valid).toBe(false);
    expect(res.body.result.problems).toEqual([
      { name: 'MCP_API_TOKEN', problem: 'invalid', keyword: 'minLength', message: 'must NOT have fewer than 32 characters' },
      { name: 'MCP_MODE', problem: 'invalid', keyword: 'enum', message: 'must be equal to one of the allowed values' },
      { name: 'MCP_PORT', problem: 'invalid', keyword: 'maximum', message: 'must be <= 1000' },
      { name: 'MCP_REQUIRED_MISSING', problem: 'missing', keyword: 'required', message: 'is not set (or is empty)' },
      { name: 'NODE_ENV', problem: 'invalid', keyword: 'type', message: 'must be a number' },
    ]);
    noSecrets(res.body);

    const ok = await call({ action: 'validate', schema: { required: ['MCP_NAME'], properties: { MCP_PORT: { type: 'integer' } } } }).expect(
      200,
    );
    expect(ok.body.result).toEqual({ valid: true, checked: 2, problems: [] });
  });

  it('refuses value-guessing rules (pattern, enum) on secret or non-allowlisted variables', async () => {
    const secret = await call({ action: 'validate', schema: { properties: { MCP_API_TOKEN: { pattern: '^tok-' } } } }).expect(400);
    expect(secret.body.details[0].path).toBe('schema.properties.MCP_API_TOKEN.pattern');
    const outside = await call({ action: 'validate', schema: { properties: { HOME: { enum: ['/root'] } } } }).expect(400);
    expect(outside.body.code).toBe('VALIDATION_ERROR');
    noSecrets(secret.body);
  });

  it('stops a catastrophic pattern within the time limit and stays responsive', async () => {
    const slow = makeApp({ environment: { MCP_SLOW: `${'a'.repeat(40)}!` }, env: { VALIDATE_TIMEOUT_MS: '300' } });
    try {
      const res = await request(slow.app)
        .post('/tools/env_vars')
        .send({ action: 'validate', schema: { properties: { MCP_SLOW: { pattern: '^(a+)+$' } } } })
        .expect(504);
      expect(res.body.code).toBe('TIMEOUT');
      await request(slow.app).post('/tools/env_vars').send({ action: 'list' }).expect(200);
    } finally {
      await slow.close();
    }
  });

  it('rejects malformed arguments with VALIDATION_ERROR', async () => {
    for (const args of [
      { action: 'get' },
      { action: 'validate' },
      { action: 'list', names: ['A'] },
      { action: 'get', names: ['bad-name'] },
      { action: 'get', names: [] },
      { action: 'list', prefix: 'A*' },
      { action: 'validate', schema: { required: ['A'], extra: true } },
      { action: 'validate', schema: { properties: { MCP_X: { type: 'date' } } } },
      { action: 'validate', schema: { properties: { MCP_NAME: { pattern: '(' } } } },
      { action: 'list', cursor: 'garbage' },
      { action: 'nope' },
    ]) {
      const res = await call(args);
      expect({ args, status: res.status, code: res.body.code }).toEqual({ args, status: 400, code: 'VALIDATION_ERROR' });
    }
  });
});
