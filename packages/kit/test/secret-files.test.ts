import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../src/test-support';
import { isSecretFileError, SecretFiles, secretFilesEnvShape } from '../src/secret-files';
import { Workspace } from '../src/workspace';
import { z } from 'zod';

describe('SecretFiles names', () => {
  const policy = new SecretFiles();

  it('matches the default names in any case and exempts templates', () => {
    for (const name of [
      '.env',
      '.ENV',
      '.env.local',
      '.Env.Production',
      'prod.env',
      'id_rsa',
      'ID_ED25519',
      'a.pem',
      'B.Key',
      '.ssh',
      '.npmrc',
    ]) {
      expect({ name, match: policy.matchName(name) !== undefined }).toEqual({ name, match: true });
    }
    for (const name of [
      '.env.example',
      '.env.sample',
      'app.env.template',
      '.env.dist',
      'id_rsa.pub',
      'environment.ts',
      'env',
      'key.txt',
      'notes',
    ]) {
      expect({ name, match: policy.matchName(name) }).toEqual({ name, match: undefined });
    }
    expect(policy.matchName('.env.local')).toBe('.env.*');
  });

  it('checks every segment, so a secret directory hides what is in it', () => {
    expect(policy.matchSegments('a/.env/x.txt')).toMatchObject({ kind: 'name', segment: '.env' });
    expect(policy.matchSegments('home/.ssh/config')).toMatchObject({ segment: '.ssh' });
    expect(policy.matchSegments('src/app.ts')).toBeUndefined();
  });

  it('"default" expands, other patterns replace, allow turns names off', () => {
    const extended = new SecretFiles({ patterns: ['default', '*.secret', '!.env.test'] });
    expect(extended.matchName('x.secret')).toBe('*.secret');
    expect(extended.matchName('.env')).toBe('.env');
    expect(extended.matchName('.env.test')).toBeUndefined();
    const replaced = new SecretFiles({ patterns: ['*.secret'] });
    expect(replaced.matchName('.env')).toBeUndefined();
    expect(new SecretFiles({ allow: true }).matchName('id_rsa')).toBeUndefined();
  });

  it('a leading * matches as the pattern alone would (one group for all of them): whole names, no line break crossed', () => {
    const mixed = new SecretFiles({ patterns: ['*', 'id_*', '*.k?y', '**.pem', '!*.ok'] });
    expect(mixed.matchName('notes')).toBe('*');
    expect(mixed.matchName('id_x')).toBe('*');
    expect(mixed.matchName('x.ok')).toBeUndefined();
    const tails = new SecretFiles({ patterns: ['*.k?y', '**.pem', 'id_*'] });
    expect(tails.matchName('A.KEY')).toBe('*.k?y');
    expect(tails.matchName('a.pem')).toBe('**.pem');
    expect(tails.matchName('id_x')).toBe('id_*');
    expect(tails.matchName('a.pem.txt')).toBeUndefined();
    // . in a pattern never matched a line break, so * does not cross one
    expect(policy.matchName('a\n.pem')).toBeUndefined();
    expect(policy.matchName('x\r.env')).toBeUndefined();
    expect(policy.matchName('.env.\n')).toBeUndefined();
  });

  it('takes pattern characters literally except * and ?', () => {
    const odd = new SecretFiles({ patterns: ['a+b(c).[x]', 'k?y'] });
    expect(odd.matchName('a+b(c).[x]')).toBeDefined();
    expect(odd.matchName('aab(c).[x]')).toBeUndefined();
    expect(odd.matchName('key')).toBe('k?y');
  });

  it('refuses a pattern with a slash in the configuration', () => {
    const schema = z.object(secretFilesEnvShape);
    expect(() => schema.parse({ SECRET_FILES: 'a/b' })).toThrow(/file-name pattern/);
    expect(schema.parse({}).SECRET_FILES).toEqual(['default']);
  });
});

describe('Workspace with protected paths', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(() => {
    tmp = tempDir();
    fs.mkdirSync(path.join(tmp.dir, 'ws', 'data', 'logs'), { recursive: true });
    fs.writeFileSync(path.join(tmp.dir, 'ws', 'data', 'logs', 'a.log'), 'x');
    fs.writeFileSync(path.join(tmp.dir, 'ws', 'data', 'token'), 'x');
  });
  afterAll(() => tmp.cleanup());
  const protectedPaths = () => [{ path: path.join(tmp.dir, 'ws', 'data'), label: 'DATA_DIR' }];

  it('refuses a protected directory inside a root, and what is below it, with a secret-file error', async () => {
    const ws = await Workspace.open([path.join(tmp.dir, 'ws')], { protectedPaths: protectedPaths() });
    for (const p of ['data', 'data/token', 'data/logs/a.log', 'data/new-file']) {
      const err = await ws.resolve(p).catch((e: unknown) => e);
      expect(isSecretFileError(err)).toBe(true);
    }
    expect(ws.isSecretEntry(path.join(tmp.dir, 'ws'), 'data')).toBe(true);
  });

  it('serves a root chosen inside a protected directory (log-mcp reading DATA_DIR/logs)', async () => {
    const ws = await Workspace.open([path.join(tmp.dir, 'ws', 'data', 'logs')], { protectedPaths: protectedPaths() });
    expect((await ws.resolve('a.log', { mustExist: true })).relative).toBe('a.log');
  });
});
