import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError, type Logger } from '@mcp-fleet/kit';
import { within, type Workspace } from '@mcp-fleet/kit/workspace';
import { GitPluginError, simpleGit, type SimpleGit } from 'simple-git';
import type { Config } from '../config';

export interface GitDeps {
  config: Config;
  workspace: Workspace;
  logger: Logger;
}

/**
 * `-c` settings on every git command line. They override the repository's own config, so a
 * hostile repository cannot run its hooks or ask git to sign with its own gpg program.
 */
export const HARDENING_CONFIG = ['core.hooksPath=/dev/null', 'commit.gpgSign=false', 'core.quotePath=false', 'color.ui=false'];

/** Transports git may use; `ext::` (runs a command) and anything else is refused, overriding all config. */
const ALLOWED_PROTOCOLS = 'file:git:http:https:ssh';

/**
 * Repository-level settings (scope local or worktree, includes followed) that make git run a
 * program the repository chose. A repository that sets one is refused rather than trusted.
 */
const PROGRAM_SETTINGS: RegExp[] = [
  /^core\.(sshcommand|gitproxy|askpass|editor|pager)$/,
  /^sequence\.editor$/,
  /^credential\.(.+\.)?helper$/,
  /^filter\..+\.(clean|smudge|process)$/,
  /^diff\.external$/,
  /^diff\..+\.(command|textconv)$/,
  /^merge\..+\.driver$/,
  /^remote\..+\.(uploadpack|receivepack)$/,
  /^gpg\.(.+\.)?program$/,
];

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

/** Maps a failure of git (or of simple-git around it) to the fleet's error codes; never INTERNAL. */
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
      `${text} (the repository belongs to another user; the operator can mark it safe with git config --global --add safe.directory).`,
    );
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
      `${text} Pass author {name, email} or configure user.name and user.email for the service user.`,
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
export function callTimeoutMs(config: Config): number {
  return config.GIT_TIMEOUT_MS + 5000;
}

export interface RunOptions {
  /** Extra environment for this command only (e.g. committer identity). */
  env?: Record<string, string>;
  /** Overrides GIT_TIMEOUT_MS for this command. */
  timeoutMs?: number;
}

/** One repository inside the workspace roots, with git wired for safe use. */
export class Repo {
  constructor(
    readonly top: string,
    readonly relative: string,
    private readonly deps: GitDeps,
    private readonly signal: AbortSignal,
  ) {}

  private env(extra: Record<string, string> = {}): Record<string, string> {
    return gitEnv(this.deps, extra);
  }

  /**
   * Runs `fn` with a simple-git instance bound to the repository. The instance is aborted when
   * the tool call ends or GIT_TIMEOUT_MS passes, and git errors become fleet errors.
   */
  async run<T>(
    action: string,
    fn: (git: SimpleGit) => Promise<T>,
    options: RunOptions & { fallback?: GitFailureOptions['fallback'] } = {},
  ): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.deps.config.GIT_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([this.signal, timeout]);
    const git = simpleGit({
      baseDir: this.top,
      binary: 'git',
      maxConcurrentProcesses: 2,
      trimmed: false,
      config: HARDENING_CONFIG,
      abort: signal,
      // Needed only for our own `-c core.hooksPath=/dev/null` (which turns hooks OFF); every other
      // simple-git safety check stays on, and no caller text ever becomes a `-c` or an option.
      unsafe: { allowUnsafeHooksPath: true },
    }).env(this.env(options.env));
    try {
      return await fn(git);
    } catch (err) {
      throw toGitAppError(err, { action, fallback: options.fallback, timeoutMs, timedOut: () => timeout.aborted });
    }
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
   * Runs git and keeps at most `maxBytes` of its standard output, stopping git once it has
   * written more (a huge diff must not be buffered whole).
   */
  async capture(action: string, args: string[], maxBytes: number): Promise<{ text: string; truncated: boolean }> {
    const timeoutMs = this.deps.config.GIT_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([this.signal, timeout]);
    const argv = [...HARDENING_CONFIG.flatMap((c) => ['-c', c]), ...args];
    return new Promise((resolve, reject) => {
      const child = spawn('git', argv, { cwd: this.top, env: this.env(), stdio: ['ignore', 'pipe', 'pipe'] });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      let stderr = '';
      const onAbort = () => child.kill('SIGKILL');
      signal.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', (chunk: Buffer) => {
        if (truncated) return;
        const room = maxBytes - size;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          size = maxBytes;
          truncated = true;
          child.kill('SIGTERM');
          return;
        }
        chunks.push(chunk);
        size += chunk.length;
      });
      child.stderr.on('data', (chunk: Buffer) => {
        if (stderr.length < 8192) stderr += chunk.toString('utf8');
      });
      child.on('error', (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(toGitAppError(err, { action, timeoutMs, timedOut: () => timeout.aborted }));
      });
      child.on('close', (code) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted && !truncated) {
          reject(
            timeout.aborted
              ? new AppError('TIMEOUT', `${action} did not finish within ${timeoutMs} ms (GIT_TIMEOUT_MS); the git process was stopped.`)
              : new AppError('TIMEOUT', `${action} was cancelled because the request ended.`),
          );
          return;
        }
        if (code !== 0 && !truncated) {
          reject(toGitAppError(new Error(stderr || `git exited with code ${code}`), { action, timeoutMs, timedOut: () => false }));
          return;
        }
        let text = Buffer.concat(chunks).toString('utf8');
        // A cut through a multi-byte character leaves a replacement character at the end; drop it.
        if (truncated) text = text.replace(/\uFFFD+$/, '');
        resolve({ text, truncated });
      });
    });
  }

  /**
   * A caller's file argument as a pathspec relative to the repository: relative paths are taken
   * from the repository's top, absolute ones must lie inside it; `..`, NUL bytes, the `.git`
   * directory and parent directories that lead outside through a symlink are refused.
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
    }
    return rel === '' ? '.' : rel;
  }
}

export function gitEnv(deps: GitDeps, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...deps.config.GIT_BASE_ENV,
    LANG: 'C',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: ALLOWED_PROTOCOLS,
    GIT_LITERAL_PATHSPECS: '1',
    GIT_OPTIONAL_LOCKS: '0',
    // Repository discovery never climbs above a workspace root.
    GIT_CEILING_DIRECTORIES: [...new Set(deps.workspace.roots.map((r) => path.dirname(r)))].join(':'),
    ...extra,
  };
}

/** Config keys (lower-cased) the repository itself sets that would make git run its programs. */
export function programSettings(configList: string): string[] {
  const found = new Set<string>();
  // `git config --list --show-scope -z` prints scope NUL key LF value NUL.
  const parts = configList.split('\0');
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const scope = parts[i];
    const entry = parts[i + 1];
    if (scope !== 'local' && scope !== 'worktree') continue;
    const newline = entry.indexOf('\n');
    const key = (newline >= 0 ? entry.slice(0, newline) : entry).toLowerCase();
    const value = newline >= 0 ? entry.slice(newline + 1) : '';
    if (key === 'core.fsmonitor' && !/^(false|no|off|0|)$/i.test(value.trim())) found.add(key);
    if (PROGRAM_SETTINGS.some((re) => re.test(key))) found.add(key);
  }
  return [...found];
}

/**
 * Resolves the caller's `path` (or `repository`) to a repository whose work tree and git
 * directory both lie inside the workspace roots, and refuses repositories that configure
 * programs for git to run.
 */
export async function openRepo(deps: GitDeps, input: string, signal: AbortSignal): Promise<Repo> {
  const resolved = await deps.workspace.resolve(input, { mustExist: true });
  const stat = await fs.stat(resolved.absolute);
  if (!stat.isDirectory()) {
    throw new AppError('VALIDATION_ERROR', `path "${input}" is a file; give the directory of a git repository.`, {
      details: [{ path: 'path', message: 'not a directory' }],
    });
  }
  const probe = new Repo(resolved.absolute, resolved.relative, deps, signal);
  const out = await probe
    .run('git rev-parse', (git) => git.raw(['rev-parse', '--show-toplevel', '--absolute-git-dir']))
    .catch((err: unknown) => {
      const message = (err as Error).message;
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
  const [topRaw, gitDirRaw] = out.split('\n').map((s) => s.trim());
  const top = await fs.realpath(topRaw);
  const gitDir = await fs.realpath(gitDirRaw);
  const roots = deps.workspace.roots;
  if (!roots.some((r) => within(r, top)) || !roots.some((r) => within(r, gitDir))) {
    throw new AppError(
      'FORBIDDEN',
      `The repository containing "${input}" lies (partly) outside the workspace roots; only repositories inside them can be used.`,
      {
        details: [{ path: 'path', message: 'repository outside workspace roots' }],
      },
    );
  }
  const relative = path
    .relative(roots.find((r) => within(r, top)) ?? top, top)
    .split(path.sep)
    .join('/');
  const repo = new Repo(top, relative, deps, signal);
  const configList = await repo.run('git config', (git) => git.raw(['config', '--list', '--show-scope', '-z']));
  const risky = programSettings(configList);
  if (risky.length > 0) {
    throw new AppError(
      'FORBIDDEN',
      `The repository at "${relative || '.'}" configures programs for git to run (${risky.join(', ')}); remove these settings from its .git/config before using it here.`,
      { details: risky.map((key) => ({ path: 'path', message: `repository sets ${key}` })) },
    );
  }
  return repo;
}
