import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { tempDir } from '@mcp-fleet/testing';
import type { ServiceApp } from '@mcp-fleet/kit';
import { buildApp, git, makeRepo, write } from './helpers';

describe('git-mcp tools over HTTP', () => {
  const ws = tempDir('git-mcp-');
  let service: ServiceApp;
  let repo: string;

  beforeAll(async () => {
    repo = makeRepo(path.join(ws.dir, 'repo'));
    service = await buildApp(ws.dir, { GIT_MAX_DIFF_BYTES: '2048' });
  });
  afterAll(async () => {
    await service.close();
    ws.cleanup();
  });

  it('lists its five tools with schemas generated from zod', async () => {
    const res = await request(service.app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name)).toEqual(['git_status', 'git_log', 'git_diff', 'git_commit', 'git_push']);
    const log = res.body.tools.find((t: { name: string }) => t.name === 'git_log');
    expect(log.inputSchema.properties).toMatchObject({
      path: { type: 'string' },
      repository: { type: 'string' },
      limit: { type: 'integer', maximum: 500, default: 20 },
    });
    expect(log.inputSchema.additionalProperties).toBe(false);
    const push = res.body.tools.find((t: { name: string }) => t.name === 'git_push');
    expect(push.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: true });
  });

  it('reports health with the git version', async () => {
    const res = await request(service.app).get('/health').expect(200);
    expect(res.body).toMatchObject({ status: 'healthy', service: 'git-mcp', tools: 5 });
    expect(res.body.checks.git.detail.version).toMatch(/^git version/);
  });

  describe('git_status', () => {
    it('reports a clean repository on its branch', async () => {
      const res = await request(service.app).get('/git/repo/status').expect(200);
      expect(res.body).toMatchObject({ success: true, service: 'git-mcp' });
      expect(res.body.result).toMatchObject({
        repository: 'repo',
        branch: 'main',
        clean: true,
        staged: [],
        modified: [],
        untracked: [],
        deleted: [],
        conflicted: [],
        truncated: false,
      });
    });

    it('sorts staged, modified, untracked and deleted paths, and takes repository as an alias', async () => {
      const r = makeRepo(path.join(ws.dir, 'status-repo'));
      write(path.join(r, 'a.txt'), 'a\n');
      write(path.join(r, 'gone.txt'), 'g\n');
      git(r, 'add', '.');
      git(r, 'commit', '-q', '-m', 'two files');
      write(path.join(r, 'a.txt'), 'a changed\n');
      write(path.join(r, 'staged.txt'), 's\n');
      git(r, 'add', 'staged.txt');
      write(path.join(r, 'new.txt'), 'n\n');
      fs.rmSync(path.join(r, 'gone.txt'));
      const res = await request(service.app)
        .post('/tools/call')
        .send({ name: 'git_status', arguments: { repository: 'status-repo' } })
        .expect(200);
      expect(res.body.result).toMatchObject({
        clean: false,
        staged: ['staged.txt'],
        modified: ['a.txt'],
        untracked: ['new.txt'],
        deleted: ['gone.txt'],
      });
    });

    it('serves nested and URL-encoded repository paths, absolute ones included', async () => {
      makeRepo(path.join(ws.dir, 'group', 'nested'));
      const plain = await request(service.app).get('/git/group/nested/status').expect(200);
      expect(plain.body.result.repository).toBe('group/nested');
      const encoded = await request(service.app).get('/git/group%2Fnested/status').expect(200);
      expect(encoded.body.result.repository).toBe('group/nested');
      const absolute = await request(service.app)
        .get(`/git/${encodeURIComponent(path.join(ws.dir, 'group', 'nested'))}/status`)
        .expect(200);
      expect(absolute.body.result.branch).toBe('main');
    });

    it('answers for a directory inside a repository with the repository itself', async () => {
      fs.mkdirSync(path.join(repo, 'src', 'deep'), { recursive: true });
      const res = await request(service.app).post('/tools/git_status').send({ path: 'repo/src/deep' }).expect(200);
      expect(res.body.result.repository).toBe('repo');
    });

    it('refuses a missing path, a plain directory, a file and conflicting aliases', async () => {
      const none = await request(service.app).post('/tools/git_status').send({}).expect(400);
      expect(none.body).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ path: 'path' }] });
      fs.mkdirSync(path.join(ws.dir, 'plain'));
      const plain = await request(service.app).get('/git/plain/status').expect(404);
      expect(plain.body.error).toMatch(/not inside a git work tree/);
      const missing = await request(service.app).get('/git/nope/status').expect(404);
      expect(missing.body.code).toBe('NOT_FOUND');
      const file = await request(service.app).post('/tools/git_status').send({ path: 'repo/README.md' }).expect(400);
      expect(file.body.error).toMatch(/is a file/);
      const both = await request(service.app).post('/tools/git_status').send({ path: 'repo', repository: 'other' }).expect(400);
      expect(both.body.code).toBe('VALIDATION_ERROR');
      await request(service.app).post('/tools/git_status').send({ path: 'repo', extra: true }).expect(400);
    });
  });

  describe('git_log', () => {
    let logRepo: string;
    beforeAll(() => {
      logRepo = makeRepo(path.join(ws.dir, 'log-repo'));
      for (let i = 1; i <= 24; i++) {
        write(path.join(logRepo, i % 5 === 0 ? 'five.txt' : 'n.txt'), `${i}\n`);
        git(logRepo, 'add', '.');
        git(logRepo, 'commit', '-q', '-m', `commit ${i}`, '-m', `body of ${i}`);
      }
    });

    it('pages through history with a cursor that pins the start', async () => {
      const first = await request(service.app).get('/git/log-repo/log').expect(200);
      expect(first.body.result.commits).toHaveLength(20);
      const top = first.body.result.commits[0];
      expect(top).toMatchObject({ author: 'Test User', email: 'test@example.com', message: 'commit 24', body: 'body of 24' });
      expect(top.hash).toMatch(/^[0-9a-f]{40}$/);
      expect(top.hash.startsWith(top.shortHash)).toBe(true);
      expect(new Date(top.date).toString()).not.toBe('Invalid Date');
      expect(first.body.result.nextCursor).toEqual(expect.any(String));
      // A commit landing between pages does not shift the second page.
      write(path.join(logRepo, 'late.txt'), 'late\n');
      git(logRepo, 'add', '.');
      git(logRepo, 'commit', '-q', '-m', 'late commit');
      const second = await request(service.app).get('/git/log-repo/log').query({ cursor: first.body.result.nextCursor }).expect(200);
      expect(second.body.result.commits.map((c: { message: string }) => c.message)).toEqual([
        'commit 4',
        'commit 3',
        'commit 2',
        'commit 1',
        'initial commit',
      ]);
      expect(second.body.result.nextCursor).toBeUndefined();
    });

    it('filters by ref and file, and coerces limit from the query string', async () => {
      const res = await request(service.app).get('/git/log-repo/log').query({ limit: '3', ref: 'HEAD~1', file: 'five.txt' }).expect(200);
      expect(res.body.result.commits.map((c: { message: string }) => c.message)).toEqual(['commit 20', 'commit 15', 'commit 10']);
      const viaAlias = await request(service.app)
        .post('/tools/call')
        .send({ name: 'git_log', arguments: { repository: 'log-repo', limit: 1 } })
        .expect(200);
      expect(viaAlias.body.result.commits).toHaveLength(1);
    });

    it('returns no commits for a repository without any, and NOT_FOUND for an unknown ref', async () => {
      const empty = path.join(ws.dir, 'empty-repo');
      fs.mkdirSync(empty);
      git(empty, 'init', '-q');
      const res = await request(service.app).get('/git/empty-repo/log').expect(200);
      expect(res.body.result.commits).toEqual([]);
      const unknown = await request(service.app).get('/git/log-repo/log').query({ ref: 'no-such-branch' }).expect(404);
      expect(unknown.body.code).toBe('NOT_FOUND');
    });

    it('refuses bad limits and foreign cursors', async () => {
      await request(service.app).get('/git/log-repo/log').query({ limit: '501' }).expect(400);
      await request(service.app).get('/git/log-repo/log').query({ limit: 'lots' }).expect(400);
      const bad = await request(service.app).get('/git/log-repo/log').query({ cursor: 'not-a-cursor' }).expect(400);
      expect(bad.body.error).toMatch(/cursor/);
    });
  });

  describe('git_diff', () => {
    let diffRepo: string;
    beforeAll(() => {
      diffRepo = makeRepo(path.join(ws.dir, 'diff-repo'));
      write(path.join(diffRepo, 'a.txt'), 'one\ntwo\n');
      git(diffRepo, 'add', '.');
      git(diffRepo, 'commit', '-q', '-m', 'add a');
    });

    it('shows working tree against index, and the index with staged', async () => {
      write(path.join(diffRepo, 'a.txt'), 'one\nTWO\nthree\n');
      const wt = await request(service.app).get('/git/diff-repo/diff').expect(200);
      expect(wt.body.result.diff).toContain('+TWO');
      expect(wt.body.result.files).toEqual([{ file: 'a.txt', insertions: 2, deletions: 1, binary: false }]);
      expect(wt.body.result.truncated).toBe(false);
      const stagedBefore = await request(service.app).get('/git/diff-repo/diff').query({ staged: 'true' }).expect(200);
      expect(stagedBefore.body.result.diff).toBe('');
      git(diffRepo, 'add', 'a.txt');
      const staged = await request(service.app).get('/git/diff-repo/diff').query({ staged: 'true' }).expect(200);
      expect(staged.body.result.files).toEqual([{ file: 'a.txt', insertions: 2, deletions: 1, binary: false }]);
      git(diffRepo, 'commit', '-q', '-m', 'change a');
    });

    it('compares two commits, optionally for one file', async () => {
      write(path.join(diffRepo, 'b.txt'), 'b\n');
      git(diffRepo, 'add', '.');
      git(diffRepo, 'commit', '-q', '-m', 'add b');
      const res = await request(service.app).get('/git/diff-repo/diff').query({ commit1: 'HEAD~2', commit2: 'HEAD' }).expect(200);
      expect(res.body.result.files.map((f: { file: string }) => f.file).sort()).toEqual(['a.txt', 'b.txt']);
      const one = await request(service.app)
        .post('/tools/git_diff')
        .send({ repository: 'diff-repo', commit1: 'HEAD~2', commit2: 'HEAD', file: 'b.txt' })
        .expect(200);
      expect(one.body.result.files).toEqual([{ file: 'b.txt', insertions: 1, deletions: 0, binary: false }]);
      expect(one.body.result.diff).not.toContain('a.txt');
    });

    it('cuts a patch larger than GIT_MAX_DIFF_BYTES and says so', async () => {
      write(path.join(diffRepo, 'big.txt'), 'x'.repeat(100) + '\n');
      git(diffRepo, 'add', '.');
      git(diffRepo, 'commit', '-q', '-m', 'big');
      write(path.join(diffRepo, 'big.txt'), Array.from({ length: 400 }, (_, i) => `line ${i} ${'y'.repeat(40)}`).join('\n'));
      const res = await request(service.app).get('/git/diff-repo/diff').expect(200);
      expect(res.body.result.truncated).toBe(true);
      expect(Buffer.byteLength(res.body.result.diff)).toBeLessThanOrEqual(2048);
      expect(res.body.result.diff.length).toBeGreaterThan(1000);
      expect(res.body.result.files).toEqual([{ file: 'big.txt', insertions: 400, deletions: 1, binary: false }]);
      git(diffRepo, 'checkout', '--', 'big.txt');
    });

    it('refuses commit2 without commit1, staged with two commits, and unknown commits', async () => {
      await request(service.app).get('/git/diff-repo/diff').query({ commit2: 'HEAD' }).expect(400);
      await request(service.app).get('/git/diff-repo/diff').query({ commit1: 'HEAD~1', commit2: 'HEAD', staged: 'true' }).expect(400);
      const unknown = await request(service.app).get('/git/diff-repo/diff').query({ commit1: 'deadbeef' }).expect(404);
      expect(unknown.body.code).toBe('NOT_FOUND');
    });
  });

  describe('git_commit', () => {
    let commitRepo: string;
    beforeAll(() => {
      commitRepo = makeRepo(path.join(ws.dir, 'commit-repo'));
    });

    it('commits named files, with the given author', async () => {
      write(path.join(commitRepo, 'new.txt'), 'new\n');
      write(path.join(commitRepo, 'other.txt'), 'not committed\n');
      const res = await request(service.app)
        .post('/git/commit-repo/commit')
        .send({ message: 'Add new.txt', files: ['new.txt'], author: { name: 'Ada Lovelace', email: 'ada@example.com' } })
        .expect(200);
      expect(res.body.result).toMatchObject({ branch: 'main', summary: { changes: 1, insertions: 1, deletions: 0 } });
      expect(res.body.result.hash).toBe(git(commitRepo, 'rev-parse', 'HEAD').trim());
      expect(git(commitRepo, 'log', '-1', '--format=%an <%ae>|%s')).toBe('Ada Lovelace <ada@example.com>|Add new.txt\n');
      expect(git(commitRepo, 'status', '--porcelain')).toBe('?? other.txt\n');
    });

    it('commits what is staged by default, and every tracked change with all', async () => {
      write(path.join(commitRepo, 'README.md'), 'changed\n');
      git(commitRepo, 'add', 'README.md');
      const staged = await request(service.app).post('/tools/git_commit').send({ path: 'commit-repo', message: 'staged only' }).expect(200);
      expect(staged.body.result.summary.changes).toBe(1);
      write(path.join(commitRepo, 'new.txt'), 'edited\n');
      fs.rmSync(path.join(commitRepo, 'README.md'));
      const all = await request(service.app)
        .post('/tools/call')
        .send({ name: 'git_commit', arguments: { repository: 'commit-repo', message: 'everything tracked', all: true } })
        .expect(200);
      expect(all.body.result.summary.changes).toBe(2);
      expect(git(commitRepo, 'status', '--porcelain')).toBe('?? other.txt\n');
    });

    it('answers CONFLICT when nothing is staged', async () => {
      const res = await request(service.app).post('/git/commit-repo/commit').send({ message: 'nothing' }).expect(409);
      expect(res.body).toMatchObject({ success: false, code: 'CONFLICT' });
      expect(res.body.error).toMatch(/Nothing to commit/);
    });

    it('refuses empty messages, bad authors and unknown files', async () => {
      await request(service.app).post('/git/commit-repo/commit').send({ message: '' }).expect(400);
      await request(service.app).post('/git/commit-repo/commit').send({ message: '   ' }).expect(400);
      await request(service.app)
        .post('/git/commit-repo/commit')
        .send({ message: 'x'.repeat(10_001) })
        .expect(400);
      await request(service.app)
        .post('/git/commit-repo/commit')
        .send({ message: 'm', author: { name: 'Evil <x@y>', email: 'x@example.com' } })
        .expect(400);
      await request(service.app)
        .post('/git/commit-repo/commit')
        .send({ message: 'm', author: { name: 'A', email: 'not-an-email' } })
        .expect(400);
      const missing = await request(service.app)
        .post('/git/commit-repo/commit')
        .send({ message: 'm', files: ['no-such-file'] });
      expect(missing.status).toBe(404);
    });
  });

  describe('git_push', () => {
    let pushRepo: string;
    let bare: string;
    beforeAll(() => {
      pushRepo = makeRepo(path.join(ws.dir, 'push-repo'));
      bare = path.join(ws.dir, 'remotes', 'origin.git');
      fs.mkdirSync(bare, { recursive: true });
      git(bare, 'init', '-q', '--bare');
      git(pushRepo, 'remote', 'add', 'origin', bare);
    });

    it('pushes the current branch to a local bare remote and sets the upstream', async () => {
      const res = await request(service.app).post('/git/push-repo/push').send({ setUpstream: true }).expect(200);
      expect(res.body.result).toMatchObject({ remote: 'origin', branch: 'main', pushed: true, upToDate: false, setUpstream: true });
      expect(git(bare, 'rev-parse', 'refs/heads/main')).toBe(git(pushRepo, 'rev-parse', 'HEAD'));
      const status = await request(service.app).get('/git/push-repo/status').expect(200);
      expect(status.body.result).toMatchObject({ tracking: 'origin/main', ahead: 0, behind: 0 });
      const again = await request(service.app).post('/git/push-repo/push').send({}).expect(200);
      expect(again.body.result).toMatchObject({ pushed: false, upToDate: true });
    });

    it('pushes a named branch', async () => {
      git(pushRepo, 'branch', 'feature/one');
      const res = await request(service.app)
        .post('/tools/call')
        .send({ name: 'git_push', arguments: { repository: 'push-repo', remote: 'origin', branch: 'feature/one' } })
        .expect(200);
      expect(res.body.result.branch).toBe('feature/one');
      expect(git(bare, 'rev-parse', 'refs/heads/feature/one')).toBe(git(pushRepo, 'rev-parse', 'feature/one'));
    });

    it('answers CONFLICT for a non-fast-forward push and never forces', async () => {
      const other = path.join(ws.dir, 'other-clone');
      git(ws.dir, 'clone', '-q', '-b', 'main', bare, other);
      git(other, 'config', 'user.name', 'Other');
      git(other, 'config', 'user.email', 'other@example.com');
      write(path.join(other, 'theirs.txt'), 'theirs\n');
      git(other, 'add', '.');
      git(other, 'commit', '-q', '-m', 'theirs');
      git(other, 'push', '-q', 'origin', 'main');
      write(path.join(pushRepo, 'ours.txt'), 'ours\n');
      git(pushRepo, 'add', '.');
      git(pushRepo, 'commit', '-q', '-m', 'ours');
      const theirs = git(bare, 'rev-parse', 'refs/heads/main');
      const res = await request(service.app).post('/git/push-repo/push').send({}).expect(409);
      expect(res.body.code).toBe('CONFLICT');
      expect(git(bare, 'rev-parse', 'refs/heads/main')).toBe(theirs);
    });

    it('refuses unknown remotes, URLs, unknown branches and a detached HEAD', async () => {
      const unknown = await request(service.app).post('/git/push-repo/push').send({ remote: 'upstream' }).expect(404);
      expect(unknown.body.error).toMatch(/configured remotes: origin/);
      await request(service.app).post('/git/push-repo/push').send({ remote: bare }).expect(400);
      await request(service.app).post('/git/push-repo/push').send({ remote: 'https://example.com/x.git' }).expect(400);
      await request(service.app).post('/git/push-repo/push').send({ branch: 'nope' }).expect(404);
      const detached = makeRepo(path.join(ws.dir, 'detached-repo'));
      git(detached, 'remote', 'add', 'origin', bare);
      git(detached, 'checkout', '-q', '--detach');
      const res = await request(service.app).post('/git/detached-repo/push').send({}).expect(400);
      expect(res.body.error).toMatch(/detached/);
    });

    it('refuses a network remote on a loopback address (outbound policy) and plain http (GIT_PUSH_PROTOCOLS)', async () => {
      const r = makeRepo(path.join(ws.dir, 'loopback-repo'));
      git(r, 'remote', 'add', 'origin', 'https://127.0.0.1:1/nothing.git');
      git(r, 'remote', 'add', 'plain', 'http://example.com/nothing.git');
      const loopback = await request(service.app).post('/git/loopback-repo/push').send({}).expect(403);
      expect(loopback.body.error).toMatch(/loopback.*OUTBOUND_ALLOWLIST/s);
      const plain = await request(service.app).post('/git/loopback-repo/push').send({ remote: 'plain' }).expect(403);
      expect(plain.body.error).toMatch(/GIT_PUSH_PROTOCOLS/);
    });
  });
});

describe('git-mcp push policy', () => {
  const ws = tempDir('git-mcp-policy-');
  afterAll(() => ws.cleanup());

  it('refuses every push when GIT_ALLOW_PUSH=false, and remotes off GIT_PUSH_REMOTES_ALLOWLIST', async () => {
    const r = makeRepo(path.join(ws.dir, 'r'));
    const bare = path.join(ws.dir, 'b.git');
    fs.mkdirSync(bare);
    git(bare, 'init', '-q', '--bare');
    git(r, 'remote', 'add', 'origin', bare);
    git(r, 'remote', 'add', 'backup', bare);
    const off = await buildApp(ws.dir, { GIT_ALLOW_PUSH: 'false' });
    const denied = await request(off.app).post('/git/r/push').send({}).expect(403);
    expect(denied.body.error).toMatch(/GIT_ALLOW_PUSH/);
    const listed = await buildApp(ws.dir, { GIT_PUSH_REMOTES_ALLOWLIST: 'backup' });
    const notListed = await request(listed.app).post('/git/r/push').send({ remote: 'origin' }).expect(403);
    expect(notListed.body.error).toMatch(/GIT_PUSH_REMOTES_ALLOWLIST/);
    await request(listed.app).post('/git/r/push').send({ remote: 'backup' }).expect(200);
    expect(git(bare, 'rev-parse', 'refs/heads/main')).toBe(git(r, 'rev-parse', 'HEAD'));
    await Promise.all([off.close(), listed.close()]);
  });

  it('reports an allowed network remote that cannot be reached as UPSTREAM_ERROR', async () => {
    const r = makeRepo(path.join(ws.dir, 'unreachable-repo'));
    git(r, 'remote', 'add', 'origin', 'http://127.0.0.1:1/nothing.git');
    const service = await buildApp(ws.dir, { OUTBOUND_ALLOWLIST: '127.0.0.1', GIT_PUSH_PROTOCOLS: 'http' });
    const res = await request(service.app).post('/git/unreachable-repo/push').send({}).expect(502);
    expect(res.body.code).toBe('UPSTREAM_ERROR');
    expect(res.body.error).toMatch(/127\.0\.0\.1/);
    await service.close();
  });
});
