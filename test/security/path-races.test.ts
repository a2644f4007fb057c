/**
 * Check, then open (issue 27, item 5): a path is confined by resolving it, and opened a moment
 * later; a directory swapped for a symlink to outside in between must not leak the outside file.
 * The kit's Workspace opens the parent directory, checks the real path of that descriptor
 * (/proc/self/fd/N) and opens the name inside exactly that directory with O_NOFOLLOW; walks read each
 * directory through its checked descriptor. Deterministic tests make the swap happen between the two
 * steps; the race tests swap a directory and a symlink to outside in a tight loop in another process
 * while the real services (createApp, on a real port) read, list, search, write and index through it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RunningServer, ServiceApp } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { serve, tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp as createCodeGraph } from '../../services/code-graph-mcp/src/app';
import { configSchema as codeGraphSchema } from '../../services/code-graph-mcp/src/config';
import { createApp as createConfig } from '../../services/config-mcp/src/app';
import { configSchema as configMcpSchema } from '../../services/config-mcp/src/config';
import { createApp as createFilesystem } from '../../services/filesystem-mcp/src/app';
import { configSchema as filesystemSchema } from '../../services/filesystem-mcp/src/config';
import { createApp as createLog } from '../../services/log-mcp/src/app';
import { configSchema as logSchema } from '../../services/log-mcp/src/config';

const OUTSIDE = 'OUTSIDE-CONTENT-MARKER';
const INSIDE = 'inside content\n';

let tmp: ReturnType<typeof tempDir>;
let root: string;
let outside: string;
let dataDir: string;

/** root/dir holds the legitimate files; outside/ holds the same names with OUTSIDE in them. */
function layout(base: string, text: (name: string) => string) {
  fs.mkdirSync(base, { recursive: true });
  fs.writeFileSync(path.join(base, 'data.txt'), text('data'));
  fs.writeFileSync(path.join(base, 'cfg.json'), JSON.stringify({ value: text('cfg').trim() }) + '\n');
  fs.writeFileSync(path.join(base, 'app.log'), `{"level":"info","message":"${text('log').trim()}"}\n`);
  fs.writeFileSync(path.join(base, 'mod.py'), `def ${text('py').includes(OUTSIDE) ? 'outside_marker' : 'inside_function'}():\n    pass\n`);
}

beforeAll(() => {
  tmp = tempDir('path-races-');
  root = path.join(tmp.dir, 'root');
  outside = path.join(tmp.dir, 'outside');
  dataDir = path.join(root, '.data');
  layout(path.join(root, 'dir'), () => INSIDE);
  layout(outside, () => `${OUTSIDE}\n`);
  fs.writeFileSync(path.join(outside, 'outside-only.txt'), `${OUTSIDE}\n`);
  fs.writeFileSync(path.join(root, '.env'), `TOKEN=${OUTSIDE}-env\n`);
  fs.mkdirSync(path.join(dataDir, 'secrets-ui'), { recursive: true });
  fs.writeFileSync(path.join(dataDir, 'secrets-ui', 'data.txt'), `${OUTSIDE}-store\n`);
});
afterAll(() => tmp.cleanup());

const outsideListing = () => fs.readdirSync(outside).sort();

describe('open, then verify (deterministic: the swap lands between the check and the open)', () => {
  let ws: Workspace;
  const dir = () => path.join(root, 'dir');
  const parked = () => path.join(root, 'dir.parked');
  /** Replace root/dir by a symlink to `target` for the duration of `fn`. */
  async function swapped<T>(target: string, fn: () => Promise<T> | T): Promise<T> {
    fs.renameSync(dir(), parked());
    fs.symlinkSync(target, dir());
    try {
      return await fn();
    } finally {
      fs.unlinkSync(dir());
      fs.renameSync(parked(), dir());
    }
  }
  const failure = async (p: Promise<unknown> | (() => unknown)) => {
    try {
      await (typeof p === 'function' ? p() : p);
      return 'ok';
    } catch (err) {
      return (err as { code?: string }).code;
    }
  };

  beforeAll(async () => {
    ws = await Workspace.open([root], { protectedPaths: [{ path: dataDir, label: 'DATA_DIR' }] });
  });

  it('a read opened after the swap is refused, where a plain open of the checked path reads the outside file', async () => {
    const resolved = await ws.resolve('dir/data.txt', { mustExist: true });
    await swapped(outside, async () => {
      expect(fs.readFileSync(resolved.absolute, 'utf8')).toContain(OUTSIDE); // the attack is real
      expect(await failure(ws.openFile(resolved.absolute, fs.constants.O_RDONLY))).toBe('FORBIDDEN');
    });
    const opened = await ws.openFile(resolved.absolute, fs.constants.O_RDONLY);
    try {
      expect(await opened.handle.readFile('utf8')).toBe(INSIDE);
      expect(opened.relative).toBe('dir/data.txt');
    } finally {
      await opened.handle.close();
    }
  });

  it('a swap into DATA_DIR inside the root, or the file swapped for a link to a secret, is refused as well', async () => {
    const resolved = await ws.resolve('dir/data.txt', { mustExist: true });
    await swapped(path.join(dataDir, 'secrets-ui'), async () => {
      expect(await failure(ws.openFile(resolved.absolute, fs.constants.O_RDONLY))).toBe('FORBIDDEN');
    });
    const file = path.join(root, 'dir', 'data.txt');
    fs.renameSync(file, `${file}.parked`);
    fs.symlinkSync(path.join(root, '.env'), file);
    try {
      expect(await failure(ws.openFile(resolved.absolute, fs.constants.O_RDONLY))).toBe('ELOOP');
    } finally {
      fs.unlinkSync(file);
      fs.renameSync(`${file}.parked`, file);
    }
  });

  it('a write after the swap creates nothing outside, not even its temporary file', async () => {
    const before = outsideListing();
    const resolved = await ws.resolve('dir/new.txt');
    await swapped(outside, async () => {
      expect(await failure(ws.writeFile(resolved.absolute, 'planted'))).toBe('FORBIDDEN');
      expect(await failure(ws.writeFile(path.join(root, 'dir', 'data.txt'), 'planted'))).toBe('FORBIDDEN');
    });
    expect(outsideListing()).toEqual(before);
    expect(fs.readFileSync(path.join(outside, 'data.txt'), 'utf8')).toContain(OUTSIDE);
    await ws.writeFile(resolved.absolute, 'fine');
    expect(fs.readFileSync(path.join(root, 'dir', 'new.txt'), 'utf8')).toBe('fine');
    fs.rmSync(path.join(root, 'dir', 'new.txt'));
  });

  it('mkdir -p through a swapped directory makes nothing outside', async () => {
    const resolved = await ws.resolve('dir/a/b/c');
    await swapped(outside, async () => {
      expect(await failure(() => ws.makeDirectories(resolved.absolute))).not.toBe('ok');
    });
    expect(outsideListing()).not.toContain('a');
    ws.makeDirectories(resolved.absolute);
    expect(fs.statSync(path.join(root, 'dir', 'a', 'b', 'c')).isDirectory()).toBe(true);
    fs.rmSync(path.join(root, 'dir', 'a'), { recursive: true });
  });

  it('a walk step never reads a directory that became a link, and an opened directory is checked', async () => {
    await swapped(outside, async () => {
      // O_DIRECTORY | O_NOFOLLOW on a symlink: ENOTDIR or ELOOP, depending on the kernel
      expect(['ELOOP', 'ENOTDIR']).toContain(await failure(() => ws.readDirectorySync(path.join(root, 'dir'))));
      expect(['ELOOP', 'ENOTDIR']).toContain(await failure(ws.readDirectory(path.join(root, 'dir'))));
      expect(await failure(() => ws.openDirectory(path.join(root, 'dir')))).toBe('FORBIDDEN');
    });
    expect(ws.readDirectorySync(path.join(root, 'dir')).entries.map((e) => e.name)).toContain('data.txt');
  });

  it('verifyDescriptor reads the real path from the descriptor: outside, secret and deleted files are refused', async () => {
    const check = (file: string) => {
      const fd = fs.openSync(file, 'r');
      try {
        return ws.verifyDescriptor(fd, file);
      } finally {
        fs.closeSync(fd);
      }
    };
    expect(check(path.join(root, 'dir', 'data.txt'))).toBe(path.join(root, 'dir', 'data.txt'));
    expect(await failure(() => check(path.join(outside, 'data.txt')))).toBe('FORBIDDEN');
    expect(await failure(() => check(path.join(root, '.env')))).toBe('FORBIDDEN');
    expect(await failure(() => check(path.join(dataDir, 'secrets-ui', 'data.txt')))).toBe('FORBIDDEN');
    const doomed = path.join(root, 'dir', 'doomed.txt');
    fs.writeFileSync(doomed, 'x');
    const fd = fs.openSync(doomed, 'r');
    try {
      fs.rmSync(doomed);
      expect(await failure(() => ws.verifyDescriptor(fd, doomed))).toBe('ENOENT');
    } finally {
      fs.closeSync(fd);
    }
  });
});

describe('races against the real services', () => {
  const RACE_MS = 800;
  const services: ServiceApp[] = [];
  const servers: RunningServer[] = [];
  const urls: Record<string, string> = {};
  let swapper: ChildProcess | undefined;

  /** Another process swaps root/dir and a symlink to outside/ as fast as it can, for `ms`. */
  function startSwapper(ms: number): Promise<void> {
    const script = `
      const fs = require('node:fs');
      const [dir, parked, target, ms] = process.argv.slice(1);
      const end = Date.now() + Number(ms);
      const hold = () => { const until = process.hrtime.bigint() + BigInt(Math.floor(Math.random() * 200000)); while (process.hrtime.bigint() < until); };
      while (Date.now() < end) {
        fs.renameSync(dir, parked); fs.symlinkSync(target, dir); hold();
        fs.unlinkSync(dir); fs.renameSync(parked, dir); hold();
      }`;
    const dir = path.join(root, 'dir');
    swapper = spawn(process.execPath, ['-e', script, dir, `${dir}.race`, outside, String(ms)], { stdio: 'ignore' });
    return new Promise((resolve, reject) => {
      swapper!.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`swapper exited ${code}`))));
    });
  }

  async function call(service: string, tool: string, args: unknown): Promise<{ status: number; text: string }> {
    const res = await fetch(`${urls[service]}/tools/${tool}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(args),
    });
    return { status: res.status, text: await res.text() };
  }

  /** Calls `tool` over and over (4 at a time) until the swapper ends; every answer goes to `seen`. */
  async function hammer(service: string, tool: string, args: unknown, seen: (r: { status: number; text: string }) => void) {
    const done = startSwapper(RACE_MS);
    let running = true;
    void done.finally(() => (running = false));
    const lane = async () => {
      while (running) seen(await call(service, tool, args));
    };
    await Promise.all([lane(), lane(), lane(), lane(), done]);
  }

  /** Tallies answers: a leak is any answer carrying the outside content. */
  const tally = () => {
    const t = { ok: 0, refused: 0, leaks: 0, statuses: new Set<number>(), faults: [] as string[] };
    return {
      t,
      seen: (r: { status: number; text: string }) => {
        t.statuses.add(r.status);
        if (r.text.includes(OUTSIDE) || r.text.includes('outside_marker') || r.text.includes('outside-only')) t.leaks++;
        if (r.status >= 500) t.faults.push(r.text);
        if (r.status === 200) t.ok++;
        else t.refused++;
      },
    };
  };

  beforeAll(async () => {
    const logger = testLogger();
    const env = { ...testConfig, WORKSPACE_ROOTS: root, DATA_DIR: dataDir };
    const built: Record<string, ServiceApp> = {
      fs: await createFilesystem({ config: filesystemSchema.parse(env), logger, defaultMetrics: false }),
      config: createConfig({ config: configMcpSchema.parse(env), logger, environment: {} }),
      log: createLog({ config: logSchema.parse({ ...env, LOG_ROOTS: root }), logger }),
      graph: await createCodeGraph({ config: codeGraphSchema.parse(env), logger, defaultMetrics: false }),
    };
    for (const [name, svc] of Object.entries(built)) {
      services.push(svc);
      const server = await serve(svc.app);
      servers.push(server);
      urls[name] = server.url;
    }
  });

  afterAll(async () => {
    swapper?.kill('SIGKILL');
    for (const server of servers) await server.stop();
    for (const svc of services) await svc.close();
  });

  afterEach(() => {
    // the swapper always ends with the real directory in place
    expect(fs.lstatSync(path.join(root, 'dir')).isDirectory()).toBe(true);
  });

  it('file_read never returns the outside file', async () => {
    const { t, seen } = tally();
    await hammer('fs', 'file_read', { path: 'dir/data.txt' }, seen);
    expect(t.leaks).toBe(0);
    expect(t.ok).toBeGreaterThan(0);
    expect(t.faults.slice(0, 3)).toEqual([]);
  });

  it('file_analyze never hashes the outside file', async () => {
    const outsideHash = createHash('sha256')
      .update(fs.readFileSync(path.join(outside, 'data.txt')))
      .digest('hex');
    const { t, seen } = tally();
    await hammer('fs', 'file_analyze', { path: 'dir/data.txt' }, (r) => {
      seen(r);
      if (r.text.includes(outsideHash)) t.leaks++;
    });
    expect(t.leaks).toBe(0);
    expect(t.ok).toBeGreaterThan(0);
    expect(t.faults.slice(0, 3)).toEqual([]);
  });

  it('file_list and file_search never show the outside directory', async () => {
    const list = tally();
    await hammer('fs', 'file_list', { path: 'dir' }, list.seen);
    expect(list.t.leaks).toBe(0);
    expect(list.t.ok).toBeGreaterThan(0);
    const search = tally();
    await hammer('fs', 'file_search', { path: '.', content: OUTSIDE.toLowerCase(), includeHidden: true }, search.seen);
    await hammer('fs', 'file_search', { path: '.', name: '**', includeHidden: true, maxResults: 1000 }, search.seen);
    expect(search.t.leaks).toBe(0);
    expect(search.t.ok).toBeGreaterThan(0);
    expect([...list.t.faults, ...search.t.faults].slice(0, 3)).toEqual([]);
  });

  it('file_write never creates or changes a file outside', async () => {
    const before = outsideListing();
    let i = 0;
    const { t, seen } = tally();
    await hammer('fs', 'file_write', { path: 'dir/written.txt', content: `write ${i++}` }, seen);
    expect(outsideListing()).toEqual(before);
    expect(fs.readFileSync(path.join(outside, 'data.txt'), 'utf8')).toContain(OUTSIDE);
    expect(t.ok).toBeGreaterThan(0);
    expect(t.faults.slice(0, 3)).toEqual([]);
  });

  it('config-mcp, log-mcp and code-graph-mcp never read the outside files', async () => {
    const { t, seen } = tally();
    await hammer('config', 'config_file', { action: 'read', path: 'dir/cfg.json' }, seen);
    await hammer('log', 'log_search', { files: ['dir/app.log'] }, seen);
    await hammer('log', 'log_search', { query: 'marker' }, seen);
    await hammer('graph', 'index_python_project', { root: '.' }, seen);
    expect(t.leaks).toBe(0);
    expect(t.ok).toBeGreaterThan(0);
    expect(t.faults.slice(0, 3)).toEqual([]);
    const graph = await call('graph', 'query_code_graph', { project: '.', name: '*_marker' });
    expect(graph.text).not.toContain('outside_marker');
  });
});
