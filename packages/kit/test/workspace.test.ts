import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../src/test-support';
import type { AppError } from '../src';
import { atomicWrite, Workspace } from '../src/workspace';

let tmp: ReturnType<typeof tempDir>;
let root: string;
let second: string;
let ws: Workspace;

beforeAll(async () => {
  tmp = tempDir();
  root = path.join(tmp.dir, 'root');
  second = path.join(tmp.dir, 'second');
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
  fs.mkdirSync(second);
  fs.mkdirSync(path.join(tmp.dir, 'outside'));
  fs.writeFileSync(path.join(tmp.dir, 'outside', 'secret'), 's');
  fs.writeFileSync(path.join(root, 'sub', 'a.txt'), 'a');
  fs.symlinkSync(path.join(tmp.dir, 'outside'), path.join(root, 'link-out'));
  fs.symlinkSync(path.join(root, 'sub'), path.join(root, 'link-in'));
  ws = await Workspace.open([root, second]);
});
afterAll(() => tmp.cleanup());

const code = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return (err as AppError).code;
  }
};

describe('Workspace', () => {
  it('resolves relative paths against the first root and absolute paths in any root', async () => {
    expect((await ws.resolve('sub/a.txt')).absolute).toBe(path.join(root, 'sub', 'a.txt'));
    const inSecond = await ws.resolve(path.join(second, 'new.txt'));
    expect(inSecond).toMatchObject({ root: second, relative: 'new.txt', exists: false });
    expect((await ws.resolve('')).relative).toBe('');
  });

  it('follows symlinks that stay inside and refuses those that lead out', async () => {
    expect((await ws.resolve('link-in/a.txt')).absolute).toBe(path.join(root, 'sub', 'a.txt'));
    expect(await code(ws.resolve('link-out/secret'))).toBe('FORBIDDEN');
    expect(await code(ws.resolve('link-out/new-file'))).toBe('FORBIDDEN');
  });

  it('refuses .., NUL bytes and absolute paths outside the roots with distinct codes', async () => {
    expect(await code(ws.resolve('../outside/secret'))).toBe('FORBIDDEN');
    expect(await code(ws.resolve('sub/../../outside'))).toBe('FORBIDDEN');
    expect(await code(ws.resolve('sub\\..\\..\\outside'))).toBe('FORBIDDEN');
    expect(await code(ws.resolve('sub/a.txt\0.png'))).toBe('VALIDATION_ERROR');
    expect(await code(ws.resolve('/etc/passwd'))).toBe('FORBIDDEN');
    expect(await code(ws.resolve(root + '-sibling/x'))).toBe('FORBIDDEN');
    expect(await code(ws.resolve('missing.txt', { mustExist: true }))).toBe('NOT_FOUND');
  });

  it('refuses to open a root that does not exist, naming it', async () => {
    await expect(Workspace.open([path.join(tmp.dir, 'nope')])).rejects.toThrow(/nope.*WORKSPACE_ROOTS/);
  });
});

describe('atomicWrite', () => {
  it('replaces the file whole, keeps its mode and leaves no temporary files', async () => {
    const file = path.join(root, 'sub', 'mode.txt');
    fs.writeFileSync(file, 'old', { mode: 0o600 });
    await atomicWrite(file, 'new content');
    expect(fs.readFileSync(file, 'utf8')).toBe('new content');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.join(root, 'sub')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('atomicWrite exclusive', () => {
  it('creates a new file but refuses to replace an existing one, leaving no temporary file', async () => {
    const file = path.join(root, 'sub', 'exclusive.txt');
    await atomicWrite(file, 'first', { exclusive: true });
    await expect(atomicWrite(file, 'second', { exclusive: true })).rejects.toMatchObject({ code: 'EEXIST' });
    expect(fs.readFileSync(file, 'utf8')).toBe('first');
    expect(fs.readdirSync(path.join(root, 'sub')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
