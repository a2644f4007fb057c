import { toolCaller } from '@mcp-fleet/testing';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { makeFixture, writeTree, type Fixture } from './helpers';

let fx: Fixture;
const call = (name: string, args: Record<string, unknown>) => toolCaller(fx.service.app)(name, args);

beforeAll(async () => {
  fx = await makeFixture({ FILE_MAX_READ_BYTES: '64', FILE_MAX_WRITE_BYTES: '100' });
  writeTree(fx.rootA, {
    'notes/hello.txt': 'hello world\nsecond line\n',
    'long.txt': 'x'.repeat(200),
    'utf8.txt': 'aé€😀b',
    'image.bin': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff, 0xfe]),
  });
  writeTree(fx.rootB, { 'other.txt': 'from root B' });
  fs.symlinkSync(path.join(fx.rootA, 'notes/hello.txt'), path.join(fx.rootA, 'link-inside.txt'));
  fs.symlinkSync(path.join(fx.rootB, 'other.txt'), path.join(fx.rootA, 'link-to-b.txt'));
  fs.symlinkSync(path.join(fx.outside, 'secret.txt'), path.join(fx.rootA, 'link-outside.txt'));
  fs.symlinkSync(fx.outside, path.join(fx.rootA, 'dir-outside'));
  fs.symlinkSync(path.join(fx.outside, 'not-yet.txt'), path.join(fx.rootA, 'dangling-outside.txt'));
});
afterAll(() => fx.cleanup());

describe('file_read', () => {
  it('reads a text file relative to the first root, with its root and size', async () => {
    const res = await call('file_read', { path: 'notes/hello.txt' }).expect(200);
    expect(res.body.result).toMatchObject({
      path: 'notes/hello.txt',
      root: fx.rootA,
      size: 24,
      encoding: 'utf8',
      content: 'hello world\nsecond line\n',
      bytesRead: 24,
      truncated: false,
      binary: false,
    });
    expect(res.body.result.nextOffset).toBeUndefined();
  });

  it('reads from the second root by absolute path and through the GET route', async () => {
    const abs = await call('file_read', { path: path.join(fx.rootB, 'other.txt') }).expect(200);
    expect(abs.body.result).toMatchObject({ path: 'other.txt', root: fx.rootB, content: 'from root B' });
    const route = await request(fx.service.app)
      .get('/file/notes/hello.txt')
      .query({ encoding: 'base64', offset: 6, length: 5 })
      .expect(200);
    expect(Buffer.from(route.body.result.content, 'base64').toString()).toBe('world');
    expect(route.body.result).toMatchObject({ bytesRead: 5, truncated: false, nextOffset: 11 });
  });

  it('cuts at FILE_MAX_READ_BYTES and at maxBytes with truncated and nextOffset', async () => {
    const capped = await call('file_read', { path: 'long.txt' }).expect(200);
    expect(capped.body.result).toMatchObject({ size: 200, bytesRead: 64, truncated: true, nextOffset: 64 });
    const smaller = await call('file_read', { path: 'long.txt', maxBytes: 10, offset: 195 }).expect(200);
    expect(smaller.body.result).toMatchObject({ bytesRead: 5, truncated: false, content: 'xxxxx' });
    const tooBig = await call('file_read', { path: 'long.txt', maxBytes: 65 }).expect(400);
    expect(tooBig.body.details[0].path).toBe('maxBytes');
    const past = await call('file_read', { path: 'long.txt', offset: 500 }).expect(200);
    expect(past.body.result).toMatchObject({ bytesRead: 0, content: '', truncated: false });
  });

  it('never splits a UTF-8 character when a read is cut', async () => {
    // a(1) é(2) €(3) 😀(4) b(1): a cut after 5 bytes would land inside the emoji
    const res = await call('file_read', { path: 'utf8.txt', length: 8 }).expect(200);
    expect(res.body.result).toMatchObject({ content: 'aé€', bytesRead: 6, nextOffset: 6, truncated: true });
    const rest = await call('file_read', { path: 'utf8.txt', offset: 6 }).expect(200);
    expect(rest.body.result.content).toBe('😀b');
  });

  it('flags binary files read as utf8 and returns exact bytes as base64', async () => {
    const text = await call('file_read', { path: 'image.bin' }).expect(200);
    expect(text.body.result.binary).toBe(true);
    expect(text.body.result.hint).toMatch(/base64/);
    const b64 = await call('file_read', { path: 'image.bin', encoding: 'base64' }).expect(200);
    expect(Buffer.from(b64.body.result.content, 'base64')).toEqual(fs.readFileSync(path.join(fx.rootA, 'image.bin')));
  });

  it('follows symlinks that stay inside the roots, even into another root', async () => {
    const inside = await call('file_read', { path: 'link-inside.txt' }).expect(200);
    expect(inside.body.result).toMatchObject({ path: 'notes/hello.txt', root: fx.rootA });
    const toB = await call('file_read', { path: 'link-to-b.txt' }).expect(200);
    expect(toB.body.result).toMatchObject({ path: 'other.txt', root: fx.rootB, content: 'from root B' });
  });

  it('refuses symlinks, traversal and absolute paths that lead outside', async () => {
    for (const p of [
      'link-outside.txt',
      'dir-outside/secret.txt',
      '../' + path.basename(fx.outside) + '/secret.txt',
      'notes/../../x',
      path.join(fx.outside, 'secret.txt'),
      '/etc/passwd',
    ]) {
      const res = await call('file_read', { path: p }).expect(403);
      expect(res.body).toMatchObject({ success: false, code: 'FORBIDDEN' });
      expect(JSON.stringify(res.body)).not.toContain('TOP SECRET');
    }
  });

  it('rejects NUL bytes, missing files, directories and wrong types with the right codes', async () => {
    const nul = await call('file_read', { path: 'notes/hello.txt\u0000.png' }).expect(400);
    expect(nul.body.code).toBe('VALIDATION_ERROR');
    const missing = await call('file_read', { path: 'nope.txt' }).expect(404);
    expect(missing.body.code).toBe('NOT_FOUND');
    const dir = await call('file_read', { path: 'notes' }).expect(400);
    expect(dir.body.error).toMatch(/file_list/);
    const wrong = await call('file_read', { path: 42, offset: -1 }).expect(400);
    expect(wrong.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['offset', 'path']);
    await call('file_read', { path: 'notes/hello.txt', encoding: 'latin1' }).expect(400);
    await call('file_read', { path: 'notes/hello.txt', extra: true }).expect(400);
  });

  it('refuses to read a FIFO instead of hanging on it', async () => {
    const fifo = path.join(fx.rootA, 'pipe');
    const { spawnSync } = await import('node:child_process');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const res = await call('file_read', { path: 'pipe' }).expect(400);
    expect(res.body.error).toMatch(/not a regular file/);
    fs.rmSync(fifo);
  });
});

describe('file_write', () => {
  const tmpLeftovers = (dir: string) => fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'));

  it('creates, overwrites and appends, atomically and without leftovers', async () => {
    const created = await call('file_write', { path: 'out/new.txt', content: 'one\n', createDirs: true }).expect(200);
    expect(created.body.result).toMatchObject({ path: 'out/new.txt', root: fx.rootA, bytesWritten: 4, created: true, size: 4 });
    const file = path.join(fx.rootA, 'out/new.txt');
    expect(fs.readFileSync(file, 'utf8')).toBe('one\n');
    const appended = await call('file_write', { path: 'out/new.txt', content: 'two\n', mode: 'append' }).expect(200);
    expect(appended.body.result).toMatchObject({ bytesWritten: 4, created: false, size: 8 });
    await call('file_write', { path: 'out/new.txt', content: 'replaced' }).expect(200);
    expect(fs.readFileSync(file, 'utf8')).toBe('replaced');
    expect(tmpLeftovers(path.dirname(file))).toEqual([]);
  });

  it('keeps the permission mode of a file it replaces', async () => {
    const file = path.join(fx.rootA, 'script.sh');
    fs.writeFileSync(file, '#!/bin/sh\n');
    fs.chmodSync(file, 0o751);
    const res = await call('file_write', { path: 'script.sh', content: '#!/bin/sh\necho hi\n' }).expect(200);
    expect(res.body.result.mode).toBe('0751');
    expect(fs.statSync(file).mode & 0o777).toBe(0o751);
  });

  it('writes base64 through POST /file/write and into the second root by absolute path', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const target = path.join(fx.rootB, 'bytes.bin');
    const res = await request(fx.service.app)
      .post('/file/write')
      .send({ path: target, content: bytes.toString('base64'), encoding: 'base64' })
      .expect(200);
    expect(res.body.result).toMatchObject({ path: 'bytes.bin', root: fx.rootB, bytesWritten: 5, created: true });
    expect(fs.readFileSync(target)).toEqual(bytes);
    const bad = await call('file_write', { path: 'x.bin', content: 'not base64!', encoding: 'base64' }).expect(400);
    expect(bad.body.details[0].path).toBe('content');
  });

  it('answers CONFLICT for mode create on an existing file and leaves it alone', async () => {
    const res = await call('file_write', { path: 'notes/hello.txt', content: 'clobber', mode: 'create' }).expect(409);
    expect(res.body.code).toBe('CONFLICT');
    expect(fs.readFileSync(path.join(fx.rootA, 'notes/hello.txt'), 'utf8')).toBe('hello world\nsecond line\n');
  });

  it('refuses directories, missing parents without createDirs, and oversize content', async () => {
    const dir = await call('file_write', { path: 'notes', content: 'x' }).expect(400);
    expect(dir.body.code).toBe('VALIDATION_ERROR');
    await call('file_write', { path: 'notes/', content: 'x' }).expect(400);
    await call('file_write', { path: '.', content: 'x' }).expect(400);
    const noParent = await call('file_write', { path: 'a/b/c.txt', content: 'x' }).expect(404);
    expect(noParent.body.error).toMatch(/createDirs/);
    expect(fs.existsSync(path.join(fx.rootA, 'a'))).toBe(false);
    const underFile = await call('file_write', { path: 'long.txt/child.txt', content: 'x', createDirs: true }).expect(400);
    expect(underFile.body.error).toMatch(/not a directory/);
    const big = await call('file_write', { path: 'big.txt', content: 'y'.repeat(101) }).expect(413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect(fs.existsSync(path.join(fx.rootA, 'big.txt'))).toBe(false);
    await call('file_write', { path: 'fits.txt', content: 'y'.repeat(100) }).expect(200);
    const bigAppend = await call('file_write', { path: 'fits.txt', content: 'z', mode: 'append' }).expect(413);
    expect(bigAppend.body.error).toMatch(/appended file/);
  });

  it('writes through an inside symlink to its target, keeping the link', async () => {
    fs.writeFileSync(path.join(fx.rootA, 'target.txt'), 'old');
    fs.symlinkSync(path.join(fx.rootA, 'target.txt'), path.join(fx.rootA, 'alias.txt'));
    const res = await call('file_write', { path: 'alias.txt', content: 'new' }).expect(200);
    expect(res.body.result.path).toBe('target.txt');
    expect(fs.readFileSync(path.join(fx.rootA, 'target.txt'), 'utf8')).toBe('new');
    expect(fs.lstatSync(path.join(fx.rootA, 'alias.txt')).isSymbolicLink()).toBe(true);
  });

  it('never writes through a symlink out of the roots, live or dangling', async () => {
    for (const p of [
      'link-outside.txt',
      'dir-outside/planted.txt',
      'dangling-outside.txt',
      path.join(fx.outside, 'planted.txt'),
      '../planted.txt',
    ]) {
      const res = await call('file_write', { path: p, content: 'pwned', createDirs: true }).expect(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
    expect(fs.readFileSync(path.join(fx.outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
    expect(fs.readdirSync(fx.outside).sort()).toEqual(['secret.txt']);
    expect(fs.lstatSync(path.join(fx.rootA, 'dangling-outside.txt')).isSymbolicLink()).toBe(true);
  });

  it('does not create directories through a dangling symlink to a missing outside directory', async () => {
    fs.symlinkSync(path.join(fx.outside, 'newdir'), path.join(fx.rootA, 'dangling-dir'));
    const res = await call('file_write', { path: 'dangling-dir/x.txt', content: 'pwned', createDirs: true });
    expect(res.status).toBe(404);
    const deeper = await call('file_write', { path: 'dangling-dir/sub/x.txt', content: 'pwned', createDirs: true });
    expect(deeper.status).toBeGreaterThanOrEqual(400);
    expect(deeper.status).toBeLessThan(500);
    expect(fs.existsSync(path.join(fx.outside, 'newdir'))).toBe(false);
    expect(fs.readdirSync(fx.outside)).toEqual(['secret.txt']);
  });

  it('refuses a dangling symlink inside the roots instead of replacing it', async () => {
    fs.symlinkSync(path.join(fx.rootA, 'missing-target.txt'), path.join(fx.rootA, 'dangling-inside.txt'));
    const res = await call('file_write', { path: 'dangling-inside.txt', content: 'x' }).expect(400);
    expect(res.body.error).toMatch(/symlink to a missing file/);
    expect(fs.lstatSync(path.join(fx.rootA, 'dangling-inside.txt')).isSymbolicLink()).toBe(true);
  });

  it('rejects wrong types and unknown modes with field details', async () => {
    const res = await call('file_write', { path: 'x.txt', content: 5, mode: 'truncate', createDirs: 'yes' }).expect(400);
    expect(res.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['content', 'createDirs', 'mode']);
    await call('file_write', { path: 'x\u0000.txt', content: 'x' }).expect(400);
  });
});
