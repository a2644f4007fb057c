import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AppError } from '@mcp-fleet/kit';
import { Sandbox, sandboxHealth, type SandboxConfig, type SandboxPolicy } from '../src';

const run = promisify(execFile);
const config: SandboxConfig = { SANDBOX: 'bwrap', SANDBOX_BWRAP: 'bwrap', SANDBOX_READ_ONLY_PATHS: [] };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-test-'));
const root = path.join(dir, 'workspace');
const dataDir = path.join(root, '.data');
const outside = path.join(dir, 'outside');

beforeAll(() => {
  fs.mkdirSync(dataDir, { recursive: true });
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(root, 'readme.txt'), 'inside\n');
  fs.writeFileSync(path.join(dataDir, 'admin-token'), 'TOKEN-123\n');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'OUTSIDE\n');
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function sh(sandbox: Sandbox, script: string, policy: Partial<SandboxPolicy> = {}) {
  const cmd = sandbox.command('sh', ['-c', script], { cwd: root, env: { PATH: '/usr/bin:/bin' }, readOnly: [root], ...policy });
  try {
    const { stdout, stderr } = await run(cmd.file, cmd.args, { cwd: root, env: { PATH: process.env.PATH } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('Sandbox (real bubblewrap)', () => {
  let sandbox: Sandbox;
  beforeAll(() => {
    sandbox = Sandbox.open({ ...config, DATA_DIR: dataDir });
  });

  it('finds bubblewrap and says which', () => {
    expect(sandbox.status).toMatchObject({ mode: 'bwrap', available: true });
    expect(sandbox.status.version).toMatch(/^\d+\.\d+/);
  });

  it('shows the workspace, and neither DATA_DIR inside it nor anything outside it', async () => {
    const res = await sh(sandbox, `cat readme.txt; ls -A .data | wc -l; cat ${outside}/secret.txt; ls /root; ls ${os.homedir()}`);
    expect(res.stdout).toContain('inside');
    expect(res.stdout).toMatch(/^0$/m); // .data is an empty directory inside
    expect(res.stdout).not.toContain('TOKEN-123');
    expect(res.stdout).not.toContain('OUTSIDE');
    expect(res.stderr).toContain('No such file or directory');
  });

  it('hides the host: only the system files programs need, no /etc/shadow, no other process', async () => {
    const res = await sh(sandbox, 'ls /etc; cat /etc/shadow; ls /proc | grep -c "^[0-9]"; cat /proc/1/environ | tr "\\0" "\\n"');
    expect(res.stdout).toContain('passwd');
    expect(res.stdout).not.toMatch(/^shadow$/m);
    expect(res.stderr).toMatch(/shadow: No such file/);
    // sh, ls/grep/cat of this pipeline and bubblewrap itself: a handful, never the host's hundreds
    const count = Number(/^(\d+)$/m.exec(res.stdout)?.[1]);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThan(10);
  });

  it('passes exactly the environment it is given (plus HOME and TMPDIR inside)', async () => {
    process.env.SANDBOX_TEST_SECRET = 'leak-me';
    try {
      const cmd = sandbox.command('env', [], { cwd: root, env: { PATH: '/usr/bin:/bin', GIVEN: 'yes' }, readOnly: [root] });
      const out = execFileSync(cmd.file, cmd.args, { encoding: 'utf8' });
      const names = out
        .trim()
        .split('\n')
        .map((l) => l.split('=')[0])
        .sort();
      expect(names).toEqual(['GIVEN', 'HOME', 'PATH', 'PWD', 'TMPDIR']);
      expect(out).not.toContain('leak-me');
    } finally {
      delete process.env.SANDBOX_TEST_SECRET;
    }
  });

  it('writes only where the policy says', async () => {
    const refused = await sh(sandbox, 'echo x > written.txt');
    expect(refused.stderr).toMatch(/Read-only file system/);
    expect(fs.existsSync(path.join(root, 'written.txt'))).toBe(false);
    const allowed = await sh(sandbox, 'echo x > written.txt', { readOnly: [], writable: [root] });
    expect(allowed.code).toBe(0);
    expect(fs.readFileSync(path.join(root, 'written.txt'), 'utf8')).toBe('x\n');
    // even writable, DATA_DIR inside the root stays out of reach
    const store = await sh(sandbox, 'echo forged > .data/admin-token', { readOnly: [], writable: [root] });
    expect(store.code).not.toBe(0);
    expect(fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8')).toBe('TOKEN-123\n');
    fs.rmSync(path.join(root, 'written.txt'));
  });

  it('has no network unless asked, and the network when asked', async () => {
    const server = http.createServer((_req, res) => res.end('reached'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const probe = `fetch("http://127.0.0.1:${port}/").then(r=>r.text()).then(t=>console.log(t),e=>console.log("refused",e.cause?.code))`;
    try {
      const policy = { cwd: root, env: { PATH: '/usr/bin:/bin' }, readOnly: [root] };
      const off = sandbox.command('node', ['-e', probe], policy);
      expect((await run(off.file, off.args)).stdout).toMatch(/refused/);
      const on = sandbox.command('node', ['-e', probe], { ...policy, network: true });
      expect((await run(on.file, on.args)).stdout).toBe('reached\n');
    } finally {
      server.close();
    }
  });

  // A browser MCP server (Playwright MCP) starts Debian's /usr/bin/chromium, a script that reads
  // /etc/chromium.d and exits 2 without it ("cannot open /etc/chromium.d/*"): seen with Playwright
  // MCP behind the gateway, whose stdio servers run in this sandbox.
  it('runs the system chromium headless (its wrapper reads /etc/chromium.d) and renders a page', async () => {
    const cmd = sandbox.command(
      'chromium',
      ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--dump-dom', 'data:text/html,<p>rendered inside</p>'],
      { cwd: root, env: { PATH: '/usr/bin:/bin' }, readOnly: [root] },
    );
    const { stdout } = await run(cmd.file, cmd.args, { timeout: 60_000 });
    expect(stdout).toContain('<p>rendered inside</p>');
  }, 90_000);

  it('ends every process of the sandbox when its first process exits', async () => {
    const marker = `${Math.floor(Math.random() * 1000) + 1000}.123`;
    await sh(sandbox, `(sleep ${marker} &) ; sleep ${marker} & echo started`);
    await new Promise((r) => setTimeout(r, 200));
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(`sleep ${marker}`));
    expect(left).toEqual([]);
  });

  it('ends the sandbox when the program is killed from outside (the call ended)', async () => {
    const child = sandbox.spawn(
      'sh',
      ['-c', 'sleep 77.321 & sleep 77.321'],
      { cwd: root, env: { PATH: '/usr/bin:/bin' } },
      { stdio: 'ignore' },
    );
    const closed = new Promise((r) => child.on('close', r));
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGKILL');
    await closed;
    await new Promise((r) => setTimeout(r, 200));
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.startsWith('sleep 77.321'));
    expect(left).toEqual([]);
  });

  it('reports a program that is not there as spawn does (ENOENT), before starting anything', () => {
    expect(() => sandbox.command('no-such-program-here', [], { cwd: root, env: { PATH: '/usr/bin:/bin' } })).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });

  it('runs a library-spawned program through the launcher, with the policy out of the environment', async () => {
    const launch = sandbox.launcher('sh', { cwd: root, env: { PATH: '/usr/bin:/bin', INSIDE: '1' }, readOnly: [root] });
    try {
      expect(Array.isArray(launch.binary)).toBe(true);
      const [file, program] = launch.binary as [string, string];
      const { stdout } = await run(file, [program, '-c', 'cat readme.txt; env | sort'], { cwd: root, env: launch.env });
      expect(stdout).toContain('inside');
      expect(stdout).toContain('INSIDE=1');
      expect(stdout).not.toContain('FLEET_SANDBOX_ARGS');
    } finally {
      launch.dispose();
    }
  });
});

describe('Sandbox when none can be made', () => {
  it('refuses to start programs and says what to do', () => {
    const sandbox = Sandbox.open({ ...config, SANDBOX_BWRAP: '/nonexistent/bwrap' });
    expect(sandbox.status).toMatchObject({ mode: 'bwrap', available: false });
    let caught: unknown;
    try {
      sandbox.command('true', [], { cwd: '/', env: { PATH: '/usr/bin:/bin' } });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect(caught).toMatchObject({ code: 'NOT_CONFIGURED' });
    expect((caught as Error).message).toMatch(/apt-get install bubblewrap/);
    expect((caught as Error).message).toMatch(/SANDBOX=off/);
  });

  it('runs programs unsandboxed only with the explicit opt-out, and logs it', () => {
    const warnings: string[] = [];
    const logger = { warn: (m: string) => warnings.push(m), info: () => undefined } as unknown as Parameters<typeof Sandbox.open>[1];
    const sandbox = Sandbox.open({ ...config, SANDBOX: 'off' }, logger);
    const cmd = sandbox.command('true', [], { cwd: '/', env: { PATH: '/usr/bin:/bin' } });
    expect(cmd.file).toMatch(/\/true$/);
    expect(warnings.join()).toMatch(/WITHOUT an OS sandbox/);
  });

  it('SANDBOX=outer said outside a sandbox refuses programs, saying how to opt out', () => {
    const warnings: string[] = [];
    const logger = { warn: (m: string) => warnings.push(m), info: () => undefined } as unknown as Parameters<typeof Sandbox.open>[1];
    // this test process is not inside a bubblewrap sandbox (its PID 1 is not bwrap)
    const sandbox = Sandbox.open({ ...config, SANDBOX: 'outer' }, logger);
    expect(sandbox.status).toMatchObject({ mode: 'outer', available: false });
    expect(() => sandbox.command('true', [], { cwd: '/', env: { PATH: '/usr/bin:/bin' } })).toThrow(/SANDBOX=outer.*PID 1.*SANDBOX=off/s);
    expect(() => sandboxHealth(sandbox)).toThrow(/SANDBOX=outer/);
    expect(warnings.join()).toMatch(/refuses to start programs/);
  });

  it('SANDBOX=outer inside a sandbox starts programs directly, logged as information, not as an opt-out', async () => {
    // a process started in bubblewrap (as the gateway starts the toolkit) opens its Sandbox with SANDBOX=outer
    const script = [
      "const { Sandbox, sandboxHealth } = require('./packages/sandbox/src');",
      'const said = [];',
      'const logger = { warn: (m) => said.push(`warn ${m}`), info: (m) => said.push(`info ${m}`) };',
      "const box = Sandbox.open({ SANDBOX: 'outer', SANDBOX_BWRAP: 'bwrap', SANDBOX_READ_ONLY_PATHS: [] }, logger);",
      "const cmd = box.command('true', [], { cwd: '/', env: { PATH: '/usr/bin:/bin' } });",
      'console.log(JSON.stringify({ status: box.status, health: sandboxHealth(box), file: cmd.file, said }));',
    ].join('\n');
    const repo = path.resolve(__dirname, '../../..');
    const inside = Sandbox.open(config).command(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: repo,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      readOnly: [repo, path.dirname(process.execPath)],
    });
    const { stdout } = await promisify(execFile)(inside.file, inside.args, { cwd: repo, env: { PATH: process.env.PATH } });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(out.status).toEqual({ mode: 'outer', available: true });
    expect(out.health).toEqual({ mode: 'outer', available: true });
    expect(out.file).toMatch(/\/true$/);
    expect(out.said.join()).toMatch(/^info SANDBOX=outer/);
    expect(out.said.join()).not.toMatch(/warn/);
  });
});
