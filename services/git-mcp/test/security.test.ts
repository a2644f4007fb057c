import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { tempDir } from '@mcp-fleet/testing';
import type { ServiceApp } from '@mcp-fleet/kit';
import { readConfig } from '../src/config';
import { buildApp, git, makeRepo, testEnv, write } from './helpers';

function hook(repo: string, name: string, marker: string): void {
  const file = path.join(repo, '.git', 'hooks', name);
  fs.writeFileSync(file, `#!/bin/sh\necho ran >> "${marker}"\n`);
  fs.chmodSync(file, 0o755);
}

describe('git-mcp against hostile input and hostile repositories', () => {
  const ws = tempDir('git-mcp-sec-');
  const outside = tempDir('git-mcp-outside-');
  let service: ServiceApp;
  let repo: string;
  const marker = (name: string) => path.join(outside.dir, name);

  beforeAll(async () => {
    repo = makeRepo(path.join(ws.dir, 'repo'));
    service = await buildApp(ws.dir);
  });
  afterAll(async () => {
    await service.close();
    ws.cleanup();
    outside.cleanup();
  });

  describe('option injection through refs, remotes and branches', () => {
    it.each([
      ['git_diff', { commit1: `--output=${path.join(outside.dir, 'diff-out')}` }, 'commit1'],
      ['git_diff', { commit1: 'HEAD', commit2: '-c' }, 'commit2'],
      ['git_log', { ref: `--output=${path.join(outside.dir, 'log-out')}` }, 'ref'],
      ['git_log', { ref: '--upload-pack=touch /tmp/x' }, 'ref'],
      ['git_push', { remote: `--upload-pack=touch ${path.join(outside.dir, 'push-upload')}` }, 'remote'],
      ['git_push', { remote: `--receive-pack=touch ${path.join(outside.dir, 'push-receive')}` }, 'remote'],
      ['git_push', { branch: '--exec=touch /tmp/x' }, 'branch'],
      ['git_push', { branch: '-c' }, 'branch'],
    ])('%s refuses %j with VALIDATION_ERROR', async (tool, args, field) => {
      const res = await request(service.app)
        .post('/tools/call')
        .send({ name: tool, arguments: { path: 'repo', ...args } })
        .expect(400);
      expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR', details: [{ path: field }] });
    });

    it('left no file behind from any injected option', () => {
      expect(fs.readdirSync(outside.dir)).toEqual([]);
      expect(fs.existsSync(path.join(repo, '-c'))).toBe(false);
    });

    it('refuses injected options sent through the REST query string too', async () => {
      const res = await request(service.app)
        .get('/git/repo/diff')
        .query({ commit1: `--output=${path.join(outside.dir, 'q')}` })
        .expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(fs.existsSync(path.join(outside.dir, 'q'))).toBe(false);
    });

    it('treats a file argument that looks like an option as a path', async () => {
      write(path.join(repo, '--output=x'), 'odd name\n');
      const res = await request(service.app).post('/tools/git_diff').send({ path: 'repo', file: '--output=x' }).expect(200);
      expect(res.body.result.diff).toBe('');
      fs.rmSync(path.join(repo, '--output=x'));
    });
  });

  describe('path confinement', () => {
    it.each(['..', '../..', 'repo/../..', '/etc', '/', outside.dir])('refuses the repository path %j', async (p) => {
      const res = await request(service.app).post('/tools/git_status').send({ path: p });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
    });

    it('refuses encoded traversal in the REST path', async () => {
      const res = await request(service.app).get('/git/..%2F..%2Fetc/status');
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body.success).toBe(false);
    });

    it('refuses a NUL byte in the path', async () => {
      const res = await request(service.app).post('/tools/git_status').send({ path: 'repo\0x' }).expect(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    });

    it.each(['../outside.txt', '/etc/passwd', '.git/config', 'sub/../../x'])('refuses the file argument %j', async (file) => {
      const res = await request(service.app).post('/tools/git_diff').send({ path: 'repo', file });
      expect(res.status).toBe(403);
    });

    it('refuses files of another repository and files reached through a symlinked directory', async () => {
      const other = makeRepo(path.join(ws.dir, 'other'));
      const res = await request(service.app)
        .post('/tools/git_commit')
        .send({ path: 'repo', message: 'm', files: [path.join(other, 'README.md')] })
        .expect(403);
      expect(res.body.error).toMatch(/outside the repository/);
      fs.symlinkSync(outside.dir, path.join(repo, 'escape'));
      const viaLink = await request(service.app)
        .post('/tools/git_commit')
        .send({ path: 'repo', message: 'm', files: ['escape/secret.txt'] })
        .expect(403);
      expect(viaLink.body.code).toBe('FORBIDDEN');
      fs.rmSync(path.join(repo, 'escape'));
    });

    it('refuses a repository reached through a symlink that leaves the roots', async () => {
      const foreign = makeRepo(path.join(outside.dir, 'foreign'));
      fs.symlinkSync(foreign, path.join(ws.dir, 'foreign-link'));
      const res = await request(service.app).get('/git/foreign-link/status').expect(403);
      expect(res.body.code).toBe('FORBIDDEN');
      fs.rmSync(path.join(outside.dir, 'foreign'), { recursive: true, force: true });
    });

    it('refuses a .git file that points to a git directory outside the roots', async () => {
      const foreign = makeRepo(path.join(outside.dir, 'gitdir-owner'));
      const dir = path.join(ws.dir, 'gitfile');
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, '.git'), `gitdir: ${path.join(foreign, '.git')}\n`);
      const res = await request(service.app).get('/git/gitfile/status').expect(403);
      expect(res.body.error).toMatch(/outside the workspace roots/);
      fs.rmSync(foreign, { recursive: true, force: true });
    });
  });

  describe('repositories that try to run programs', () => {
    it('never runs the repository hooks on commit or push', async () => {
      const r = makeRepo(path.join(ws.dir, 'hooked'));
      const bare = path.join(ws.dir, 'hooked-remote.git');
      fs.mkdirSync(bare);
      git(bare, 'init', '-q', '--bare');
      git(r, 'remote', 'add', 'origin', bare);
      const ran = marker('hooks-ran');
      for (const name of ['pre-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit', 'pre-push', 'post-index-change'])
        hook(r, name, ran);
      write(path.join(r, 'a.txt'), 'a\n');
      await request(service.app)
        .post('/git/hooked/commit')
        .send({ message: 'no hooks', files: ['a.txt'] })
        .expect(200);
      await request(service.app).post('/git/hooked/push').send({}).expect(200);
      expect(fs.existsSync(ran)).toBe(false);
      // The hooks are real: plain git runs them.
      write(path.join(r, 'b.txt'), 'b\n');
      git(r, 'add', 'b.txt');
      git(r, 'commit', '-q', '-m', 'with hooks');
      expect(fs.readFileSync(ran, 'utf8')).toContain('ran');
      fs.rmSync(ran);
    });

    it.each([
      ['filter.evil.clean', (m: string) => `touch ${m}; cat`],
      ['core.fsmonitor', (m: string) => `touch ${m}; false`],
      ['diff.external', (m: string) => `touch ${m}`],
      ['diff.evil.textconv', (m: string) => `touch ${m}; cat`],
      ['core.sshCommand', (m: string) => `touch ${m}`],
      ['core.pager', (m: string) => `touch ${m}; cat`],
      ['remote.origin.receivepack', (m: string) => `touch ${m}`],
    ])('runs nothing a repository config names in %s, and still answers status and diff', async (key, value) => {
      const name = `cfg-${key.replace(/\W/g, '-')}`;
      const r = makeRepo(path.join(ws.dir, name));
      write(path.join(r, '.gitattributes'), '* filter=evil diff=evil\n');
      write(path.join(r, 'README.md'), 'touched\n');
      const m = marker(name);
      git(r, 'config', key, value(m));
      const status = await request(service.app).get(`/git/${name}/status`).expect(200);
      expect(status.body.result.modified).toEqual(['README.md']);
      const diff = await request(service.app).get(`/git/${name}/diff`).expect(200);
      expect(diff.body.result.diff).toContain('+touched');
      expect(fs.existsSync(m)).toBe(false);
    });

    it('runs nothing named in an included config file', async () => {
      const r = makeRepo(path.join(ws.dir, 'included'));
      const inc = path.join(r, 'extra.config');
      fs.writeFileSync(inc, `[core]\n\tfsmonitor = touch ${marker('included')}; false\n`);
      git(r, 'config', 'include.path', inc);
      write(path.join(r, 'README.md'), 'touched\n');
      await request(service.app).get('/git/included/status').expect(200);
      expect(fs.existsSync(marker('included'))).toBe(false);
      // The include is real: plain git runs the monitor.
      git(r, 'status');
      expect(fs.existsSync(marker('included'))).toBe(true);
      fs.rmSync(marker('included'));
    });

    it('with SANDBOX=off (no sanitized config), refuses a repository whose config names a program', async () => {
      const r = makeRepo(path.join(ws.dir, 'unsandboxed'));
      git(r, 'config', 'filter.lfs.clean', `touch ${marker('unsandboxed')}; cat`);
      const off = await buildApp(ws.dir, { SANDBOX: 'off' });
      const res = await request(off.app).get('/git/unsandboxed/status').expect(403);
      expect(res.body.error).toContain('filter.lfs.clean');
      await request(off.app).get('/git/repo/status').expect(200);
      expect(fs.existsSync(marker('unsandboxed'))).toBe(false);
      await off.close();
    });

    it('refuses the ext:: transport, which runs a command, even when the repository allows it', async () => {
      const r = makeRepo(path.join(ws.dir, 'ext-remote'));
      const m = marker('ext');
      git(r, 'remote', 'add', 'origin', `ext::sh -c touch% ${m}`);
      git(r, 'config', 'protocol.ext.allow', 'always');
      const res = await request(service.app).post('/git/ext-remote/push').send({});
      expect(res.body.success).toBe(false);
      expect([400, 403, 502]).toContain(res.status);
      expect(fs.existsSync(m)).toBe(false);
      // The remote is real: plain git, honouring the repository's setting, runs the command.
      expect(() => git(r, 'push', 'origin', 'main')).toThrow();
      expect(fs.existsSync(m)).toBe(true);
      fs.rmSync(m);
    });

    it('a clean filter is real: plain git runs it where the service did not', async () => {
      const r = makeRepo(path.join(ws.dir, 'filter-sanity'));
      write(path.join(r, '.gitattributes'), '* filter=evil\n');
      write(path.join(r, 'README.md'), 'touched\n');
      const m = marker('filter-sanity');
      git(r, 'config', 'filter.evil.clean', `touch ${m}; cat`);
      await request(service.app).get('/git/filter-sanity/diff').expect(200);
      expect(fs.existsSync(m)).toBe(false);
      git(r, 'diff');
      expect(fs.existsSync(m)).toBe(true);
      fs.rmSync(m);
    });

    it('refuses to push to a local remote outside the workspace roots', async () => {
      const r = makeRepo(path.join(ws.dir, 'far-remote'));
      const bare = path.join(outside.dir, 'far.git');
      fs.mkdirSync(bare);
      git(bare, 'init', '-q', '--bare');
      git(r, 'remote', 'add', 'origin', bare);
      const res = await request(service.app).post('/git/far-remote/push').send({}).expect(403);
      expect(res.body.error).toMatch(/outside the workspace roots/);
      expect(git(bare, 'for-each-ref')).toBe('');
      fs.rmSync(bare, { recursive: true, force: true });
    });
  });

  it('does not find a repository above the workspace root', async () => {
    const parent = makeRepo(path.join(outside.dir, 'parent'));
    fs.mkdirSync(path.join(parent, 'ws', 'plain'), { recursive: true });
    const nested = await buildApp(path.join(parent, 'ws'));
    const res = await request(nested.app).get('/git/plain/status').expect(404);
    expect(res.body.error).toMatch(/not inside a git work tree/);
    await nested.close();
  });
});

describe('git-mcp configuration', () => {
  it('passes only PATH (absolute entries) and TZ on to git; never HOME or a secret', () => {
    const config = readConfig(
      testEnv({
        PATH: '/usr/bin:.:bin',
        HOME: '/home/x',
        TZ: 'UTC',
        GITHUB_TOKEN: 'ghp_secret',
        AWS_SECRET_ACCESS_KEY: 's',
        SSH_AUTH_SOCK: '/run/a.sock',
      }),
    );
    expect(config.GIT_BASE_ENV).toEqual({ PATH: '/usr/bin', TZ: 'UTC' });
    expect(config.SSH_AGENT_SOCKET).toBe('/run/a.sock');
  });

  it('fails fast on bad values, naming the variable', () => {
    expect(() => readConfig(testEnv({ GIT_TIMEOUT_MS: 'soon' }))).toThrow(/GIT_TIMEOUT_MS/);
    expect(() => readConfig(testEnv({ GIT_ALLOW_PUSH: 'maybe' }))).toThrow(/GIT_ALLOW_PUSH/);
  });
});
