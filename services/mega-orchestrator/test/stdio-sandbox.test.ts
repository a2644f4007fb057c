/**
 * The stdio sandbox's declaration and launch (src/stdio-sandbox.ts, src/mcp-servers.ts): the
 * `sandbox` field of an mcpServers entry, the bwrap command line the gateway starts, the home it
 * gets, the opt-outs. The attacks themselves: test/security/gateway-stdio-sandbox.test.ts.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { configuredMcpServers } from '../src/downstream/mcp-servers-config';
import { commandAlone, hiddenPaths, stdioLauncher } from '../src/downstream/stdio-sandbox';
import { startGateway } from './helpers';
import type { StdioServerSpec } from '../src/core/types';

const node = (script: string, extra: Partial<StdioServerSpec> = {}): StdioServerSpec => ({
  transport: 'stdio',
  command: process.execPath,
  args: ['-e', script],
  env: {},
  ...extra,
});

const run = (launch: ReturnType<ReturnType<typeof stdioLauncher>>) =>
  spawnSync(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, encoding: 'utf8', timeout: 10_000 });

describe('the sandbox field of an mcpServers entry', () => {
  const tmp = tempDir('mcp-fleet-stdio-field-');
  afterAll(() => tmp.cleanup());

  it('is read as false, or as paths resolved from the file and with ${VAR} expanded', () => {
    const file = path.join(tmp.dir, 'servers.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          open: { command: 'x', sandbox: false },
          files: { command: 'x', sandbox: { writable: ['roots', '${ROOT}/b'], readOnly: ['/ref'], network: false } },
          plain: { command: 'x' },
        },
      }),
    );
    const specs = configuredMcpServers({ MCP_SERVERS_FILE: file, ROOT: '/srv' }, []);
    const mcp = (id: string) => specs.find((s) => s.id === id)?.mcp as StdioServerSpec;
    expect(mcp('open').sandbox).toBe(false);
    expect(mcp('files').sandbox).toEqual({ network: false, readOnly: ['/ref'], writable: [path.join(tmp.dir, 'roots'), '/srv/b'] });
    expect(mcp('plain').sandbox).toBeUndefined();
  });

  it.each([
    [{ sandbox: true }],
    [{ sandbox: 'off' }],
    [{ sandbox: { writable: '/a' } }],
    [{ sandbox: { network: 'yes' } }],
    [{ sandbox: { mounts: ['/'] } }],
  ])('refuses %j naming the field', (extra) => {
    expect(() => configuredMcpServers({ MCP_SERVERS: JSON.stringify({ bad: { command: 'x', ...extra } }) }, [])).toThrow(/bad.*sandbox/);
  });
});

describe('the launch of a sandboxed stdio server', () => {
  const tmp = tempDir('mcp-fleet-stdio-launch-');
  afterAll(() => tmp.cleanup());

  it('is bwrap with only PATH outside, the server’s env and its own 0700 home inside', () => {
    const dataDir = path.join(tmp.dir, 'data');
    const launch = stdioLauncher({ mode: 'on', dataDir })(
      'probe',
      node(
        'console.log(JSON.stringify({ home: process.env.HOME, token: process.env.TOKEN, gw: process.env.GATEWAY_ONLY ?? null })); require("fs").writeFileSync(process.env.HOME + "/cache", "x")',
        {
          env: { TOKEN: 't' },
        },
      ),
    );
    expect(path.basename(launch.command)).toBe('bwrap');
    expect(Object.keys(launch.env)).toEqual(['PATH']);
    const home = path.join(dataDir, 'mcp-servers', 'probe', 'home');
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    const sep = launch.args.indexOf('--', launch.args.length - 4);
    expect(launch.args.slice(sep - 3, sep)).toEqual(['--setenv', 'HOME', home]);
    process.env.GATEWAY_ONLY = 'secret';
    try {
      const out = run(launch);
      expect(out.stderr).toBe('');
      expect(JSON.parse(out.stdout)).toEqual({ home, token: 't', gw: null });
    } finally {
      delete process.env.GATEWAY_ONLY;
    }
    expect(fs.readFileSync(path.join(home, 'cache'), 'utf8')).toBe('x');
  });

  it('with DATA_DIR inside its cwd, DATA_DIR stays hidden and HOME is the sandbox’s own, writable', () => {
    const project = path.join(tmp.dir, 'project');
    fs.mkdirSync(path.join(project, '.data'), { recursive: true });
    fs.writeFileSync(path.join(project, '.data', 'secret'), 'S');
    const launch = stdioLauncher({ mode: 'on', dataDir: path.join(project, '.data') })(
      'inside',
      node(
        'const fs = require("fs"); fs.writeFileSync(process.env.HOME + "/x", "1"); console.log(fs.readdirSync(".data").length, fs.existsSync("/x"))',
        {
          cwd: project,
        },
      ),
    );
    const out = run(launch);
    expect(out.stdout.trim()).toBe('0 false');
  });

  it('MCP_STDIO_SANDBOX=off and "sandbox": false start the command itself; off is logged as a warning', () => {
    const warnings: string[] = [];
    const logger = {
      warn: (m: string) => warnings.push(m),
      info: () => undefined,
      debug: () => undefined,
      error: () => undefined,
    } as never;
    const spec = node('1', { cwd: tmp.dir, env: { A: 'b' } });
    expect(stdioLauncher({ mode: 'off', dataDir: tmp.dir, logger })('x', spec)).toEqual({
      command: process.execPath,
      args: ['-e', '1'],
      cwd: tmp.dir,
      env: { A: 'b' },
    });
    expect(warnings.join()).toMatch(/MCP_STDIO_SANDBOX=off.*WITHOUT an OS sandbox/);
    expect(stdioLauncher({ mode: 'on', dataDir: tmp.dir })('x', { ...spec, sandbox: false }).command).toBe(process.execPath);
  });

  it('keeps SANDBOX=outer (the inventory servers: run your programs in this sandbox) only for a server it sandboxes', () => {
    const spec = node('1', { cwd: tmp.dir, env: { A: 'b', SANDBOX: 'outer' } });
    const boxed = stdioLauncher({ mode: 'on', dataDir: tmp.dir })('x', spec);
    expect(boxed.command).not.toBe(process.execPath);
    expect(boxed.args.join(' ')).toContain('--setenv SANDBOX outer');
    // started unsandboxed, the server must make its own sandbox: SANDBOX=outer would be a lie
    for (const launch of [
      stdioLauncher({ mode: 'off', dataDir: tmp.dir })('x', spec),
      stdioLauncher({ mode: 'on', dataDir: tmp.dir })('x', { ...spec, sandbox: false }),
    ]) {
      expect(launch).toMatchObject({ command: process.execPath, env: { A: 'b' } });
      expect(launch.env).not.toHaveProperty('SANDBOX');
    }
  });

  it('names the paths in its args that the sandbox does not show, and only those', () => {
    const outside = path.join(tmp.dir, 'servers', 'weather');
    fs.mkdirSync(outside, { recursive: true });
    const script = path.join(outside, 'index.js');
    fs.writeFileSync(script, '');
    const shown = path.join(tmp.dir, 'shown');
    fs.mkdirSync(shown, { recursive: true });
    const args = [script, `--config=${script}`, '/usr/bin', shown, path.join(shown, 'x'), 'relative.js', '/no/such/path', '-y'];
    expect(hiddenPaths(args, ['/usr', shown])).toEqual([script]);
    const launch = stdioLauncher({ mode: 'on', dataDir: path.join(tmp.dir, 'data') })('weather', {
      transport: 'stdio',
      command: process.execPath,
      args: [script],
      env: {},
    });
    expect(launch.hidden).toEqual([script]);
    // shown once its directory is declared, or is its cwd
    const declared = stdioLauncher({ mode: 'on', dataDir: path.join(tmp.dir, 'data') })('weather', {
      transport: 'stdio',
      command: process.execPath,
      args: [script],
      env: {},
      sandbox: { readOnly: [outside] },
    });
    expect(declared.hidden).toBeUndefined();
    expect(run(declared).status).toBe(0);
  });

  it('a server that fails to start because its script is outside the sandbox is told what to declare (/services)', async () => {
    const dir = path.join(tmp.dir, 'elsewhere');
    fs.mkdirSync(dir, { recursive: true });
    const script = path.join(dir, 'server.mjs');
    fs.writeFileSync(script, 'process.stdin.resume();');
    const g = await startGateway(
      [{ id: 'elsewhere', url: 'stdio:elsewhere', mcp: { transport: 'stdio', command: process.execPath, args: [script], env: {} } }],
      path.join(tmp.dir, 'gw'),
      { HEALTH_POLL_MS: '600000', HEALTH_TIMEOUT_MS: '5000' },
    );
    try {
      const reason = async () => {
        await g.gw.refresh();
        const body = (await (await fetch(`${g.url}/services`)).json()) as { services: { id: string; reason?: string }[] };
        return body.services.find((s) => s.id === 'elsewhere')?.reason ?? '';
      };
      let last = '';
      for (const end = Date.now() + 20_000; !/does not show/.test((last = await reason())) && Date.now() < end;)
        await new Promise((r) => setTimeout(r, 200));
      expect(last).toContain(`its OS sandbox does not show ${script}, named in its args`);
      expect(last).toContain('"sandbox": {"readOnly": [...]}');
    } finally {
      await g.stop();
    }
  }, 30_000);

  it('names the directory to declare for a command that the sandbox mounts alone, and only for such a command', () => {
    const proj = path.join(tmp.dir, 'alone-proj');
    const modules = path.join(proj, 'node_modules');
    fs.mkdirSync(path.join(modules, '.bin'), { recursive: true });
    fs.mkdirSync(path.join(modules, 'srv', 'dist'), { recursive: true });
    // pnpm's shim (a script of its own) and npm's (a symlink to the package's script)
    const shim = path.join(modules, '.bin', 'srv-pnpm');
    fs.writeFileSync(shim, '#!/bin/sh\nexec node "$(dirname "$0")/../srv/dist/index.js" "$@"\n', { mode: 0o755 });
    const script = path.join(modules, 'srv', 'dist', 'index.js');
    fs.writeFileSync(script, '#!/usr/bin/env node\n', { mode: 0o755 });
    fs.symlinkSync('../srv/dist/index.js', path.join(modules, '.bin', 'srv-npm'));
    const tool = path.join(tmp.dir, 'alone-bin', 'server');
    fs.mkdirSync(path.dirname(tool), { recursive: true });
    fs.writeFileSync(tool, '#!/bin/sh\n', { mode: 0o755 });
    expect(commandAlone(shim, undefined, ['/usr'])).toBe(modules);
    expect(commandAlone(path.join(modules, '.bin', 'srv-npm'), undefined, ['/usr'])).toBe(modules);
    // by name, looked up on the server's PATH
    expect(commandAlone('srv-pnpm', `/nowhere:${path.join(modules, '.bin')}`, ['/usr'])).toBe(modules);
    expect(commandAlone(tool, undefined, ['/usr'])).toBe(path.dirname(tool));
    // shown already (a system directory, or declared), or not there at all: nothing to say
    expect(commandAlone(process.execPath, undefined, ['/usr', '/bin'])).toBeUndefined();
    expect(commandAlone(shim, undefined, ['/usr', modules])).toBeUndefined();
    expect(commandAlone(path.join(tmp.dir, 'no-such-program'), undefined, ['/usr'])).toBeUndefined();
    const launcher = stdioLauncher({ mode: 'on', dataDir: path.join(tmp.dir, 'data') });
    expect(launcher('srv', { transport: 'stdio', command: shim, args: [], env: {} }).commandAlone).toEqual({
      command: shim,
      declare: modules,
    });
    expect(
      launcher('srv', { transport: 'stdio', command: shim, args: [], env: {}, sandbox: { readOnly: [modules] } }).commandAlone,
    ).toBeUndefined();
    expect(launcher('srv', { transport: 'stdio', command: process.execPath, args: [], env: {} }).commandAlone).toBeUndefined();
  });

  it('a server started by a node_modules/.bin shim fails alone in the sandbox, is told what to declare, and starts once it is (/services)', async () => {
    // an MCP server laid out as npm packages are: the shim in .bin, the server beside it in its package
    const modules = path.join(tmp.dir, 'shim-proj', 'node_modules');
    fs.mkdirSync(path.join(modules, '.bin'), { recursive: true });
    fs.mkdirSync(path.join(modules, 'sloppy'), { recursive: true });
    fs.copyFileSync(path.join(__dirname, 'fixtures', 'sloppy-mcp-server.mjs'), path.join(modules, 'sloppy', 'server.mjs'));
    const shim = path.join(modules, '.bin', 'sloppy-server');
    fs.writeFileSync(shim, `#!/bin/sh\nexec ${process.execPath} "$(dirname "$0")/../sloppy/server.mjs" "$@"\n`, { mode: 0o755 });
    const status = async (g: Awaited<ReturnType<typeof startGateway>>, id: string) => {
      await g.gw.refresh();
      const body = (await (await fetch(`${g.url}/services`)).json()) as { services: { id: string; status: string; reason?: string }[] };
      return body.services.find((s) => s.id === id);
    };
    const g = await startGateway(
      [
        { id: 'bare', url: 'stdio:bare', mcp: { transport: 'stdio', command: shim, args: [], env: {} } },
        {
          id: 'declared',
          url: 'stdio:declared',
          mcp: { transport: 'stdio', command: shim, args: [], env: {}, sandbox: { readOnly: [modules] } },
        },
      ],
      path.join(tmp.dir, 'gw-shim'),
      { HEALTH_POLL_MS: '600000', HEALTH_TIMEOUT_MS: '5000' },
    );
    try {
      let bare = '';
      for (const end = Date.now() + 20_000; !/mounted alone/.test((bare = (await status(g, 'bare'))?.reason ?? '')) && Date.now() < end;)
        await new Promise((r) => setTimeout(r, 200));
      expect(bare).toContain(`its command ${shim} lies outside the directories its OS sandbox shows and is mounted alone`);
      expect(bare).toContain(`"sandbox": {"readOnly": ["${modules}"]}`);
      let declared: { status: string; reason?: string } | undefined;
      for (const end = Date.now() + 20_000; (declared = await status(g, 'declared'))?.status !== 'healthy' && Date.now() < end;)
        await new Promise((r) => setTimeout(r, 200));
      expect(declared).toMatchObject({ status: 'healthy' });
    } finally {
      await g.stop();
    }
  }, 60_000);

  it('a command that is not there, and a server that exits before answering, are said plainly (/services)', async () => {
    const g = await startGateway(
      [
        { id: 'nocmd', url: 'stdio:nocmd', mcp: { transport: 'stdio', command: 'no-such-mcp-server', args: [], env: {} } },
        {
          id: 'nocmd-bare',
          url: 'stdio:nocmd-bare',
          mcp: { transport: 'stdio', command: 'no-such-mcp-server', args: [], env: {}, sandbox: false },
        },
        {
          id: 'exits',
          url: 'stdio:exits',
          mcp: {
            transport: 'stdio',
            command: process.execPath,
            args: ['-e', 'console.error("TOKEN is required"); process.exit(1)'],
            env: {},
          },
        },
      ],
      path.join(tmp.dir, 'gw-start'),
      { HEALTH_POLL_MS: '600000', HEALTH_TIMEOUT_MS: '5000' },
    );
    try {
      await g.gw.refresh();
      const body = (await (await fetch(`${g.url}/services`)).json()) as { services: { id: string; reason?: string }[] };
      const reason = (id: string) => body.services.find((s) => s.id === id)?.reason ?? '';
      const missing =
        'its command no-such-mcp-server was not found on the gateway\'s PATH: install it there, or give its full path as "command"';
      expect(reason('nocmd')).toContain(missing);
      expect(reason('nocmd-bare')).toContain(missing);
      expect(reason('exits')).toContain(
        "its process ended before it answered initialize or server/discover (1 line on its stderr: see the gateway's log)",
      );
      // what it wrote stays in the gateway's log (it may echo its environment)
      expect(reason('exits')).not.toContain('TOKEN');
    } finally {
      await g.stop();
    }
  }, 30_000);
});
