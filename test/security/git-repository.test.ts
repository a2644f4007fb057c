/**
 * Class 2 (issue 27): a hostile repository inside the workspace. Its config (and a submodule's, an
 * included file's, a push target's) names programs git would run: fsmonitor, pager, external diff,
 * textconv and filter drivers, ssh command, credential helper, hooks; its remotes lead outside the
 * roots (several push URLs, file: spellings, insteadOf rewrites, symlinks) or into command-running
 * transports (ext::). Every git process of git-mcp must run none of it, write nowhere outside the
 * roots, and still do the legitimate job. Real git repositories, the real service, real bubblewrap.
 *
 * Each attack's payload would leave a marker outside the roots, inside the repository's .git
 * directory (writable while committing or pushing) and in its answer (PWNED); none may appear.
 * Attacks run against the sandboxed service and against SANDBOX=off, where only the hardened git
 * configuration stands (there, repositories whose own config names a program are refused, 403).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import request from 'supertest';
import type { ServiceApp } from '@mcp-fleet/kit';
import { tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serve } from '@mcp-fleet/testing';
import { buildApp, git, makeRepo, write } from '../../services/git-mcp/test/helpers';
import { DRIVER_ARMINGS, FSMONITOR_ARMINGS } from './fixtures/hostile-git';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';

const ws = tempDir('sec-git-ws-');
const outside = tempDir('sec-git-outside-');
let sandboxed: ServiceApp;
let unsandboxed: ServiceApp;

beforeAll(async () => {
  sandboxed = await buildApp(ws.dir);
  unsandboxed = await buildApp(ws.dir, { SANDBOX: 'off' });
});

afterAll(async () => {
  await Promise.all([sandboxed.close(), unsandboxed.close()]);
  ws.cleanup();
  outside.cleanup();
});

let counter = 0;
/** A fresh repository in the workspace (its own hand: plain git, hooks and all). */
function repo(name: string): { dir: string; rel: string } {
  const rel = `${name}-${++counter}`;
  return { dir: makeRepo(path.join(ws.dir, rel)), rel };
}

/** A shell command that leaves `name` outside the roots and in the repository's .git, and says PWNED. */
function payload(dir: string, name: string): string {
  return `touch '${path.join(outside.dir, name)}' '${path.join(dir, '.git', name)}' 2>/dev/null; echo PWNED-${name}`;
}

/** Fails when the payload `name` ran, whatever it could reach. */
function expectNotRun(dir: string, name: string, res?: request.Response): void {
  expect(fs.existsSync(path.join(outside.dir, name))).toBe(false);
  expect(fs.existsSync(path.join(dir, '.git', name))).toBe(false);
  if (res) expect(JSON.stringify(res.body)).not.toContain('PWNED');
}

const modes: [string, () => ServiceApp][] = [
  ['sandboxed', () => sandboxed],
  ['SANDBOX=off', () => unsandboxed],
];

/** Sandboxed: the legitimate answer. SANDBOX=off: that, or a refusal naming the setting. */
function legit(mode: string, res: request.Response, refusedKey?: string): boolean {
  if (mode === 'SANDBOX=off' && refusedKey !== undefined && res.status === 403) {
    expect(res.body.error.toLowerCase()).toContain(refusedKey.toLowerCase());
    return false;
  }
  expect(res.status).toBe(200);
  return true;
}

describe.each(modes)('%s: a repository config that names a program', (mode, service) => {
  it.each(FSMONITOR_ARMINGS)('fsmonitor via %s: status, diff and commit run nothing and still work', async (label, key, arm) => {
    const r = repo('fsmonitor');
    const name = `fsmonitor-${counter}`;
    arm(r.dir, payload(r.dir, name));
    write(path.join(r.dir, 'README.md'), 'changed\n');
    // The setting is real: plain git runs the monitor.
    const probe = `probe-${counter}`;
    const real = repo('fsmonitor-real');
    arm(real.dir, payload(real.dir, probe));
    git(real.dir, 'status');
    expect(fs.existsSync(path.join(outside.dir, probe))).toBe(true);

    const status = await request(service().app).get(`/git/${r.rel}/status`);
    if (legit(mode, status, key)) expect(status.body.result.modified).toEqual(['README.md']);
    const diff = await request(service().app).get(`/git/${r.rel}/diff`);
    if (legit(mode, diff, key)) expect(diff.body.result.diff).toContain('+changed');
    const commit = await request(service().app)
      .post(`/git/${r.rel}/commit`)
      .send({ message: `commit despite ${label}`, all: true });
    if (legit(mode, commit, key)) expect(git(r.dir, 'log', '-1', '--format=%s').trim()).toBe(`commit despite ${label}`);
    expectNotRun(r.dir, name, status);
    expectNotRun(r.dir, name, diff);
    expectNotRun(r.dir, name, commit);
  });

  it('fsmonitor in a SUBMODULE config (.git/modules/x/config): status never enters the submodule', async () => {
    const source = makeRepo(path.join(outside.dir, `subsource-${++counter}`));
    const r = repo('submodule');
    git(r.dir, '-c', 'protocol.file.allow=always', 'submodule', '--quiet', 'add', source, 'sub');
    git(r.dir, 'commit', '-q', '-m', 'add submodule');
    const name = `submodule-fsmonitor-${counter}`;
    git(path.join(r.dir, 'sub'), 'config', 'core.fsmonitor', payload(r.dir, name));
    expect(fs.existsSync(path.join(r.dir, '.git', 'modules', 'sub', 'config'))).toBe(true);
    write(path.join(r.dir, 'sub', 'README.md'), 'dirty submodule\n');
    write(path.join(r.dir, 'top.txt'), 'top\n');
    // The setting is real: plain git status enters the submodule and runs its monitor.
    git(r.dir, 'status');
    expect(fs.existsSync(path.join(outside.dir, name))).toBe(true);
    fs.rmSync(path.join(outside.dir, name));
    fs.rmSync(path.join(r.dir, '.git', name), { force: true });

    const status = await request(service().app).get(`/git/${r.rel}/status`).expect(200);
    expect(status.body.result.untracked).toEqual(['top.txt']);
    const diff = await request(service().app).get(`/git/${r.rel}/diff`).expect(200);
    const commit = await request(service().app)
      .post(`/git/${r.rel}/commit`)
      .send({ message: 'top', files: ['top.txt'] })
      .expect(200);
    expectNotRun(r.dir, name, status);
    expectNotRun(r.dir, name, diff);
    expectNotRun(r.dir, name, commit);
  });

  it.each(DRIVER_ARMINGS)('%s: diff, status and commit show the real change and run nothing', async (label, key, arm) => {
    const r = repo('driver');
    const name = `driver-${counter}`;
    arm(r.dir, payload(r.dir, name));
    write(path.join(r.dir, 'README.md'), '# readme\nchanged line\n');
    const diff = await request(service().app).get(`/git/${r.rel}/diff`);
    if (legit(mode, diff, key)) expect(diff.body.result.diff).toContain('+changed line');
    const staged = await request(service().app).get(`/git/${r.rel}/diff`).query({ commit1: 'HEAD' });
    if (legit(mode, staged, key)) expect(staged.body.result.files.map((f: { file: string }) => f.file)).toContain('README.md');
    const status = await request(service().app).get(`/git/${r.rel}/status`);
    if (legit(mode, status, key)) expect(status.body.result.modified).toEqual(['README.md']);
    const log = await request(service().app).get(`/git/${r.rel}/log`).query({ file: 'README.md' });
    legit(mode, log, key);
    const commit = await request(service().app)
      .post(`/git/${r.rel}/commit`)
      .send({ message: label, files: ['README.md'] });
    if (legit(mode, commit, key)) expect(git(r.dir, 'show', 'HEAD:README.md')).toBe('# readme\nchanged line\n');
    for (const res of [diff, staged, status, log, commit]) expectNotRun(r.dir, name, res);
  });

  it('hooks in .git/hooks and through core.hooksPath into the work tree never run on commit or push', async () => {
    const r = repo('hooks');
    const bare = path.join(ws.dir, `hooks-target-${counter}.git`);
    git(ws.dir, 'init', '-q', '--bare', bare);
    git(r.dir, 'remote', 'add', 'origin', bare);
    const name = `hook-${counter}`;
    const hooks = [
      'pre-commit',
      'prepare-commit-msg',
      'commit-msg',
      'post-commit',
      'pre-push',
      'reference-transaction',
      'post-index-change',
    ];
    for (const dir of [path.join(r.dir, '.git', 'hooks'), path.join(r.dir, 'githooks')]) {
      for (const hook of hooks) {
        write(path.join(dir, hook), `#!/bin/sh\n${payload(r.dir, name)}\n`);
        fs.chmodSync(path.join(dir, hook), 0o755);
      }
    }
    for (const hooksPath of ['githooks', path.join(r.dir, 'githooks'), undefined]) {
      if (hooksPath) git(r.dir, 'config', 'core.hooksPath', hooksPath);
      else git(r.dir, 'config', '--unset', 'core.hooksPath');
      write(path.join(r.dir, 'a.txt'), `${hooksPath}\n`);
      const commit = await request(service().app)
        .post(`/git/${r.rel}/commit`)
        .send({ message: `no hooks (${hooksPath})`, files: ['a.txt'] })
        .expect(200);
      const push = await request(service().app).post(`/git/${r.rel}/push`).send({}).expect(200);
      expect(git(bare, 'rev-parse', 'refs/heads/main')).toBe(git(r.dir, 'rev-parse', 'HEAD'));
      expectNotRun(r.dir, name, commit);
      expectNotRun(r.dir, name, push);
    }
    // The hooks are real: plain git runs them.
    git(r.dir, 'commit', '-q', '--allow-empty', '-m', 'plain');
    expect(fs.existsSync(path.join(outside.dir, name))).toBe(true);
  });
});

describe.each(modes)('%s: push targets', (mode, service) => {
  /** A bare repository outside the roots that nothing may write to. */
  function outsideTarget(): string {
    const bare = path.join(outside.dir, `target-${++counter}.git`);
    git(outside.dir, 'init', '-q', '--bare', bare);
    return bare;
  }
  const refs = (bare: string) => git(bare, 'for-each-ref', '--format=%(refname)');

  it.each([
    [
      'a second pushurl',
      (inside: string, out: string) => [
        ['remote.origin.url', inside],
        ['remote.origin.pushurl', inside],
        ['remote.origin.pushurl', out],
      ],
    ],
    [
      'a pushurl after the url',
      (_inside: string, out: string) => [
        ['remote.origin.url', _inside],
        ['remote.origin.pushurl', out],
      ],
    ],
    [
      'a second url (no pushurl)',
      (inside: string, out: string) => [
        ['remote.origin.url', inside],
        ['remote.origin.url', out],
      ],
    ],
  ])('refuses %s outside the roots, and pushes nowhere', async (_label, settings) => {
    const r = repo('pushurl');
    const inside = path.join(ws.dir, `inside-${counter}.git`);
    git(ws.dir, 'init', '-q', '--bare', inside);
    const out = outsideTarget();
    for (const [key, value] of settings(inside, out)) git(r.dir, 'config', '--add', key, value);
    const res = await request(service().app).post(`/git/${r.rel}/push`).send({}).expect(403);
    expect(res.body.error).toMatch(/outside the workspace roots/);
    expect(refs(out)).toBe('');
    expect(refs(inside)).toBe('');
  });

  it.each([
    ['file:///abs', (out: string) => `file://${out}`],
    ['file://localhost/abs', (out: string) => `file://localhost${out}`],
    ['file://any-host/abs (git ignores the host)', (out: string) => `file://elsewhere${out}`],
    ['file:// with %-encoded letters', (out: string) => `file://${out.replace(/t/g, '%74')}`],
    ['file:// with %2e%2e from inside the roots', (out: string) => `file://${ws.dir}/%2e%2e/${path.relative(path.dirname(ws.dir), out)}`],
    ['file:// with %2F-encoded slashes', (out: string) => `file://${out.replace(/\//g, '%2F').replace(/^%2F/, '/')}`],
    ['a plain absolute path', (out: string) => out],
    ['a ../ path relative to the repository', (out: string) => `../${path.relative(ws.dir, out)}`],
    ['./ then ../ segments', (out: string) => `./../${path.relative(ws.dir, out)}`],
    ['../../ up to the filesystem root and down', (out: string) => `${'../'.repeat(ws.dir.split('/').length)}${out.slice(1)}`],
    ['the path without .git (receive-pack adds it)', (out: string) => out.replace(/\.git$/, '')],
  ])('refuses a remote outside the roots written as %s', async (_label, spell) => {
    const r = repo('file-url');
    const out = outsideTarget();
    git(r.dir, 'remote', 'add', 'origin', spell(out));
    const res = await request(service().app).post(`/git/${r.rel}/push`).send({});
    expect(res.status).toBe(403);
    expect(res.body.error).toMatch(/outside the workspace roots/);
    expect(refs(out)).toBe('');
  });

  it('refuses a symlink in the roots that leads to a repository outside, and pushes through one that stays inside', async () => {
    const r = repo('symlink');
    const out = outsideTarget();
    fs.symlinkSync(out, path.join(ws.dir, `link-out-${counter}.git`));
    git(r.dir, 'remote', 'add', 'origin', path.join(ws.dir, `link-out-${counter}.git`));
    await request(service().app).post(`/git/${r.rel}/push`).send({}).expect(403);
    expect(refs(out)).toBe('');
    const inside = path.join(ws.dir, `real-inside-${counter}.git`);
    git(ws.dir, 'init', '-q', '--bare', inside);
    fs.symlinkSync(inside, path.join(ws.dir, `link-in-${counter}.git`));
    git(r.dir, 'remote', 'add', 'linked', `../link-in-${counter}.git`);
    await request(service().app).post(`/git/${r.rel}/push`).send({ remote: 'linked' }).expect(200);
    expect(git(inside, 'rev-parse', 'refs/heads/main')).toBe(git(r.dir, 'rev-parse', 'HEAD'));
  });

  it.each([
    ['insteadOf', 'insteadOf'],
    ['pushInsteadOf', 'pushInsteadOf'],
  ])('a %s rewrite to outside the roots pushes nowhere outside', async (_label, kind) => {
    const r = repo('insteadof');
    const out = outsideTarget();
    git(r.dir, 'config', `url.${out}.${kind}`, 'inside:');
    git(r.dir, 'remote', 'add', 'origin', 'inside:repo');
    const res = await request(service().app).post(`/git/${r.rel}/push`).send({});
    expect(res.body.success).toBe(false);
    if (mode === 'SANDBOX=off') expect(res.body.error.toLowerCase()).toContain(`url.${out}.${kind}`.toLowerCase());
    expect([403, 502]).toContain(res.status);
    expect(refs(out)).toBe('');
  });

  it.each([
    ['ext::sh -c touch% <marker>', (m: string) => `ext::sh -c touch% ${m}`],
    ['ext:: with quotes', (m: string) => `ext::sh -c "touch ${m}"`],
    ['EXT:: (another helper name)', (m: string) => `EXT::sh -c touch% ${m}`],
    ['fd::', () => 'fd::7'],
    ['ext:: as a second pushurl', (m: string) => `ext::sh -c touch% ${m}`],
  ])('refuses the %s transport before git runs', async (label, url) => {
    const r = repo('ext');
    const name = `ext-${counter}`;
    if (label.includes('second')) {
      const inside = path.join(ws.dir, `ext-inside-${counter}.git`);
      git(ws.dir, 'init', '-q', '--bare', inside);
      git(r.dir, 'remote', 'add', 'origin', inside);
      git(r.dir, 'config', '--add', 'remote.origin.pushurl', inside);
      git(r.dir, 'config', '--add', 'remote.origin.pushurl', url(path.join(outside.dir, name)));
    } else {
      git(r.dir, 'remote', 'add', 'origin', url(path.join(outside.dir, name)));
    }
    git(r.dir, 'config', 'protocol.ext.allow', 'always');
    git(r.dir, 'config', 'protocol.allow', 'always');
    const res = await request(service().app).post(`/git/${r.rel}/push`).send({}).expect(403);
    expect(res.body.error).toMatch(/remote helper/);
    expectNotRun(r.dir, name, res);
  });

  it('a target repository with receive hooks, its own fsmonitor, hooksPath and updateInstead smudge: the push lands and nothing runs', async () => {
    const r = repo('hostile-target');
    const target = makeRepo(path.join(ws.dir, `target-${counter}`));
    const name = `target-${counter}`;
    const cmd = `touch '${path.join(outside.dir, name)}' '${path.join(target, '.git', name)}'`;
    git(target, 'checkout', '-q', '-b', 'side');
    git(r.dir, 'remote', 'add', 'origin', target);
    git(r.dir, 'fetch', '-q', 'origin');
    git(r.dir, 'reset', '-q', '--hard', 'origin/main');
    write(path.join(r.dir, 'new.txt'), 'new\n');
    git(r.dir, 'add', 'new.txt');
    git(r.dir, 'commit', '-q', '-m', 'to the hostile target');
    // Armed after the setup above, which is plain git.
    for (const hook of [
      'pre-receive',
      'update',
      'post-receive',
      'post-update',
      'reference-transaction',
      'push-to-checkout',
      'proc-receive',
    ]) {
      write(path.join(target, '.git', 'hooks', hook), `#!/bin/sh\n${cmd}\n`);
      fs.chmodSync(path.join(target, '.git', 'hooks', hook), 0o755);
      write(path.join(target, 'tree-hooks', hook), `#!/bin/sh\n${cmd}\n`);
      fs.chmodSync(path.join(target, 'tree-hooks', hook), 0o755);
    }
    git(target, 'config', 'core.fsmonitor', `${cmd}; false`);
    git(target, 'config', 'filter.evil.smudge', `${cmd}; cat`);
    git(target, 'config', 'core.alternateRefsCommand', cmd);
    write(path.join(target, '.git', 'info', 'attributes'), '* filter=evil\n');
    for (const hooksPath of [undefined, 'tree-hooks']) {
      if (hooksPath) git(target, 'config', 'core.hooksPath', hooksPath);
      const res = await request(service().app).post(`/git/${r.rel}/push`).send({ branch: 'main' }).expect(200);
      expect(res.body.result.pushed || res.body.result.upToDate).toBe(true);
      expect(git(target, 'rev-parse', 'refs/heads/main')).toBe(git(r.dir, 'rev-parse', 'HEAD'));
      expect(fs.existsSync(path.join(outside.dir, name))).toBe(false);
      expect(fs.existsSync(path.join(target, '.git', name))).toBe(false);
    }
    // The checked-out branch is refused whatever the target says (updateInstead would check out, running its smudge).
    git(target, 'config', 'receive.denyCurrentBranch', 'updateInstead');
    // (the test's own checkouts in the target turn its programs off)
    const tame = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'filter.evil.smudge=cat'];
    git(target, ...tame, 'checkout', '-q', 'main');
    git(r.dir, 'commit', '-q', '--allow-empty', '-m', 'again');
    await request(service().app).post(`/git/${r.rel}/push`).send({ branch: 'main' });
    expect(fs.existsSync(path.join(outside.dir, name))).toBe(false);
    // The hooks are real: a plain push runs them.
    git(target, ...tame, 'checkout', '-q', 'side');
    git(r.dir, 'push', '-q', 'origin', 'main');
    expect(fs.existsSync(path.join(outside.dir, name))).toBe(true);
  });
});

describe('network remotes: ssh command, credential helper, askpass', () => {
  let server: http.Server;
  let port: number;
  const seen: string[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end('auth');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it.each(modes)(
    '%s: a loopback push URL is refused without OUTBOUND_ALLOWLIST; with it, no helper, askpass or ssh command of the repository runs',
    async (mode) => {
      const allowed = await buildApp(ws.dir, {
        OUTBOUND_ALLOWLIST: '127.0.0.1',
        GIT_PUSH_PROTOCOLS: 'http,ssh',
        ...(mode === 'SANDBOX=off' ? { SANDBOX: 'off' } : {}),
      });
      const service = mode === 'SANDBOX=off' ? unsandboxed : sandboxed;
      try {
        seen.length = 0;
        const r = repo('network');
        const name = `network-${counter}`;
        git(r.dir, 'remote', 'add', 'origin', `http://127.0.0.1:${port}/repo.git`);
        git(r.dir, 'remote', 'add', 'viassh', `ssh://git@127.0.0.1:1/repo.git`);
        git(r.dir, 'remote', 'add', 'scp', `git@127.0.0.1:repo.git`);
        for (const remote of ['viassh', 'scp']) {
          const refused = await request(service.app).post(`/git/${r.rel}/push`).send({ remote }).expect(403);
          expect(refused.body.error).toMatch(/loopback.*OUTBOUND_ALLOWLIST/s);
        }
        const plainHttp = await request(service.app).post(`/git/${r.rel}/push`).send({}).expect(403);
        expect(plainHttp.body.error).toMatch(/GIT_PUSH_PROTOCOLS/);
        expect(seen).toEqual([]);

        const settings: [string, string][] = [
          ['credential.helper', `!${payload(r.dir, name)}`],
          [`credential.http://127.0.0.1:${port}.helper`, `!${payload(r.dir, name)}`],
          ['core.askPass', payload(r.dir, name)],
          ['core.sshCommand', payload(r.dir, name)],
          ['remote.viassh.receivepack', payload(r.dir, name)],
        ];
        for (const [key, value] of settings) git(r.dir, 'config', key, value);
        const http401 = await request(allowed.app).post(`/git/${r.rel}/push`).send({});
        const ssh = await request(allowed.app).post(`/git/${r.rel}/push`).send({ remote: 'viassh' });
        const scp = await request(allowed.app).post(`/git/${r.rel}/push`).send({ remote: 'scp' });
        if (mode === 'sandboxed') {
          // git reached the server (the pinned, approved address) and failed for want of credentials.
          expect(http401.status).toBe(502);
          expect(seen.some((u) => u.includes('/repo.git/info/refs'))).toBe(true);
          expect(ssh.status).toBe(502);
          expect(scp.status).toBe(502);
        } else {
          for (const res of [http401, ssh, scp]) expect(res.status).toBe(403);
          expect(http401.body.error).toMatch(/credential|askpass|sshcommand|receivepack/);
        }
        for (const res of [http401, ssh, scp]) expectNotRun(r.dir, name, res);
      } finally {
        await allowed.close();
      }
    },
  );
});

describe('a caller holding only a read-only API key (through the gateway)', () => {
  const tmp = tempDir('sec-git-gw-');
  let gateway: RunningGateway;
  let stopService: () => Promise<void>;
  let key: string;

  beforeAll(async () => {
    const running = await serve(sandboxed.app);
    stopService = async () => {
      running.server.closeAllConnections();
      await running.stop();
    };
    const reader = newApiKey('reader', ['tools:read']);
    key = reader.key;
    fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([reader.entry]));
    gateway = await startGateway([{ id: 'git-mcp', url: running.url }], path.join(tmp.dir, 'gw'), {
      API_KEYS_FILE: path.join(tmp.dir, 'keys.json'),
      HEALTH_POLL_MS: '600000',
      AUDIT_LOG_FILE: 'off',
    });
  });
  afterAll(async () => {
    await gateway.stop();
    await stopService();
    tmp.cleanup();
  });

  it('git_status on a hostile repository runs nothing and writes nothing; git_commit is not its to call', async () => {
    const r = repo('readonly-key');
    const name = `readonly-${counter}`;
    git(r.dir, 'config', 'core.fsmonitor', payload(r.dir, name));
    git(r.dir, 'config', 'filter.evil.clean', `${payload(r.dir, name)}; cat`);
    write(path.join(r.dir, '.gitattributes'), '* filter=evil\n');
    write(path.join(r.dir, 'README.md'), 'changed\n');
    const before = snapshot(path.join(r.dir, '.git'));
    const client = new Client({ name: 'git-readonly', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      const statusName = tools.find((t) => t.endsWith('git_status'))!;
      expect(statusName).toBeDefined();
      expect(tools.some((t) => t.endsWith('git_commit'))).toBe(false);
      const result = await client.callTool({ name: statusName, arguments: { path: r.rel } });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.structuredContent ?? result.content)).toContain('README.md');
      const commit = await client
        .callTool({ name: statusName.replace('git_status', 'git_commit'), arguments: { path: r.rel, message: 'x', all: true } })
        .catch((err: Error) => ({ isError: true, content: [{ type: 'text', text: err.message }] }));
      expect(commit.isError).toBe(true);
    } finally {
      await client.close();
    }
    expectNotRun(r.dir, name);
    expect(snapshot(path.join(r.dir, '.git'))).toEqual(before);
  });
});

/** Every file under `dir` with its size and modification time: a read-only call changes none. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const st = fs.statSync(file);
    out[path.relative(dir, file)] = `${st.size}:${st.mtimeMs}`;
  }
  return out;
}

describe('secret files in a repository: named, never shown', () => {
  const secrets: [string, string][] = [
    ['.env', 'DB_PASSWORD=SECRET-ENV-1'],
    ['config/.env.production', 'TOKEN=SECRET-ENV-2'],
    ['deploy/id_rsa', '-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET-KEY-3'],
    ['certs/server.PEM', 'SECRET-PEM-4'],
    ['dir with space/.ENV', 'SECRET-ENV-5'],
    ['odd "quoted"\tname.key', 'SECRET-KEY-6'],
    ['ünïcode/.npmrc', '//registry/:_authToken=SECRET-NPM-7'],
    ['.ssh/config', 'IdentityFile SECRET-SSH-8'],
  ];

  it.each(modes)(
    '%s: git_diff (work tree, staged, between commits) withholds every secret file and shows the rest',
    async (_mode, service) => {
      const r = repo('secrets');
      for (const [file] of secrets) write(path.join(r.dir, file), 'placeholder\n');
      write(path.join(r.dir, '.env.example'), 'DB_PASSWORD=\n');
      write(path.join(r.dir, 'notes.md'), 'notes\n');
      git(r.dir, 'add', '-A');
      git(r.dir, 'commit', '-q', '-m', 'placeholders');
      const base = git(r.dir, 'rev-parse', 'HEAD').trim();
      for (const [file, content] of secrets) write(path.join(r.dir, file), `${content}\n`);
      write(path.join(r.dir, '.env.example'), 'DB_PASSWORD=changeme\n');
      // a content line that looks like a header cannot start a section (it is prefixed with +)
      write(path.join(r.dir, 'notes.md'), 'notes\ndiff --git a/.env b/.env\nvisible change\n');
      const leaks = (res: request.Response) =>
        secrets.filter(([, content]) => JSON.stringify(res.body).includes(content.split('\n').pop()!));

      const work = await request(service().app).get(`/git/${r.rel}/diff`).expect(200);
      expect(leaks(work)).toEqual([]);
      expect(work.body.result.diff).toContain('+visible change');
      expect(work.body.result.diff).toContain('+DB_PASSWORD=changeme');
      expect([...work.body.result.withheld].sort()).toEqual(secrets.map(([f]) => f).sort());
      expect(work.body.result.files.map((f: { file: string }) => f.file).sort()).toEqual(['.env.example', 'notes.md']);

      git(r.dir, 'add', '-A');
      const staged = await request(service().app).get(`/git/${r.rel}/diff`).query({ staged: true }).expect(200);
      expect(leaks(staged)).toEqual([]);
      expect(staged.body.result.withheld).toHaveLength(secrets.length);
      git(r.dir, 'commit', '-q', '-m', 'secrets');
      const commits = await request(service().app).get(`/git/${r.rel}/diff`).query({ commit1: base, commit2: 'HEAD' }).expect(200);
      expect(leaks(commits)).toEqual([]);
      expect(commits.body.result.diff).toContain('+visible change');
      // cut by the size limit inside a secret section: still nothing of it
      const small = await buildApp(ws.dir, { GIT_MAX_DIFF_BYTES: '1024', ...(_mode === 'SANDBOX=off' ? { SANDBOX: 'off' } : {}) });
      const cut = await request(small.app).get(`/git/${r.rel}/diff`).query({ commit1: base, commit2: 'HEAD' }).expect(200);
      await small.close();
      expect(leaks(cut)).toEqual([]);

      for (const file of ['.env', 'config/.ENV.production', 'deploy/id_rsa', './.ssh/config', `${r.dir}/.env`]) {
        const one = await request(service().app).get(`/git/${r.rel}/diff`).query({ file, commit1: base }).expect(403);
        expect(one.body.error).toMatch(/secret file/);
        await request(service().app).get(`/git/${r.rel}/log`).query({ file }).expect(403);
      }
      const commit = await request(service().app)
        .post(`/git/${r.rel}/commit`)
        .send({ message: 'x', files: ['.env'] })
        .expect(403);
      expect(commit.body.error).toMatch(/SECRET_FILES/);
    },
  );
});
