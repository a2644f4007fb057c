import request from 'supertest';
import { makeApp } from './helpers';

const h = makeApp({ env: { VALIDATE_TIMEOUT_MS: '3000' } });
afterAll(() => h.close());

const call = (args: unknown) =>
  request(h.app)
    .post('/tools/validate')
    .send(args as object);

const schema = {
  type: 'object',
  required: ['name', 'port', 'server'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 3 },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    email: { type: 'string', format: 'email' },
    server: {
      type: 'object',
      properties: { hosts: { type: 'array', items: { type: 'string', format: 'hostname' } } },
    },
  },
};

describe('validate', () => {
  it('accepts a valid config', async () => {
    const res = await call({ config: { name: 'fleet', port: 7009, server: { hosts: ['a.example'] } }, schema }).expect(200);
    expect(res.body.result).toEqual({ valid: true, draft: '2020-12', errorCount: 0, errors: [] });
  });

  it('reports every error with its JSON pointer, keyword and params', async () => {
    const res = await call({
      config: { name: 'x', port: 70000, email: 'nope', extra: 1, server: { hosts: ['ok', 'bad host!'] } },
      schema,
    }).expect(200);
    const { result } = res.body;
    expect(result.valid).toBe(false);
    const found = result.errors.map((e: { path: string; keyword: string }) => `${e.path || '(root)'} ${e.keyword}`).sort();
    expect(found).toEqual(['(root) additionalProperties', '/email format', '/name minLength', '/port maximum', '/server/hosts/1 format']);
    expect(result.errors.find((e: { keyword: string }) => e.keyword === 'additionalProperties')).toMatchObject({
      path: '',
      params: { additionalProperty: 'extra' },
      schemaPath: '#/additionalProperties',
    });
    expect(result.errorCount).toBe(5);
  });

  it('locates errors by line and column in YAML and JSON files, and reads TOML and .env files', async () => {
    h.write('cfg.yaml', 'name: fleet\nport: 0\nserver:\n  hosts:\n    - good.example\n    - "not a host"\n');
    const res = await call({ path: 'cfg.yaml', schema }).expect(200);
    expect(res.body.result).toMatchObject({ valid: false, path: 'cfg.yaml', format: 'yaml' });
    const byPath = Object.fromEntries(res.body.result.errors.map((e: { path: string }) => [e.path, e]));
    expect(byPath['/port']).toMatchObject({ keyword: 'minimum', line: 2, column: 7 });
    expect(byPath['/server/hosts/1']).toMatchObject({ keyword: 'format', line: 6, column: 7 });

    h.write('cfg.json', '{\n  "name": "fleet",\n  "port": "7009",\n  "server": {}\n}\n');
    const json = await call({ path: 'cfg.json', schema }).expect(200);
    expect(json.body.result.errors).toEqual([expect.objectContaining({ path: '/port', keyword: 'type', line: 3, column: 11 })]);

    h.write('cfg.toml', 'name = "fleet"\nport = 7009\n[server]\nhosts = ["a.example"]\n');
    expect((await call({ path: 'cfg.toml', schema }).expect(200)).body.result.valid).toBe(true);

    h.write('app.env.example', 'PORT=abc\n');
    const env = await call({
      path: 'app.env.example',
      format: 'env',
      schema: { type: 'object', properties: { PORT: { type: 'string', pattern: '^[0-9]+$' } } },
    }).expect(200);
    expect(env.body.result.errors[0]).toMatchObject({ path: '/PORT', keyword: 'pattern' });
  });

  it('loads the schema from a workspace file and honours draft-07', async () => {
    h.write(
      'schema.yaml',
      '$schema: http://json-schema.org/draft-07/schema#\ntype: object\nrequired: [name]\ndefinitions:\n  n: {type: string}\nproperties:\n  name: {$ref: "#/definitions/n"}\n',
    );
    const res = await call({ config: { name: 5 }, schema_path: 'schema.yaml' }).expect(200);
    expect(res.body.result).toMatchObject({ valid: false, draft: '07', errors: [{ path: '/name', keyword: 'type' }] });
  });

  it('caps the number of errors and says truncated', async () => {
    const res = await call({
      config: Array.from({ length: 50 }, (_, i) => i),
      schema: { type: 'array', items: { type: 'string' } },
      maxErrors: 10,
    }).expect(200);
    expect(res.body.result).toMatchObject({ valid: false, errorCount: 50, truncated: true });
    expect(res.body.result.errors).toHaveLength(10);
  });

  it('answers schemas that do not compile or cannot be resolved with VALIDATION_ERROR', async () => {
    const bad = await call({ config: {}, schema: { type: 'object', properties: { a: { type: 'nonsense' } } } }).expect(400);
    expect(bad.body.error).toMatch(/does not compile/);
    await call({ config: {}, schema: { $ref: 'https://example.com/remote.json' } }).expect(400);
    await call({ config: {}, schema: { $schema: 'http://json-schema.org/draft-04/schema#' } }).expect(400);
    await call({ config: {}, schema: { properties: { a: { pattern: '(' } } } }).expect(400);
  });

  it('stops a catastrophic pattern and keeps answering', async () => {
    const started = Date.now();
    const res = await call({ config: { a: `${'a'.repeat(40)}!` }, schema: { properties: { a: { pattern: '^(a+)+$' } } } }).expect(504);
    expect(res.body.code).toBe('TIMEOUT');
    expect(Date.now() - started).toBeLessThan(5000);
    await call({ config: { a: 'aaa' }, schema: { properties: { a: { pattern: '^(a+)+$' } } } }).expect(200);
  });

  it('refuses more than four concurrent validations with RATE_LIMITED', async () => {
    const slow = { config: { a: `${'a'.repeat(40)}!` }, schema: { properties: { a: { pattern: '^(a+)+$' } } } };
    const results = await Promise.all(Array.from({ length: 5 }, () => call(slow)));
    expect(results.map((r) => r.status).sort()).toEqual([429, 504, 504, 504, 504]);
    expect(results.find((r) => r.status === 429)!.body.code).toBe('RATE_LIMITED');
    await call({ config: {}, schema: { type: 'object' } }).expect(200);
  });

  it('rejects malformed arguments and unsafe paths', async () => {
    await call({ schema }).expect(400);
    await call({ config: {} }).expect(400);
    await call({ config: {}, path: 'cfg.yaml', schema }).expect(400);
    await call({ config: {}, schema, schema_path: 'schema.yaml' }).expect(400);
    await call({ config: {}, schema: 'not a schema' }).expect(400);
    await call({ config: {}, schema, maxErrors: 0 }).expect(400);
    await call({ path: '../../etc/passwd', schema }).expect(403);
    await call({ config: {}, schema_path: '/etc/hostname' }).expect(403);
    await call({ path: 'missing.yaml', schema }).expect(404);
    h.write('broken.yaml', 'a: [1, 2\n');
    const broken = await call({ path: 'broken.yaml', schema }).expect(400);
    expect(broken.body.details[0].line).toBeGreaterThan(0);
  });
});
