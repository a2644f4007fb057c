import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError, secretFileError, type Logger } from '@mcp-fleet/kit';
import { within, type Workspace } from '@mcp-fleet/kit/workspace';
import { GitPluginError, simpleGit, type SimpleGit } from 'simple-git';
import { configEnv, HARDENED_ENV, hardenedPairs, parseConfigList, programSettings, sanitizedConfig } from './hardening';
import type { GitConfinement, GitSandbox, PreparedGit } from './sandboxed';

/** What a service that runs git configures (git-mcp's and toolkit-mcp-server's config have these). */
export interface GitSettings {
  /** Time limit of one git process. */
  GIT_TIMEOUT_MS: number;
  /** The scrubbed environment git runs with (gitBaseEnv). */
  GIT_BASE_ENV: Record<string, string>;
  /** Commit identity where neither the call nor the repository names one. */
  GIT_DEFAULT_AUTHOR_NAME?: string;
  GIT_DEFAULT_AUTHOR_EMAIL?: string;
}

export interface GitDeps {
  config: GitSettings;
  workspace: Workspace;
  logger: Logger;
  /** Starts every git process inside the OS sandbox. */
  sandbox: GitSandbox;
}

/** Cuts git's message to something a person can read, without credentials embedded in URLs. */
export function cleanGitMessage(message: string): string {
  const text = message
    .replace(/(\w+:\/\/)[^/\s@]+@/g, '$1***@')
    .replace(/\s+$/g, '')
    .trim();
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}

export interface GitFailureOptions {
  /** What was being done, for the message ("git push"). */
  action: string;
  /** Code for failures not recognised below (UPSTREAM_ERROR for push). */
  fallback?: 'VALIDATION_ERROR' | 'UPSTREAM_ERROR' | 'CONFLICT';
  timeoutMs: number;
  timedOut: () => boolean;
}

/** Maps a failure of git (or of simple-git around it) to the fleet's error codes; INTERNAL only when the sandbox itself failed. */
export function toGitAppError(err: unknown, options: GitFailureOptions): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof GitPluginError && err.plugin === 'abort') {
    return options.timedOut()
      ? new AppError(
          'TIMEOUT',
          `${options.action} did not finish within ${options.timeoutMs} ms (GIT_TIMEOUT_MS); the git process was stopped.`,
        )
      : new AppError('TIMEOUT', `${options.action} was cancelled because the request ended.`);
  }
  if (err instanceof GitPluginError && err.plugin === 'unsafe') {
    return new AppError('FORBIDDEN', `${options.action} was refused as unsafe: ${err.message}`);
  }
  const raw = err instanceof Error ? err.message : String(err);
  const msg = cleanGitMessage(raw);
  const text = `${options.action} failed: ${msg}`;
  if (/not a git repository/i.test(raw)) return new AppError('NOT_FOUND', text);
  if (/dubious ownership/i.test(raw)) {
    return new AppError(
      'FORBIDDEN',
      `${text} (the repository belongs to another OS user, and the service reads no global safe.directory list; give the service user its own copy, or change the owner).`,
    );
  }
  if (/^bwrap:/m.test(raw)) {
    return new AppError('INTERNAL', `${options.action} failed: the sandbox around git could not be set up (${msg}).`);
  }
  if (
    /unknown revision|bad revision|bad object|invalid object name|ambiguous argument|does not have any commits|not a valid object name|unknown commit|needed a single revision|did not match any file/i.test(
      raw,
    )
  ) {
    return new AppError('NOT_FOUND', `${text} Check the revision or file names.`);
  }
  if (/index\.lock|unable to create .*\.lock|another git process/i.test(raw)) {
    return new AppError('CONFLICT', `${text} Another git process holds the repository lock; retry when it finishes.`);
  }
  if (/unmerged|merge conflict|you need to resolve|needs merge/i.test(raw)) return new AppError('CONFLICT', text);
  if (/please tell me who you are|empty ident|unable to auto-detect email/i.test(raw)) {
    return new AppError(
      'VALIDATION_ERROR',
      `${text} Pass author {name, email}, set user.name and user.email in the repository, or set GIT_DEFAULT_AUTHOR_NAME and GIT_DEFAULT_AUTHOR_EMAIL.`,
    );
  }
  if (/\[rejected\]|non-fast-forward|fetch first|failed to push some refs/i.test(raw)) {
    return new AppError('CONFLICT', `${text} The remote has commits this branch lacks; integrate them first.`);
  }
  if (/spawn git ENOENT/.test(raw)) {
    return new AppError('NOT_CONFIGURED', `${options.action} failed: the git program is not installed or not on PATH.`);
  }
  return new AppError(options.fallback ?? 'VALIDATION_ERROR', text);
}

/** Time limit of a whole tool call: git processes stop at GIT_TIMEOUT_MS, so this only backs them up. */
export function callTimeoutMs(config: GitSettings): number {
  return config.GIT_TIMEOUT_MS + 5000;
}

/** What one git process may touch besides the repository itself (read-only unless `write`). */
export interface Reach {
  /** The repository's git directories writable (commit, push); its work tree stays read-only. */
  write?: boolean;
  /** Further directories writable (a local push target). */
  writable?: string[];
  /** Further paths readable (ssh's known_hosts and agent socket). */
  readOnly?: string[];
  binds?: GitConfinement['binds'];
  /** The host's network (a push to a checked network remote). */
  network?: boolean;
  /** Transports git may use (GIT_ALLOW_PROTOCOL); none unless pushing. */
  protocols?: string[];
  /** Command-scope settings after the hardening (http.curloptResolve of a push). */
  settings?: [string, string][];
  /** Extra environment (committer identity, GIT_SSH_COMMAND). */
  env?: Record<string, string>;
  /** Overrides GIT_TIMEOUT_MS for this command. */
  timeoutMs?: number;
  /** Code for failures git does not explain (UPSTREAM_ERROR for push). */
  fallback?: GitFailureOptions['fallback'];
  /** Stops git early (capture: enough output). */
  stop?: AbortSignal;
}

/**
 * simple-git's own checks of what it passes to git. Confined, it sees only the launcher's
 * environment; with SANDBOX=off it sees ours, and would refuse the very settings that turn
 * programs OFF (GIT_CONFIG_COUNT with core.fsmonitor=false, core.hooksPath=/dev/null, ...), the
 * GIT_CONFIG_GLOBAL=/dev/null that drops the operator's config, the --receive-pack that carries the
 * hardening to a local push target and the GIT_SSH_COMMAND that pins a checked host. Those are all
 * built from constants (hardening.ts, push-targets.ts); no caller text ever becomes an option or a
 * config value.
 */
const SIMPLE_GIT_UNSAFE = {
  allowUnsafeConfigEnvCount: true,
  allowUnsafeConfigPaths: true,
  allowUnsafePack: true,
  allowUnsafeSshCommand: true,
  allowUnsafeFsMonitor: true,
  allowUnsafeHooksPath: true,
  allowUnsafePager: true,
  allowUnsafeEditor: true,
  allowUnsafeAskPass: true,
  allowUnsafeCredentialHelper: true,
  allowUnsafeGitProxy: true,
  allowUnsafeDiffExternal: true,
  allowUnsafeGpgProgram: true,
  allowUnsafeProtocolOverride: true,
};

const binaryOf = (prepared: PreparedGit): string | [string, string] =>
  prepared.prefix.length > 0 ? [prepared.file, prepared.prefix[0]] : prepared.file;

/**
 * Runs `fn` with a simple-git instance whose every git process runs under `confinement`. It is
 * aborted when the tool call ends or GIT_TIMEOUT_MS passes, and git errors become fleet errors.
 */
export async function runGit<T>(
  deps: GitDeps,
  callSignal: AbortSignal,
  action: string,
  confinement: GitConfinement,
  fn: (git: SimpleGit) => Promise<T>,
  options: Pick<Reach, 'timeoutMs' | 'fallback' | 'stop'> = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? deps.config.GIT_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([callSignal, timeout, ...(options.stop ? [options.stop] : [])]);
  const fail = (err: unknown) => toGitAppError(err, { action, fallback: options.fallback, timeoutMs, timedOut: () => timeout.aborted });
  let prepared: PreparedGit;
  try {
    prepared = deps.sandbox.prepare(confinement);
  } catch (err) {
    throw fail(err);
  }
  try {
    const git = simpleGit({
      baseDir: confinement.cwd,
      binary: binaryOf(prepared),
      maxConcurrentProcesses: 2,
      trimmed: false,
      abort: signal,
      unsafe: SIMPLE_GIT_UNSAFE,
    }).env(prepared.env);
    return await fn(git);
  } catch (err) {
    throw fail(err);
  } finally {
    prepared.dispose();
  }
}

/** One repository inside the workspace roots, with git wired for safe use. */
export class Repo {
  constructor(
    readonly top: string,
    readonly relative: string,
    readonly gitDir: string,
    readonly commonDir: string,
    private readonly deps: GitDeps,
    private readonly signal: AbortSignal,
    /** The sanitized config laid over the repository's own (undefined with SANDBOX=off). */
    private readonly configText: string | undefined,
    /** Command-scope settings before the hardening: the service's identity where the repository has none. */
    private readonly defaults: [string, string][],
  ) {}

  /** The repository's config file (shared by its worktrees). */
  get configPath(): string {
    return path.join(this.commonDir, 'config');
  }

  /** The confinement of one git process on this repository. */
  confinement(reach: Reach = {}): GitConfinement {
    const dirs = [...new Set([this.gitDir, this.commonDir])];
    return {
      cwd: this.top,
      env: gitEnv(this.deps, {
        protocols: reach.protocols,
        settings: [...this.defaults, ...hardenedPairs(), ...(reach.settings ?? [])],
        env: { GIT_DIR: this.gitDir, GIT_COMMON_DIR: this.commonDir, GIT_WORK_TREE: this.top, ...reach.env },
      }),
      readOnly: [this.top, ...(reach.write ? [] : dirs), ...(reach.readOnly ?? [])],
      writable: [...(reach.write ? dirs : []), ...(reach.writable ?? [])],
      network: reach.network ?? false,
      files: this.configText === undefined ? undefined : [{ path: this.configPath, content: this.configText }],
      binds: reach.binds,
    };
  }

  /** Runs `fn` with simple-git on this repository, every git process inside the sandbox (see runGit). */
  run<T>(action: string, fn: (git: SimpleGit) => Promise<T>, reach: Reach = {}): Promise<T> {
    return runGit(this.deps, this.signal, action, this.confinement(reach), fn, reach);
  }

  /**
   * Makes `remote`'s `branch` the upstream of `branch`, in the repository's own config file (git
   * itself sees the sanitized copy, which it cannot write).
   */
  async setUpstream(branch: string, remote: string): Promise<void> {
    const confinement: GitConfinement = { cwd: this.commonDir, env: gitEnv(this.deps), writable: [this.commonDir] };
    await runGit(this.deps, this.signal, 'git config', confinement, async (git) => {
      await git.raw(['config', '--file', this.configPath, `branch.${branch}.remote`, remote]);
      await git.raw(['config', '--file', this.configPath, `branch.${branch}.merge`, `refs/heads/${branch}`]);
    });
  }

  /** Whether `rev` (built by us from checked input) names an object; timeouts still throw. */
  async revExists(rev: string): Promise<boolean> {
    try {
      const out = await this.run('git rev-parse', (git) => git.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', rev]));
      return out.trim() !== '';
    } catch (err) {
      if (err instanceof AppError && err.code === 'TIMEOUT') throw err;
      return false;
    }
  }

  /**
   * Runs git (inside the sandbox, read-only) and keeps at most `maxBytes` of its standard output,
   * stopping git once it has written more (a huge diff must not be buffered whole).
   */
  async capture(action: string, args: string[], maxBytes: number): Promise<{ text: string; truncated: boolean }> {
    const chunks: Buffer[] = [];
    let size = 0;
    let truncated = false;
    const stop = new AbortController();
    try {
      await this.run(
        action,
        (git) =>
          git
            .outputHandler((_command, stdout) => {
              stdout.on('data', (chunk: Buffer) => {
                if (truncated) return;
                const room = maxBytes - size;
                if (chunk.length > room) {
                  chunks.push(chunk.subarray(0, room));
                  size = maxBytes;
                  truncated = true;
                  // Ends bubblewrap, and with it everything inside.
                  stop.abort();
                  return;
                }
                chunks.push(chunk);
                size += chunk.length;
              });
            })
            .raw(args),
        { stop: stop.signal },
      );
    } catch (err) {
      if (!truncated) throw err;
    }
    let text = Buffer.concat(chunks).toString('utf8');
    // A cut through a multi-byte character leaves a replacement character at the end; drop it.
    if (truncated) text = text.replace(/\uFFFD+$/, '');
    return { text, truncated };
  }

  /**
   * A caller's file argument as a pathspec relative to the repository: relative paths are taken
   * from the repository's top, absolute ones must lie inside it; `..`, NUL bytes, the `.git`
   * directory, parent directories that lead outside through a symlink and secret files are refused.
   */
  async pathspec(input: string, field: string): Promise<string> {
    if (typeof input !== 'string' || input.trim() === '') {
      throw new AppError('VALIDATION_ERROR', `${field} must be a non-empty path inside the repository.`, {
        details: [{ path: field, message: 'empty path' }],
      });
    }
    const absolute = path.isAbsolute(input) ? input : path.join(this.top, input);
    const lexical = this.deps.workspace.lexical(absolute, field);
    if (!within(this.top, lexical)) {
      throw new AppError('FORBIDDEN', `${field} "${input}" is outside the repository ${this.relative || '.'}; name a file inside it.`, {
        details: [{ path: field, message: 'outside the repository' }],
      });
    }
    const rel = path.relative(this.top, lexical).split(path.sep).join('/');
    if (rel === '.git' || rel.startsWith('.git/')) {
      throw new AppError('FORBIDDEN', `${field} "${input}" points into the .git directory; name a work-tree file.`, {
        details: [{ path: field, message: 'inside .git' }],
      });
    }
    if (rel !== '') {
      const parent = await this.deps.workspace.resolve(path.dirname(lexical), { field });
      if (!within(this.top, parent.absolute)) {
        throw new AppError('FORBIDDEN', `${field} "${input}" leads outside the repository through a symlink.`, {
          details: [{ path: field, message: 'symlink escape' }],
        });
      }
      // Secret files (.env, private keys, the fleet's stores; SECRET_FILES) are never named to git.
      const secret = this.deps.workspace.secretReason(path.join(parent.absolute, path.basename(lexical)));
      if (secret) throw secretFileError(secret, field, input);
    }
    return rel === '' ? '.' : rel;
  }

  /** Whether a path git reports (relative to the top) is a secret file whose contents are never shown. */
  isSecret(rel: string): boolean {
    return this.deps.workspace.secretReason(path.join(this.top, rel)) !== undefined;
  }
}

export interface GitEnvOptions {
  /** Transports git may use (GIT_ALLOW_PROTOCOL); none by default. */
  protocols?: string[];
  /** Command-scope config, in order (default: the hardening list). */
  settings?: ReadonlyArray<readonly [string, string]>;
  env?: Record<string, string>;
}

/** The whole environment of a git process: PATH and TZ of the service, the hardening, nothing else. */
export function gitEnv(deps: GitDeps, options: GitEnvOptions = {}): Record<string, string> {
  return {
    ...deps.config.GIT_BASE_ENV,
    ...HARDENED_ENV,
    // Overrides every protocol.*.allow, whatever config says: an empty list allows none.
    GIT_ALLOW_PROTOCOL: (options.protocols ?? []).join(':'),
    // Repository discovery never climbs above a workspace root.
    GIT_CEILING_DIRECTORIES: [...new Set(deps.workspace.roots.map((r) => path.dirname(r)))].join(':'),
    ...configEnv(options.settings ?? hardenedPairs()),
    ...options.env,
  };
}

function repoRefusal(input: string, message: string, detail: string): AppError {
  return new AppError('FORBIDDEN', message, { details: [{ path: 'path', message: detail }] });
}

/**
 * Resolves the caller's `path` (or `repository`) to a repository whose work tree and git
 * directories all lie inside the workspace roots, and reads the part of its config git may see.
 */
export async function openRepo(deps: GitDeps, input: string, signal: AbortSignal): Promise<Repo> {
  const resolved = await deps.workspace.resolve(input, { mustExist: true });
  const stat = await fs.stat(resolved.absolute);
  if (!stat.isDirectory()) {
    throw new AppError('VALIDATION_ERROR', `path "${input}" is a file; give the directory of a git repository.`, {
      details: [{ path: 'path', message: 'not a directory' }],
    });
  }
  const roots = deps.workspace.roots;
  // Finding the repository reads its config but runs nothing of it: the roots read-only, no network.
  const probe: GitConfinement = { cwd: resolved.absolute, env: gitEnv(deps), readOnly: roots };
  const out = await runGit(deps, signal, 'git rev-parse', probe, (git) =>
    git.raw(['rev-parse', '--path-format=absolute', '--show-toplevel', '--absolute-git-dir', '--git-common-dir']),
  ).catch((err: unknown) => {
    const message = (err as Error).message;
    // A .git file naming a git directory the sandbox does not show (outside the roots).
    const named = /not a git repository: '?([^'\n]+)'?/i.exec(message)?.[1];
    if (err instanceof AppError && named !== undefined && path.isAbsolute(named) && !roots.some((r) => within(r, path.resolve(named)))) {
      throw repoRefusal(
        input,
        `The repository containing "${input}" keeps its git directory outside the workspace roots (${named}); only repositories inside them can be used.`,
        'repository outside workspace roots',
      );
    }
    if (err instanceof AppError && /not a git repository/i.test(message)) {
      throw new AppError('NOT_FOUND', `"${input}" is not inside a git work tree; give the path of a repository in the workspace.`, {
        details: [{ path: 'path', message: 'not a git repository' }],
      });
    }
    if (err instanceof AppError && /must be run in a work tree/i.test(message)) {
      throw new AppError('VALIDATION_ERROR', `"${input}" is a bare repository; these tools need a repository with a work tree.`, {
        details: [{ path: 'path', message: 'bare repository' }],
      });
    }
    throw err;
  });
  const [top, gitDir, commonDir] = await Promise.all(
    out
      .split('\n')
      .slice(0, 3)
      .map((s) => fs.realpath(s.trim())),
  );
  if (![top, gitDir, commonDir].every((dir) => roots.some((r) => within(r, dir)))) {
    throw repoRefusal(
      input,
      `The repository containing "${input}" lies (partly) outside the workspace roots; only repositories inside them can be used.`,
      'repository outside workspace roots',
    );
  }
  const relative = path
    .relative(roots.find((r) => within(r, top)) ?? top, top)
    .split(path.sep)
    .join('/');
  const configPath = path.join(commonDir, 'config');
  const configStat = await fs.lstat(configPath).catch(() => undefined);
  if (configStat !== undefined && !configStat.isFile()) {
    throw repoRefusal(
      input,
      `The config of the repository at "${relative || '.'}" is not a regular file (a symlink?); git is not run on it.`,
      'config is not a regular file',
    );
  }
  const confined = deps.sandbox.confined;
  let list = '';
  if (configStat !== undefined) {
    // Confined: the file alone, includes not followed: git will see only what sanitizedConfig keeps.
    // SANDBOX=off: git reads the file itself, includes and all, so that is what is screened.
    const listing: GitConfinement = confined
      ? { cwd: commonDir, env: gitEnv(deps), readOnly: [commonDir] }
      : {
          cwd: top,
          env: gitEnv(deps, { env: { GIT_DIR: gitDir, GIT_COMMON_DIR: commonDir, GIT_WORK_TREE: top } }),
          readOnly: [top, gitDir, commonDir],
        };
    const args = confined ? ['config', '--file', configPath, '--no-includes', '--list', '-z'] : ['config', '--list', '--show-scope', '-z'];
    list = await runGit(deps, signal, 'git config', listing, (git) => git.raw(args));
  }
  if (!confined) {
    const risky = programSettings(list);
    if (risky.length > 0) {
      throw new AppError(
        'FORBIDDEN',
        `The repository at "${relative || '.'}" configures programs for git to run (${risky.join(', ')}), and with SANDBOX=off git would read them; remove these settings from its config, or run the service with the sandbox (unset SANDBOX).`,
        { details: risky.map((key) => ({ path: 'path', message: `repository sets ${key}` })) },
      );
    }
  }
  const keys = new Set(parseConfigList(list, !confined).map((e) => e.key.toLowerCase()));
  const defaults: [string, string][] = [];
  if (!keys.has('user.name') && deps.config.GIT_DEFAULT_AUTHOR_NAME) defaults.push(['user.name', deps.config.GIT_DEFAULT_AUTHOR_NAME]);
  if (!keys.has('user.email') && deps.config.GIT_DEFAULT_AUTHOR_EMAIL) defaults.push(['user.email', deps.config.GIT_DEFAULT_AUTHOR_EMAIL]);
  return new Repo(top, relative, gitDir, commonDir, deps, signal, confined ? sanitizedConfig(list) : undefined, defaults);
}
