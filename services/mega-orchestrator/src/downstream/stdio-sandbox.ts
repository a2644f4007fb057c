/**
 * The OS sandbox around the stdio MCP servers the gateway starts (docs/gateway.md, "MCP servers as
 * downstreams"; docs/security.md, "The sandbox"). A server's command runs as
 * `bwrap <options> -- <program> <args>` (packages/sandbox): it sees the system directories
 * read-only, a writable home of its own (DATA_DIR/mcp-servers/<id>/home, 0700, its HOME, so npm's
 * cache lands there), its `cwd` read-only, and only the directories its entry names
 * (`"sandbox": { "readOnly": [...], "writable": [...] }`); no DATA_DIR, no home of the gateway's
 * user, no other process (its own PID namespace: nothing it starts outlives it), an environment of
 * its `env` and the SDK's safe defaults only; the network unless `"network": false`.
 * `"sandbox": false` on an entry, or MCP_STDIO_SANDBOX=off for all, runs servers unsandboxed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { AppError, processEnv, type Logger } from '@mcp-fleet/kit';
import { isUnder, resolveProgram, Sandbox, SYSTEM_PATHS } from '@mcp-fleet/sandbox';
import type { StdioServerSpec } from './mcp/spec';

/** What one stdio server's process is started as: the program, its arguments, its directory and environment. */
export interface StdioLaunch {
  command: string;
  args: string[];
  cwd?: string;
  env: Record<string, string>;
  /**
   * Paths of the host named in its arguments that exist but that its sandbox does not show (not in a
   * system directory, its cwd, home, readOnly or writable): a server that fails at start is told to
   * name them in its entry's sandbox (nothing is mounted from `args` by itself).
   */
  hidden?: string[];
  /**
   * The command lies outside every directory its sandbox shows, so it is mounted alone, without the
   * files beside it (a package's other modules, its node_modules): the directory to declare for
   * them, named to a server that fails at start.
   */
  commandAlone?: { command: string; declare: string };
}

/** Turns a server's declaration into the process to start; throws NOT_CONFIGURED (what to do) when it may not start. */
export type StdioLauncher = (id: string, spec: StdioServerSpec) => StdioLaunch;

export interface StdioSandboxOptions {
  /** MCP_STDIO_SANDBOX: on (default) or off for every stdio server. */
  mode: 'on' | 'off';
  /** Where the per-server homes are made (DATA_DIR/mcp-servers/<id>/home); hidden from every server besides. */
  dataDir: string;
  /** The bubblewrap program (default bwrap on PATH). */
  bwrap?: string;
  logger?: Logger;
}

/** The launcher of the gateway's stdio servers. MCP_STDIO_SANDBOX=off is logged as a warning here, once. */
export function stdioLauncher(options: StdioSandboxOptions): StdioLauncher {
  const { mode, dataDir, logger } = options;
  if (mode === 'off') {
    logger?.warn(
      'MCP_STDIO_SANDBOX=off: the stdio MCP servers the gateway starts run WITHOUT an OS sandbox, as the gateway’s user, able to read DATA_DIR, ' +
        'the home directory and other processes. Unset it (default on) to confine them; see docs/gateway.md.',
      { sandbox: 'off' },
    );
  }
  let sandbox: Sandbox | undefined;
  const opened = (): Sandbox =>
    (sandbox ??= Sandbox.open({
      SANDBOX: 'bwrap',
      SANDBOX_BWRAP: options.bwrap ?? 'bwrap',
      SANDBOX_READ_ONLY_PATHS: [],
      DATA_DIR: dataDir,
    }));
  return (id, spec) => {
    const policy = spec.sandbox;
    // SANDBOX=outer tells a server it runs inside this sandbox (inventoryStdioServers): not true unsandboxed, where it makes its own
    if (mode === 'off' || policy === false) return { command: spec.command, args: spec.args, cwd: spec.cwd, env: withoutOuter(spec.env) };
    const box = opened();
    if (!box.status.available) box.health(); // looks again (at most every 10 s): bubblewrap installed later is found
    if (!box.status.available) {
      throw new AppError(
        'NOT_CONFIGURED',
        `The gateway starts stdio MCP servers only inside an OS sandbox, and none can be made here: ${box.status.reason} ` +
          'Install bubblewrap (apt-get install bubblewrap; ./fleet setup does it) on a host or container that allows user namespaces, ' +
          `or run this server unsandboxed: "sandbox": false in its mcpServers entry (${id}), or MCP_STDIO_SANDBOX=off for all (not recommended; docs/gateway.md).`,
      );
    }
    const readOnly = [...(spec.cwd ? [spec.cwd] : []), ...(policy?.readOnly ?? [])];
    const writable = policy?.writable ?? [];
    // DATA_DIR inside a mounted directory is covered by an empty read-only one, and the home with it:
    // then the server's HOME is the sandbox's own (empty, writable, gone when it ends)
    const realData = realOrSelf(dataDir);
    const covered = [...readOnly, ...writable].some((p) => realData.startsWith(`${realOrSelf(p).replace(/\/$/, '')}/`));
    const home = covered ? undefined : path.join(dataDir, 'mcp-servers', id, 'home');
    if (home) {
      fs.mkdirSync(home, { recursive: true, mode: 0o700 });
      fs.chmodSync(home, 0o700);
    }
    const cwd = spec.cwd ?? home ?? '/tmp';
    // the SDK's safe defaults (PATH, TERM, ...) without the gateway user's HOME, then the declared env
    const env = { ...withoutHome(getDefaultEnvironment()), ...spec.env };
    const cmd = box.command(spec.command, spec.args, {
      cwd,
      env,
      network: policy?.network ?? true,
      readOnly,
      writable: home ? [home, ...writable] : writable,
    });
    // HOME is the server's own home, not the sandbox's empty one: set last, before `--` (the program and its arguments follow)
    const separator = cmd.args.length - spec.args.length - 2;
    const setHome = home ? ['--setenv', 'HOME', fs.realpathSync(home)] : [];
    const args = [...cmd.args.slice(0, separator), ...setHome, ...cmd.args.slice(separator)];
    const shown = [...SYSTEM_PATHS, ...(spec.cwd ? [spec.cwd] : []), ...readOnly, ...writable, ...(home ? [home] : [])];
    const hidden = hiddenPaths(spec.args, shown);
    const alone = commandAlone(spec.command, env.PATH, shown);
    // bubblewrap itself needs only PATH; the server's environment is set inside
    return {
      command: cmd.file,
      args,
      cwd: spec.cwd ?? home,
      env: { PATH: processEnv().PATH ?? '/usr/bin:/bin' },
      ...(hidden.length > 0 ? { hidden } : {}),
      ...(alone ? { commandAlone: { command: spec.command, declare: alone } } : {}),
    };
  };
}

/**
 * When the program `command` names lies under none of `shown` (the sandbox mounts it alone): the
 * directory that holds what it loads beside it, to declare in the entry's sandbox. For a program in a
 * node_modules tree (an npm or pnpm `.bin` shim, or the script it links to) that is the outermost
 * node_modules, which holds the package and its dependencies; otherwise the program's own directory.
 */
export function commandAlone(command: string, pathValue: string | undefined, shown: readonly string[]): string | undefined {
  const program = resolveProgram(command, pathValue);
  if (program === undefined) return undefined;
  const real = realOrSelf(program);
  const roots = shown.map(realOrSelf);
  if (roots.some((r) => isUnder(r, real))) return undefined;
  for (const p of [program, real]) {
    const at = p.indexOf(`${path.sep}node_modules${path.sep}`);
    if (at >= 0) return p.slice(0, at + `${path.sep}node_modules`.length);
  }
  return path.dirname(real);
}

function withoutOuter(env: Record<string, string>): Record<string, string> {
  if (env.SANDBOX !== 'outer') return env;
  const { SANDBOX: _outer, ...rest } = env;
  return rest;
}

/**
 * The absolute paths in `args` (an argument, or the value of `--name=/path`) that exist on the host
 * and lie under none of `shown`: what the server was told about but cannot see in its sandbox.
 */
export function hiddenPaths(args: readonly string[], shown: readonly string[]): string[] {
  const roots = shown.map(realOrSelf);
  const out: string[] = [];
  for (const arg of args) {
    const value = arg.startsWith('-') && arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : arg;
    if (!path.isAbsolute(value) || !fs.existsSync(value)) continue;
    const real = realOrSelf(value);
    if (roots.some((r) => isUnder(r, real))) continue;
    if (!out.includes(value)) out.push(value);
  }
  return out;
}

function realOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

function withoutHome(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => name !== 'HOME'));
}

let fallback: StdioLauncher | undefined;

/**
 * For an McpDownstream made without a launcher (tests that build one directly): sandboxed, homes in
 * a directory of the system's temporary directory.
 */
export function defaultStdioLauncher(): StdioLauncher {
  return (fallback ??= stdioLauncher({ mode: 'on', dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-fleet-stdio-')) }));
}
