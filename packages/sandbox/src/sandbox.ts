/**
 * The OS sandbox around every program the fleet starts (docs/security.md, "The sandbox"). A program
 * runs inside bubblewrap and sees only: the system directories, read-only; the directories its tool
 * needs (the workspace roots, read-write only where the tool writes); an empty /tmp; its own /proc
 * in its own PID namespace (nothing outlives the sandbox's first process, no other process is
 * visible); no network unless the tool's purpose needs it; no capabilities; the environment it is
 * given and nothing else. DATA_DIR and the service's home are never mounted, and are hidden where
 * they lie inside a mounted directory. The command allowlists stay as a second layer.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError, bool, csv, processEnv, type Logger } from '@mcp-fleet/kit';
import { z } from 'zod';

/** Configuration shared by every service that starts programs (spread into its config schema). */
export const sandboxEnvShape = {
  SANDBOX: z
    .enum(['bwrap', 'off', 'outer'])
    .default('bwrap')
    .describe(
      'How programs are confined: bwrap (bubblewrap; programs are refused when it cannot run), off (programs run unsandboxed: an explicit opt-out, logged at start; see docs/security.md) or outer (this process already runs inside a bubblewrap sandbox made by the one that started it, where bubblewrap cannot nest: programs run in that sandbox, with the safeguards of off; the gateway sets it for the stdio servers of the inventory it sandboxes; said outside a sandbox, programs are refused).',
    ),
  SANDBOX_BWRAP: z.string().min(1).default('bwrap').describe('The bubblewrap program (a name looked up on PATH, or an absolute path).'),
  SANDBOX_READ_ONLY_PATHS: csv([]).describe(
    'Further directories mounted read-only inside the sandbox (absolute paths), e.g. a toolchain outside /usr.',
  ),
  SANDBOX_KILL_ON_EXIT: bool(true).describe('Kill the sandboxed program when the service exits (bubblewrap --die-with-parent).'),
};

export interface SandboxConfig {
  SANDBOX: 'bwrap' | 'off' | 'outer';
  SANDBOX_BWRAP: string;
  SANDBOX_READ_ONLY_PATHS: string[];
  SANDBOX_KILL_ON_EXIT?: boolean;
  /** The service's DATA_DIR: never visible inside. */
  DATA_DIR?: string;
}

/** What one program may see and do. */
export interface SandboxPolicy {
  /** Working directory (must lie inside a mounted directory). */
  cwd: string;
  /** The whole environment inside; nothing else is passed. */
  env: Record<string, string>;
  /** Mounted read-write at the same path. */
  writable?: string[];
  /** Mounted read-only at the same path. */
  readOnly?: string[];
  /** Paths covered by an empty directory (e.g. a store that lies inside a mounted root). */
  hidden?: string[];
  /** Share the host's network (git fetch/push to a remote); off by default. */
  network?: boolean;
}

/** A sandbox and the directories one service's programs may see in it (besides the system's). */
export interface Confinement {
  sandbox: Sandbox;
  readOnly?: string[];
  writable?: string[];
}

export interface SandboxStatus {
  mode: 'bwrap' | 'off' | 'outer';
  available: boolean;
  /** bubblewrap's version, when it runs. */
  version?: string;
  /** Why no sandbox can be made, when it cannot. */
  reason?: string;
}

/** System directories mounted read-only: programs and their libraries. */
const SYSTEM_DIRS = ['/usr'];
/** Top-level names that are directories or (merged /usr) symlinks into /usr. */
const SYSTEM_TOP = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** The host's directories every sandbox shows (read-only): what a caller need not name in a policy. */
export const SYSTEM_PATHS: readonly string[] = [...SYSTEM_DIRS, ...SYSTEM_TOP];
/** The few files of /etc programs read; not /etc itself (it holds the host's secrets). */
const ETC_FILES = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/mime.types',
  '/etc/magic',
  '/etc/fonts',
  '/etc/ssl/certs',
  '/etc/ca-certificates',
  '/etc/pki/tls/certs',
  // Debian's /usr/bin/chromium is a script that reads its flags from here and stops without them: a
  // browser MCP server (Playwright MCP, Puppeteer's) runs it. Default flags and preferences, no secrets.
  '/etc/chromium.d',
  '/etc/chromium',
];
/** Only with the network: name resolution. */
const ETC_NETWORK = ['/etc/resolv.conf', '/etc/hosts', '/etc/host.conf', '/etc/gai.conf', '/etc/services', '/etc/protocols'];

/** Inside the sandbox, HOME is an empty directory of its own /tmp. */
export const SANDBOX_HOME = '/tmp/home';

const RECHECK_MS = 10_000;

/** `candidate` is `dir` or lies inside it (both absolute, real paths). */
export function isUnder(dir: string, candidate: string): boolean {
  return candidate === dir || candidate.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

function realOrSelf(p: string): string {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return path.resolve(p);
  }
}

/** A program's absolute path: names are looked up on PATH as execvp would; undefined when not found. */
export function resolveProgram(file: string, pathValue: string | undefined): string | undefined {
  const executable = (candidate: string) => {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return fs.statSync(candidate).isFile();
    } catch {
      return false;
    }
  };
  if (file.includes('/')) {
    const absolute = path.resolve(file);
    return executable(absolute) ? absolute : undefined;
  }
  for (const dir of (pathValue ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, file);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/** The error spawn gives for a program that is not there, so callers keep one ENOENT path. */
function notFound(file: string): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`spawn ${file} ENOENT`);
  err.code = 'ENOENT';
  err.syscall = `spawn ${file}`;
  err.path = file;
  return err;
}

export class Sandbox {
  private status_: SandboxStatus;
  private checkedAt = 0;
  private readonly systemArgs: string[];
  private readonly extraReadOnly: string[];
  private readonly hiddenAlways: string[];

  private constructor(
    private readonly config: SandboxConfig,
    private readonly logger?: Logger,
  ) {
    this.status_ = { mode: config.SANDBOX, available: false, reason: 'not checked yet' };
    this.extraReadOnly = config.SANDBOX_READ_ONLY_PATHS.filter((p) => path.isAbsolute(p));
    this.hiddenAlways = [config.DATA_DIR, os.homedir()].filter((p): p is string => typeof p === 'string' && p !== '' && p !== '/');
    this.systemArgs = systemMounts();
  }

  /** Checks once that bubblewrap can make a sandbox here; logs the opt-out loudly. */
  static open(config: SandboxConfig, logger?: Logger): Sandbox {
    const sandbox = new Sandbox(config, logger);
    if (config.SANDBOX === 'outer') {
      // Said, and true: PID 1 of this process's namespace is bubblewrap (the sandbox it was started in).
      // Said falsely (a service started without one), programs are refused: off is the way to opt out.
      const inside = insideBubblewrap();
      sandbox.status_ = inside
        ? { mode: 'outer', available: true }
        : {
            mode: 'outer',
            available: false,
            reason: 'SANDBOX=outer says this process runs inside an OS sandbox, but it does not (its PID 1 is not bubblewrap).',
          };
      if (inside) {
        logger?.info('SANDBOX=outer: programs run inside the OS sandbox this process was started in, without one of their own.', {
          sandbox: 'outer',
        });
      } else {
        logger?.warn(`This service refuses to start programs: ${sandbox.status_.reason} Unset SANDBOX to make its own sandbox.`, {
          sandbox: 'unavailable',
        });
      }
    } else if (config.SANDBOX === 'off') {
      sandbox.status_ = { mode: 'off', available: false, reason: 'SANDBOX=off' };
      logger?.warn(
        'SANDBOX=off: programs run WITHOUT an OS sandbox, with the service user’s full access to files, processes and the network. ' +
          'Unset SANDBOX (default bwrap) to confine them; see docs/security.md.',
        { sandbox: 'off' },
      );
    } else {
      sandbox.probe();
      if (!sandbox.status_.available) {
        logger?.warn(`No OS sandbox can be made here, so this service refuses to start programs: ${sandbox.status_.reason}`, {
          sandbox: 'unavailable',
        });
      }
    }
    return sandbox;
  }

  get status(): SandboxStatus {
    return { ...this.status_ };
  }

  /** Programs start without a bubblewrap of their own: SANDBOX=off, or SANDBOX=outer (inside the starter's). */
  private get direct(): boolean {
    return this.config.SANDBOX !== 'bwrap';
  }

  /** For /health: the sandbox's state (never a failure of the service itself). */
  health(): SandboxStatus {
    if (this.config.SANDBOX === 'bwrap' && !this.status_.available) this.recheck();
    return this.status;
  }

  private recheck(): void {
    if (Date.now() - this.checkedAt >= RECHECK_MS) this.probe();
  }

  /** Runs `true` in the smallest sandbox: proves bubblewrap is installed and may make namespaces. */
  private probe(): void {
    this.checkedAt = Date.now();
    const bwrap = this.config.SANDBOX_BWRAP;
    const truePath = resolveProgram('true', '/usr/bin:/bin') ?? '/usr/bin/true';
    const res = spawnSync(bwrap, [...this.baseArgs({ cwd: '/', env: {} }), '--', truePath], { timeout: 5000, encoding: 'utf8' });
    if (res.error) {
      const code = (res.error as NodeJS.ErrnoException).code;
      this.status_ = {
        mode: 'bwrap',
        available: false,
        reason:
          code === 'ENOENT'
            ? `bubblewrap ("${bwrap}") is not installed.`
            : `bubblewrap ("${bwrap}") could not be started (${res.error.message}).`,
      };
      return;
    }
    if (res.status !== 0) {
      const said = (res.stderr || '').trim().split('\n')[0]?.slice(0, 300) || `exit code ${res.status}`;
      this.status_ = {
        mode: 'bwrap',
        available: false,
        reason: `bubblewrap cannot make a sandbox here (${said}); the kernel or container must allow user namespaces.`,
      };
      return;
    }
    const version = spawnSync(bwrap, ['--version'], { timeout: 5000, encoding: 'utf8' })
      .stdout?.trim()
      .replace(/^bubblewrap\s+/, '');
    const wasDown = !this.status_.available && this.checkedAt !== 0 && this.status_.reason !== 'not checked yet';
    this.status_ = { mode: 'bwrap', available: true, ...(version ? { version } : {}) };
    if (wasDown) this.logger?.info('The OS sandbox is available now; programs are started again.', { sandbox: 'bwrap', version });
  }

  /**
   * Throws what to do when programs cannot be started: no sandbox can be made and the operator did
   * not opt out. Looks again (at most every 10 s) so bubblewrap installed later is found.
   */
  assertUsable(): void {
    if (this.config.SANDBOX === 'off' || this.status_.available) return;
    if (this.config.SANDBOX === 'bwrap') this.recheck();
    if (this.status_.available) return;
    throw new AppError(
      'NOT_CONFIGURED',
      `This service runs programs only inside an OS sandbox, and none can be made here: ${this.status_.reason} ` +
        'Install bubblewrap (apt-get install bubblewrap; ./fleet setup does it) on a host or container that allows user namespaces, ' +
        'or set SANDBOX=off to run programs unsandboxed (not recommended; docs/security.md).',
    );
  }

  private baseArgs(policy: Pick<SandboxPolicy, 'cwd' | 'env' | 'network'>): string[] {
    const args = [
      '--unshare-all',
      ...(policy.network ? ['--share-net'] : []),
      ...(this.config.SANDBOX_KILL_ON_EXIT === false ? [] : ['--die-with-parent']),
      '--new-session',
      '--cap-drop',
      'ALL',
      '--clearenv',
      ...this.systemArgs,
      ...(policy.network ? existing(ETC_NETWORK).flatMap((p) => ['--ro-bind', p, p]) : []),
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--tmpfs',
      '/tmp',
      '--dir',
      SANDBOX_HOME,
    ];
    for (const [name, value] of Object.entries(policy.env)) args.push('--setenv', name, value);
    args.push('--setenv', 'HOME', SANDBOX_HOME, '--setenv', 'TMPDIR', '/tmp');
    return args;
  }

  /** bubblewrap's options for a policy, up to (not including) `--`. */
  options(policy: SandboxPolicy): string[] {
    const args = this.baseArgs(policy);
    const mounted: string[] = [];
    for (const dir of this.extraReadOnly) {
      if (fs.existsSync(dir)) args.push('--ro-bind', dir, dir);
    }
    for (const p of policy.readOnly ?? []) {
      const real = realOrSelf(p);
      if (!fs.existsSync(real)) continue;
      args.push('--ro-bind', real, real);
      mounted.push(real);
    }
    for (const p of policy.writable ?? []) {
      const real = realOrSelf(p);
      if (!fs.existsSync(real)) continue;
      args.push('--bind', real, real);
      mounted.push(real);
    }
    // Stores that lie inside a mounted directory are covered by an empty, read-only directory.
    for (const p of [...this.hiddenAlways, ...(policy.hidden ?? [])]) {
      const real = realOrSelf(p);
      if (!mounted.some((m) => isUnder(m, real) && m !== real) || !fs.existsSync(real)) continue;
      if (fs.statSync(real).isDirectory()) args.push('--tmpfs', real, '--remount-ro', real);
      else args.push('--ro-bind', '/dev/null', real);
    }
    args.push('--chdir', realOrSelf(policy.cwd));
    return args;
  }

  /**
   * The command line that runs `file args` under the policy: `bwrap … -- /abs/file args`, or the
   * program itself with SANDBOX=off. Throws ENOENT (as spawn would) for a program not on PATH, and
   * NOT_CONFIGURED when no sandbox can be made.
   */
  command(file: string, args: string[], policy: SandboxPolicy): { file: string; args: string[] } {
    this.assertUsable();
    const program = resolveProgram(file, policy.env.PATH);
    if (program === undefined) throw notFound(file);
    if (this.direct) return { file: program, args };
    const options = this.options(policy);
    // The program by its own path where that is mounted (multi-call binaries read their name), else by
    // its real path; a program outside every mounted directory (a configured path) is mounted alone.
    const mounted = [...SYSTEM_DIRS, ...this.extraReadOnly, ...(policy.readOnly ?? []), ...(policy.writable ?? [])].map(realOrSelf);
    const realProgram = realOrSelf(program);
    const seen = (p: string) => mounted.some((d) => isUnder(d, p));
    if (!seen(realProgram)) options.splice(options.indexOf('--chdir'), 0, '--ro-bind', realProgram, realProgram);
    const exec = seen(program) && seen(realProgram) ? program : realProgram;
    return { file: this.config.SANDBOX_BWRAP, args: [...options, '--', exec, ...args] };
  }

  /** spawn() inside the sandbox. Throws (before starting anything) as `command` does. */
  spawn(file: string, args: string[], policy: SandboxPolicy, options: Omit<SpawnOptions, 'env' | 'cwd'> = {}): ChildProcess {
    const cmd = this.command(file, args, policy);
    const outside = this.direct;
    return spawn(cmd.file, cmd.args, {
      ...options,
      cwd: policy.cwd,
      // bubblewrap itself needs only PATH; the program's environment is set inside with --setenv.
      env: outside ? policy.env : { PATH: processEnv().PATH ?? '/usr/bin:/bin' },
    });
  }

  /**
   * Sends `signal` to the programs inside a sandbox started by `spawn` (bubblewrap does not pass
   * signals on), so they can end cleanly; with SANDBOX=off, to the child's process group.
   * Killing the child itself (bubblewrap) ends everything inside at once.
   */
  signalInside(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    if (this.direct) {
      try {
        process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
      return;
    }
    for (const pid of descendants(child.pid)) {
      try {
        if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'bwrap') process.kill(pid, signal);
      } catch {
        // gone meanwhile
      }
    }
  }

  /**
   * For a library that spawns a program by name (simple-git's `binary` option): a launcher and the
   * environment that carries the policy to it. Call `dispose` when the library is done.
   */
  launcher(
    program: string,
    policy: SandboxPolicy,
  ): { binary: [string, string] | string; env: Record<string, string>; dispose: () => void } {
    this.assertUsable();
    if (this.direct) return { binary: program, env: policy.env, dispose: () => undefined };
    const resolved = resolveProgram(program, policy.env.PATH);
    if (resolved === undefined) throw notFound(program);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-sandbox-'));
    const file = path.join(dir, 'args');
    fs.writeFileSync(
      file,
      this.options(policy)
        .map((a) => `${a}\0`)
        .join(''),
      { mode: 0o600 },
    );
    return {
      binary: [LAUNCHER, resolved],
      env: { PATH: processEnv().PATH ?? '/usr/bin:/bin', FLEET_SANDBOX_ARGS: file, FLEET_SANDBOX_BWRAP: this.config.SANDBOX_BWRAP },
      dispose: () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  }

  /** A fresh private scratch directory outside every root, for a program's temporary files (mount it writable). */
  static scratch(prefix = 'fleet-run-'): { dir: string; dispose: () => void } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}${randomBytes(3).toString('hex')}-`));
    return { dir, dispose: () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
}

/** The shell launcher used by `Sandbox.launcher`. */
export const LAUNCHER = path.join(__dirname, '..', 'bin', 'sandbox-exec');

/** Every process below `pid` (Linux /proc children lists). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0 && out.length < 10_000) {
    const next = queue.shift()!;
    let children: string;
    try {
      children = fs.readFileSync(`/proc/${next}/task/${next}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const word of children.split(' ')) {
      const child = Number(word);
      if (Number.isInteger(child) && child > 0) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

function existing(paths: string[]): string[] {
  return paths.filter((p) => fs.existsSync(p));
}

/** The host's system directories, mirrored read-only (merged-/usr symlinks kept as symlinks). */
function systemMounts(): string[] {
  const args: string[] = [];
  for (const dir of SYSTEM_DIRS) if (fs.existsSync(dir)) args.push('--ro-bind', dir, dir);
  for (const top of SYSTEM_TOP) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(top);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(top), top);
    else if (st.isDirectory()) args.push('--ro-bind', top, top);
  }
  for (const p of existing(ETC_FILES)) args.push('--ro-bind', p, p);
  return args;
}

/** Whether this process runs inside a bubblewrap sandbox: bwrap --unshare-pid stays the namespace's PID 1. */
function insideBubblewrap(): boolean {
  try {
    return fs.readFileSync('/proc/1/comm', 'utf8').trim() === 'bwrap';
  } catch {
    return false;
  }
}

/** A service's /health check of its sandbox: fails (so the service reads degraded) while programs are refused. */
export function sandboxHealth(sandbox: Sandbox): SandboxStatus {
  const status = sandbox.health();
  if (status.mode !== 'off' && !status.available) {
    throw new Error(`${status.reason} Programs are refused until bubblewrap can run here, or SANDBOX=off opts out.`);
  }
  return status;
}
