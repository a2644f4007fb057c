import fs from 'node:fs';
import path from 'node:path';
import dotenv from 'dotenv';
import request from 'supertest';
import { parse as parseToml } from 'smol-toml';
import YAML from 'yaml';
import { makeApp } from './helpers';

const h = makeApp({ env: { CONFIG_MAX_BYTES: '2048' } });
afterAll(() => h.close());

const call = (args: unknown) =>
  request(h.app)
    .post('/tools/config_file')
    .send(args as object);

describe('config_file read', () => {
  it('reads JSON, YAML, TOML and .env files by extension and redacts secrets', async () => {
    h.write(
      'app.json',
      JSON.stringify({ name: 'svc', db: { url: 'postgres://app:s3cr3t-pw@db:5432/x', password: 'hunter2' }, apiKey: 'k-123' }),
    );
    h.write('app.yaml', 'name: svc\nport: 8080\nsettings:\n  token: tok-abc\nlist: [1, 2]\n');
    h.write('app.toml', 'name = "svc"\n[server]\nport = 8080\nstarted = 1979-05-27T07:32:00Z\nclient_secret = "cs-999"\n');
    h.write('.env.example', 'NAME=svc\nDB_PASSWORD="pw with space"\nPORT=80\n');

    const json = await call({ action: 'read', path: 'app.json' }).expect(200);
    expect(json.body.result).toMatchObject({
      path: 'app.json',
      format: 'json',
      data: { name: 'svc', db: { url: 'postgres://app:[redacted]@db:5432/x', password: '[redacted]' }, apiKey: '[redacted]' },
    });
    expect(json.body.result.redactedPaths.sort()).toEqual(['/apiKey', '/db/password', '/db/url']);
    expect(JSON.stringify(json.body)).not.toMatch(/hunter2|s3cr3t-pw|k-123/);

    const yaml = await call({ action: 'read', path: 'app.yaml' }).expect(200);
    expect(yaml.body.result.data).toEqual({ name: 'svc', port: 8080, settings: { token: '[redacted]' }, list: [1, 2] });

    const toml = await call({ action: 'read', path: 'app.toml' }).expect(200);
    expect(toml.body.result.data).toEqual({
      name: 'svc',
      server: { port: 8080, started: '1979-05-27T07:32:00.000Z', client_secret: '[redacted]' },
    });

    const env = await call({ action: 'read', path: '.env.example' }).expect(200);
    expect(env.body.result).toMatchObject({ format: 'env', data: { NAME: 'svc', DB_PASSWORD: '[redacted]', PORT: '80' } });
  });

  it('refuses secret files (.env, *.env) unless ALLOW_SECRET_FILES=1, which reads them redacted', async () => {
    h.write('.env', 'NAME=svc\nDB_PASSWORD=pw\n');
    const refused = await call({ action: 'read', path: '.env' }).expect(403);
    expect(refused.body.error).toMatch(/secret file.*ALLOW_SECRET_FILES/);
    await call({ action: 'convert', path: 'app.json', output_path: 'prod.env' }).expect(403);
    expect(fs.existsSync(path.join(h.workspace, 'prod.env'))).toBe(false);

    const open = makeApp({ env: { ALLOW_SECRET_FILES: '1' } });
    try {
      open.write('.env', 'NAME=svc\nDB_PASSWORD=pw\n');
      const res = await request(open.app).post('/tools/config_file').send({ action: 'read', path: '.env' }).expect(200);
      expect(res.body.result.data).toEqual({ NAME: 'svc', DB_PASSWORD: '[redacted]' });
    } finally {
      await open.close();
    }
  });

  it('redacts a whole object held under a secret-looking key', async () => {
    const res = await call({ action: 'read', content: '{"credentials": {"user": "u", "pass": "p4ss"}}', from: 'json' }).expect(200);
    expect(res.body.result.data).toEqual({ credentials: '[redacted]' });
  });

  it('locates parse errors by line and column without quoting the input', async () => {
    const bad = await call({ action: 'read', content: '{\n  "a": 1,\n  "password": "hunter2" x\n}', from: 'json' }).expect(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
    expect(bad.body.details[0]).toMatchObject({ line: 3, column: 25 });
    expect(JSON.stringify(bad.body)).not.toContain('hunter2');

    const yaml = await call({ action: 'read', content: 'a: 1\nsecret: b: c\n', from: 'yaml' }).expect(400);
    expect(yaml.body.details[0]).toMatchObject({ line: 2 });
    expect(yaml.body.error).toMatch(/line 2/);
    expect(JSON.stringify(yaml.body)).not.toContain('b: c');

    const toml = await call({ action: 'read', content: 'a = 1\ntoken = = "t0k"\n', from: 'toml' }).expect(400);
    expect(toml.body.details[0]).toMatchObject({ line: 2 });
    expect(JSON.stringify(toml.body)).not.toContain('t0k');

    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 12; i++)
      bomb.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [*${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}, *${String.fromCharCode(96 + i)}]`,
      );
    const expanded = await call({ action: 'read', content: bomb.join('\n'), from: 'yaml' }).expect(400);
    expect(expanded.body.code).toBe('VALIDATION_ERROR');

    const dup = await call({ action: 'read', content: 'a: 1\na: 2\n', from: 'yaml' }).expect(400);
    expect(dup.body.details[0].code).toBe('DUPLICATE_KEY');
  });
});

describe('config_file convert', () => {
  const data = {
    name: 'fleet',
    port: 7009,
    enabled: true,
    ratio: 0.5,
    tags: ['a', 'b'],
    server: { host: '127.0.0.1', limits: { rps: 100, burst: 20 } },
    routes: [
      { path: '/a', weight: 1 },
      { path: '/b', weight: 2 },
    ],
  };

  it('round-trips JSON -> YAML -> TOML -> JSON without loss', async () => {
    const yaml = await call({ action: 'convert', content: JSON.stringify(data), from: 'json', to: 'yaml' }).expect(200);
    expect(YAML.parse(yaml.body.result.content)).toEqual(data);
    const toml = await call({ action: 'convert', content: yaml.body.result.content, from: 'yaml', to: 'toml' }).expect(200);
    expect(parseToml(toml.body.result.content)).toEqual(data);
    const json = await call({ action: 'convert', content: toml.body.result.content, from: 'toml', to: 'json' }).expect(200);
    expect(JSON.parse(json.body.result.content)).toEqual(data);
  });

  it('writes .env with quoting that dotenv reads back exactly, flattening nested keys with __', async () => {
    const values = {
      PLAIN: 'abc',
      SPACES: '  padded value  ',
      HASH: 'a#b # not a comment',
      SINGLE: "it's",
      BOTH: `it's "quoted"`,
      MULTI: 'line1\nline2',
      DOLLAR: '$HOME and ${X}',
      EQUALS: 'a=b=c',
      EMPTY: '',
      CR: 'a\r\nb',
    };
    const res = await call({
      action: 'convert',
      content: JSON.stringify({ ...values, nested: { deep: { leaf: 'v' } }, list: ['x', 'y'] }),
      from: 'json',
      to: 'env',
    }).expect(200);
    const parsed = dotenv.parse(res.body.result.content);
    expect(parsed).toEqual({ ...values, nested__deep__leaf: 'v', list__0: 'x', list__1: 'y' });

    const back = await call({ action: 'convert', content: res.body.result.content, from: 'env', to: 'json', unflatten: true }).expect(200);
    expect(JSON.parse(back.body.result.content)).toMatchObject({ nested: { deep: { leaf: 'v' } }, list: { '0': 'x', '1': 'y' } });
  });

  it('refuses data a format cannot hold, naming where', async () => {
    const nul = await call({ action: 'convert', content: '{"a": {"b": null}}', from: 'json', to: 'toml' }).expect(400);
    expect(nul.body.details[0]).toMatchObject({ path: '/a/b' });
    const top = await call({ action: 'convert', content: '[1,2]', from: 'json', to: 'env' }).expect(400);
    expect(top.body.code).toBe('VALIDATION_ERROR');
    const key = await call({ action: 'convert', content: '{"bad key": 1}', from: 'json', to: 'env' }).expect(400);
    expect(key.body.details[0].path).toBe('/bad key');
    const quotes = await call({ action: 'convert', content: JSON.stringify({ Q: `'"\`` }), from: 'json', to: 'env' }).expect(400);
    expect(quotes.body.details[0].path).toBe('Q');
  });

  it('redacts secrets in returned content but writes real values to output_path, refusing to overwrite', async () => {
    h.write('secrets.yaml', 'db:\n  password: "p@ss word"\n  host: db\n');
    const shown = await call({ action: 'convert', path: 'secrets.yaml', to: 'json' }).expect(200);
    expect(JSON.parse(shown.body.result.content)).toEqual({ db: { password: '[redacted]', host: 'db' } });

    const written = await call({ action: 'convert', path: 'secrets.yaml', output_path: 'out/secrets.toml' });
    expect(written.status).toBe(404); // the directory does not exist
    fs.mkdirSync(path.join(h.workspace, 'out'));
    const ok = await call({ action: 'convert', path: 'secrets.yaml', output_path: 'out/secrets.toml' }).expect(200);
    expect(ok.body.result).toMatchObject({ from: 'yaml', to: 'toml', written: 'out/secrets.toml' });
    expect(ok.body.result.content).toBeUndefined();
    expect(JSON.stringify(ok.body)).not.toContain('p@ss word');
    expect(parseToml(h.read('out/secrets.toml'))).toEqual({ db: { password: 'p@ss word', host: 'db' } });

    const again = await call({ action: 'convert', path: 'secrets.yaml', output_path: 'out/secrets.toml' }).expect(409);
    expect(again.body.code).toBe('CONFLICT');
    await call({ action: 'convert', path: 'secrets.yaml', to: 'env', output_path: 'out/secrets.toml', overwrite: true }).expect(200);
    expect(dotenv.parse(h.read('out/secrets.toml'))).toEqual({ db__password: 'p@ss word', db__host: 'db' });
    await call({ action: 'convert', path: 'secrets.yaml', to: 'json', output_path: 'out' }).expect(400);
  });
});

describe('config_file confinement and bad input', () => {
  it('refuses paths outside the workspace, including through symlinks', async () => {
    const outside = path.join(h.tmp, 'outside.json');
    fs.writeFileSync(outside, '{"password":"leak"}');
    fs.symlinkSync(outside, path.join(h.workspace, 'link.json'));
    for (const p of ['../outside.json', outside, '/etc/passwd', 'link.json']) {
      const res = await call({ action: 'read', path: p, from: 'json' }).expect(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
    const write = await call({ action: 'convert', content: '{}', from: 'json', output_path: '../evil.json' }).expect(403);
    expect(write.body.code).toBe('FORBIDDEN');
    expect(fs.existsSync(path.join(h.tmp, 'evil.json'))).toBe(false);
  });

  it('answers missing files, directories, oversized files and unknown formats with documented codes', async () => {
    await call({ action: 'read', path: 'nope.json' }).expect(404);
    fs.mkdirSync(path.join(h.workspace, 'dir.json'));
    await call({ action: 'read', path: 'dir.json' }).expect(400);
    h.write('big.json', JSON.stringify({ x: 'y'.repeat(3000) }));
    const big = await call({ action: 'read', path: 'big.json' }).expect(413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');
    await call({ action: 'read', content: 'x'.repeat(3000), from: 'env' }).expect(413);
    h.write('notes.txt', 'a=1');
    const unknown = await call({ action: 'read', path: 'notes.txt' }).expect(400);
    expect(unknown.body.error).toMatch(/format/);
    await call({ action: 'read', path: 'notes.txt', from: 'env' }).expect(200);
  });

  it('rejects malformed arguments', async () => {
    const cases: unknown[] = [
      {},
      { action: 'delete', path: 'a.json' },
      { action: 'read' },
      { action: 'read', path: 'a.json', content: '{}' },
      { action: 'read', content: '{}' },
      { action: 'read', path: 'a.json', to: 'yaml' },
      { action: 'convert', content: '{}', from: 'json' },
      { action: 'convert', content: '{}', from: 'json', to: 'xml' },
      { action: 'read', path: 'a.json', extra: 1 },
      { action: 'read', path: 'a\u0000.json' },
      { action: 'read', path: 42 },
    ];
    for (const args of cases) {
      const res = await call(args);
      expect([400, 403]).toContain(res.status);
      expect(res.body.success).toBe(false);
    }
  });
});
