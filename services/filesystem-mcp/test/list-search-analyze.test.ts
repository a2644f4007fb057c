import { toolCaller } from '@mcp-fleet/testing';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { makeFixture, writeTree, type Fixture } from './helpers';

let fx: Fixture;
const call = (name: string, args: Record<string, unknown>) => toolCaller(fx.service.app)(name, args);
const names = (entries: { path: string }[]) => entries.map((e) => e.path);

beforeAll(async () => {
  fx = await makeFixture({
    FILE_LIST_MAX_ENTRIES: '12',
    FILE_SEARCH_MAX_FILES: '15',
    FILE_ANALYZE_MAX_ENTRIES: '14',
    FILE_SEARCH_MAX_FILE_BYTES: '100',
  });
  writeTree(fx.rootA, {
    'README.md': '# Title\nSome words here\n',
    'src/index.ts': 'export const answer = 42;\n// TODO: more\n',
    'src/util.ts': 'export function todo() {}\n',
    'src/deep/a/b/c.ts': 'deep\n',
    'src/readme.txt': 'nothing\n',
    '.hidden/secret.ts': 'hidden TODO\n',
    '.hidden/notes.md': 'hidden notes\n',
    'big.log': 'TODO '.repeat(40),
    'blob.bin': Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0x00, 0x01]),
  });
  writeTree(fx.rootB, { 'b.ts': 'todo in B\n' });
  fs.symlinkSync(fx.outside, path.join(fx.rootA, 'escape'));
  fs.symlinkSync(path.join(fx.rootA, 'src'), path.join(fx.rootA, 'src-link'));
});
afterAll(() => fx.cleanup());

describe('file_list', () => {
  it('lists the first root by default: sorted, hidden names skipped, symlinks not followed', async () => {
    const res = await call('file_list', {}).expect(200);
    const r = res.body.result;
    expect(r).toMatchObject({ path: '.', root: fx.rootA, truncated: false });
    expect(names(r.entries)).toEqual(['README.md', 'big.log', 'blob.bin', 'escape', 'src', 'src-link']);
    const readme = r.entries.find((e: { name: string }) => e.name === 'README.md');
    expect(readme).toMatchObject({ type: 'file', size: 24 });
    expect(new Date(readme.modifiedAt).getTime()).toBeGreaterThan(0);
    expect(r.entries.find((e: { name: string }) => e.name === 'src')).toMatchObject({ type: 'directory', size: null });
    expect(r.entries.find((e: { name: string }) => e.name === 'escape')).toEqual(
      expect.objectContaining({ type: 'symlink', targetStatus: 'outside' }),
    );
    expect(JSON.stringify(r)).not.toContain(fx.outside);
    expect(r.entries.find((e: { name: string }) => e.name === 'src-link')).toMatchObject({
      type: 'symlink',
      targetStatus: 'inside',
      target: path.join(fx.rootA, 'src'),
    });
  });

  it('lists recursively to maxDepth, with hidden entries on request', async () => {
    const shallow = await call('file_list', { path: 'src', recursive: true, maxDepth: 2 }).expect(200);
    expect(names(shallow.body.result.entries)).toEqual(['src/deep', 'src/deep/a', 'src/index.ts', 'src/readme.txt', 'src/util.ts']);
    const hidden = await call('file_list', { includeHidden: true }).expect(200);
    expect(names(hidden.body.result.entries)).toContain('.hidden');
  });

  it('paginates with limit and cursor', async () => {
    const first = await call('file_list', { limit: 4 }).expect(200);
    expect(first.body.result.entries).toHaveLength(4);
    expect(first.body.result.total).toBe(6);
    const second = await call('file_list', { limit: 4, cursor: first.body.result.nextCursor }).expect(200);
    expect(names(second.body.result.entries)).toEqual(['src', 'src-link']);
    expect(second.body.result.nextCursor).toBeUndefined();
    const bad = await call('file_list', { cursor: 'garbage' }).expect(400);
    expect(bad.body.details[0].path).toBe('cursor');
  });

  it('stops at FILE_LIST_MAX_ENTRIES and says truncated', async () => {
    const res = await call('file_list', { recursive: true, maxDepth: 10, includeHidden: true, limit: 500 }).expect(200);
    expect(res.body.result.entries).toHaveLength(12);
    expect(res.body.result.truncated).toBe(true);
  });

  it('lists the second root by absolute path and through GET /files routes', async () => {
    const abs = await request(fx.service.app).get(`/files/${fx.rootB}`).expect(200);
    expect(abs.body.result).toMatchObject({ root: fx.rootB, path: '.' });
    expect(names(abs.body.result.entries)).toEqual(['b.ts']);
    const sub = await request(fx.service.app).get('/files/src').query({ recursive: 'true', maxDepth: '1', limit: '2' }).expect(200);
    expect(names(sub.body.result.entries)).toEqual(['src/deep', 'src/index.ts']);
    expect(sub.body.result.nextCursor).toEqual(expect.any(String));
    const bare = await request(fx.service.app).get('/files').expect(200);
    expect(bare.body.result.path).toBe('.');
  });

  it('refuses files, symlinked directories outside, traversal and bad arguments', async () => {
    const file = await call('file_list', { path: 'README.md' }).expect(400);
    expect(file.body.error).toMatch(/file_read/);
    await call('file_list', { path: 'escape' }).expect(403);
    await call('file_list', { path: '..' }).expect(403);
    await call('file_list', { path: fx.outside }).expect(403);
    await call('file_list', { path: 'missing' }).expect(404);
    const wrong = await call('file_list', { maxDepth: 11, recursive: 'yes', limit: 0 }).expect(400);
    expect(wrong.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['limit', 'maxDepth', 'recursive']);
  });
});

describe('file_search', () => {
  it('finds files by name glob, not entering symlinked directories', async () => {
    const res = await call('file_search', { name: '*.ts' }).expect(200);
    expect(res.body.result.matches.map((m: { path: string }) => m.path)).toEqual(['src/deep/a/b/c.ts', 'src/index.ts', 'src/util.ts']);
    expect(res.body.result.truncated).toBe(false);
    const withPath = await call('file_search', { name: 'src/**/*.ts' }).expect(200);
    expect(withPath.body.result.matches).toHaveLength(3);
    const hidden = await call('file_search', { name: '*.ts', includeHidden: true }).expect(200);
    expect(hidden.body.result.matches.map((m: { path: string }) => m.path)).toContain('.hidden/secret.ts');
    const caseless = await call('file_search', { name: 'readme*' }).expect(200);
    expect(caseless.body.result.matches.map((m: { path: string }) => m.path)).toEqual(['README.md', 'src/readme.txt']);
    const exact = await call('file_search', { name: 'readme*', caseSensitive: true }).expect(200);
    expect(exact.body.result.matches.map((m: { path: string }) => m.path)).toEqual(['src/readme.txt']);
  });

  it('finds content with line numbers and previews, skipping binary and oversize files', async () => {
    const res = await call('file_search', { content: 'todo' }).expect(200);
    const r = res.body.result;
    expect(r.matches).toEqual([
      { path: 'src/index.ts', type: 'file', line: 2, preview: '// TODO: more' },
      { path: 'src/util.ts', type: 'file', line: 1, preview: 'export function todo() {}' },
    ]);
    expect(r.skippedLarge).toBe(1); // big.log is 200 bytes, over FILE_SEARCH_MAX_FILE_BYTES=100
    expect(r.skippedBinary).toBe(1);
    const sensitive = await call('file_search', { content: 'TODO', caseSensitive: true, name: '*.ts' }).expect(200);
    expect(sensitive.body.result.matches.map((m: { path: string }) => m.path)).toEqual(['src/index.ts']);
  });

  it('searches the second root and a subdirectory through GET /search/files', async () => {
    const res = await request(fx.service.app).get('/search/files').query({ path: fx.rootB, content: 'TODO' }).expect(200);
    expect(res.body.result).toMatchObject({ root: fx.rootB, matches: [{ path: 'b.ts', line: 1 }] });
    const sub = await request(fx.service.app).get('/search/files').query({ path: 'src/deep', name: '*.ts' }).expect(200);
    expect(sub.body.result.matches).toEqual([{ path: 'src/deep/a/b/c.ts', type: 'file' }]);
  });

  it('says truncated when maxResults or the visited-files cap stops it', async () => {
    const few = await call('file_search', { name: '*', maxResults: 2 }).expect(200);
    expect(few.body.result).toMatchObject({ truncated: true, truncatedBy: 'maxResults' });
    expect(few.body.result.matches).toHaveLength(2);
    const exactFit = await call('file_search', { name: '*.ts', maxResults: 3 }).expect(200);
    expect(exactFit.body.result.truncated).toBe(false);
    const capped = await call('file_search', { name: '*.nomatch', includeHidden: true }).expect(200);
    expect(capped.body.result).toMatchObject({ truncated: true, truncatedBy: 'maxFiles', entriesVisited: 15 });
  });

  it('rejects searches without a filter, bad globs, traversal and wrong types', async () => {
    const none = await call('file_search', {}).expect(400);
    expect(none.body.error).toMatch(/name .*content/);
    await call('file_search', { name: '{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}', content: 'x' }).expect(400);
    await call('file_search', { path: 'escape', name: '*' }).expect(403);
    await call('file_search', { path: '../', name: '*' }).expect(403);
    await call('file_search', { path: 'README.md', name: '*' }).expect(400);
    const wrong = await call('file_search', { name: 1, maxResults: 5000, maxFileBytes: 101 }).expect(400);
    expect(wrong.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['maxFileBytes', 'maxResults', 'name']);
  });
});

describe('file_analyze', () => {
  it('analyzes a text file: counts, hash, mime, mode', async () => {
    const res = await call('file_analyze', { path: 'README.md' }).expect(200);
    const content = fs.readFileSync(path.join(fx.rootA, 'README.md'));
    expect(res.body.result).toMatchObject({
      path: 'README.md',
      type: 'file',
      size: content.length,
      extension: '.md',
      mimeType: 'text/markdown',
      binary: false,
      encoding: 'utf8',
      lines: 2,
      words: 5,
      sha256: createHash('sha256').update(content).digest('hex'),
      mode: (fs.statSync(path.join(fx.rootA, 'README.md')).mode & 0o7777).toString(8).padStart(4, '0'),
      truncated: false,
    });
  });

  it('recognises binary files', async () => {
    const res = await request(fx.service.app).get('/analyze/blob.bin').expect(200);
    expect(res.body.result).toMatchObject({
      binary: true,
      encoding: 'binary',
      lines: null,
      words: null,
      mimeType: 'application/octet-stream',
    });
  });

  it('summarises a directory and says truncated at FILE_ANALYZE_MAX_ENTRIES', async () => {
    const src = await call('file_analyze', { path: 'src' }).expect(200);
    expect(src.body.result).toMatchObject({ type: 'directory', files: 4, directories: 3, entries: 7, truncated: false });
    const expectedBytes = ['index.ts', 'util.ts', 'deep/a/b/c.ts', 'readme.txt'].reduce(
      (n, f) => n + fs.statSync(path.join(fx.rootA, 'src', f)).size,
      0,
    );
    expect(src.body.result.totalBytes).toBe(expectedBytes);
    const root = await request(fx.service.app).get('/analyze').expect(200);
    expect(root.body.result).toMatchObject({ path: '.', entries: 14, truncated: true });
  });

  it('refuses paths outside the roots, through symlinks too, and bad input', async () => {
    await call('file_analyze', { path: 'escape' }).expect(403);
    await call('file_analyze', { path: 'escape/secret.txt' }).expect(403);
    await call('file_analyze', { path: path.join(fx.outside, 'secret.txt') }).expect(403);
    await call('file_analyze', { path: 'nope' }).expect(404);
    await call('file_analyze', { path: 'a\u0000b' }).expect(400);
    await call('file_analyze', { path: ['x'] }).expect(400);
  });
});

describe('file_search time cap', () => {
  let slow: Fixture;
  beforeAll(async () => {
    slow = await makeFixture({ FILE_SEARCH_TIMEOUT_MS: '1' });
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`d${i % 10}/f${i}.txt`] = `line\n`.repeat(50);
    writeTree(slow.rootA, files);
  });
  afterAll(() => slow.cleanup());

  it('stops at FILE_SEARCH_TIMEOUT_MS and says truncated instead of timing out', async () => {
    const res = await request(slow.service.app).post('/tools/file_search').send({ content: 'needle' }).expect(200);
    expect(res.body.result).toMatchObject({ matches: [], truncated: true, truncatedBy: 'time' });
    expect(res.body.result.filesScanned).toBeLessThan(300);
  });
});
