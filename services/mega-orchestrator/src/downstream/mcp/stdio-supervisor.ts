/**
 * Keeping an MCP server behind the gateway running: a stdio server's process started in the OS
 * sandbox (../stdio-sandbox.ts), the last lines of its stderr, and the backoff between starts (the
 * restart delay doubles per failure up to 30 s; a connection that stayed up STABLE_MS resets it).
 * An HTTP server's reconnects follow the same backoff. Both clients of mcp-downstream.ts start
 * their transport through it.
 */
import type { Logger } from '@mcp-fleet/kit';
import { DownstreamFailure } from '../downstream';
import { defaultStdioLauncher, type StdioLaunch, type StdioLauncher } from '../stdio-sandbox';
import type { StdioServerSpec } from './spec';

export const MAX_BACKOFF_MS = 30_000;
/** A connection that stayed up this long resets the backoff. */
export const STABLE_MS = 30_000;
/** Time a server has to start and answer initialize (or server/discover). */
export const START_TIMEOUT_MS = 30_000;
const STDERR_LINES = 20;

export interface SupervisorOptions {
  logger: Logger;
  /** First restart delay after the server dies or fails to start; doubles per failure up to 30 s. */
  restartBackoffMs?: number;
  /** How a stdio server's process is started: inside the OS sandbox by default (stdio-sandbox.ts). */
  launch?: StdioLauncher;
}

export class StdioSupervisor {
  private failures = 0;
  private nextAttemptAt = 0;
  private connectedAt = 0;
  private readonly stderr: string[] = [];
  /** What the last launch named in its arguments that its sandbox does not show (StdioLaunch.hidden). */
  private hidden: string[] = [];
  /** Whether the last launch's command was mounted alone in its sandbox, and what to declare (StdioLaunch.commandAlone). */
  private commandAlone?: StdioLaunch['commandAlone'];
  private restartTimer?: NodeJS.Timeout;
  /** Why the server is not running (or did not start), for errors and /services. */
  lastProblem = 'not started yet';
  /** How many times the server was started (stdio) or connected (HTTP), for /services and tests. */
  starts = 0;
  private stopped = false;

  constructor(
    private readonly id: string,
    private readonly options: SupervisorOptions,
  ) {}

  /** The process a stdio server is started as (sandboxed by default), its stderr collected anew; or why it may not start (shown in /services). */
  launch(spec: StdioServerSpec): StdioLaunch | DownstreamFailure {
    let run: StdioLaunch;
    try {
      run = (this.options.launch ?? defaultStdioLauncher())(this.id, spec);
    } catch (err) {
      this.failed((err as Error).message);
      return new DownstreamFailure('refused', `${this.id} was not started: ${this.lastProblem}`, false, { cause: err });
    }
    this.stderr.length = 0;
    this.hidden = run.hidden ?? [];
    this.commandAlone = run.commandAlone;
    return run;
  }

  /** A stdio server's stderr: its last lines kept for errors, each logged at debug. */
  readonly onStderr = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      this.stderr.push(line.slice(0, 500));
      if (this.stderr.length > STDERR_LINES) this.stderr.shift();
      this.options.logger.debug(`${this.id} stderr`, { line: line.slice(0, 500) });
    }
  };

  /**
   * What a stdio server wrote to stderr before it failed: its last lines go to the operator's log
   * only (they may echo its environment); the text that reaches /services, errors and sessions says
   * no more than that there were some. `log: false` where the failure is no stop (a server declared
   * to no era that does not answer server/discover: it is spoken to in 2025, its banner on stderr
   * no warning).
   */
  stderrTail(log = true): string {
    const hint = this.sandboxHint();
    if (this.stderr.length === 0) return hint;
    if (log) this.options.logger.warn(`${this.id} wrote to stderr before it stopped`, { stderr: this.stderr.slice(-5) });
    return ` (${this.stderr.length} line${this.stderr.length === 1 ? '' : 's'} on its stderr: see the gateway's log)${hint}`;
  }

  /** What to do when a path the server was given is outside its sandbox (the usual cause of a sandboxed server's failed start). */
  private sandboxHint(): string {
    const alone = this.commandAlone;
    const command = alone
      ? `; its command ${alone.command} lies outside the directories its OS sandbox shows and is mounted alone, without the files it loads beside it: ` +
        `give its mcpServers entry "sandbox": {"readOnly": ["${alone.declare}"]}`
      : '';
    if (this.hidden.length === 0) return command;
    const named = this.hidden.slice(0, 3).join(', ') + (this.hidden.length > 3 ? ` and ${this.hidden.length - 3} more` : '');
    return (
      `${command}; its OS sandbox does not show ${named}, named in its args: give its mcpServers entry "cwd" (its own directory) ` +
      `or "sandbox": {"readOnly": [...]} ("writable" for what it writes) with ${this.hidden.length === 1 ? 'that path' : 'those paths'}`
    );
  }

  /** The server is up (started, or connected to): the backoff is reset once it stays up STABLE_MS. */
  up(): void {
    this.connectedAt = Date.now();
  }

  /** It failed to start or stopped: the next start waits for the backoff. */
  failed(problem: string): void {
    if (this.connectedAt && Date.now() - this.connectedAt > STABLE_MS) this.failures = 0;
    this.connectedAt = 0;
    this.failures += 1;
    // a program that is not there says so once, with what to do (not each probe's "spawn x ENOENT")
    const missing = /\bspawn (\S+) ENOENT\b/.exec(problem);
    this.lastProblem = missing
      ? `its command ${missing[1]} was not found on the gateway's PATH: install it there, or give its full path as "command"`
      : problem;
    const base = this.options.restartBackoffMs ?? 1000;
    this.nextAttemptAt = Date.now() + Math.min(MAX_BACKOFF_MS, base * 2 ** (this.failures - 1));
  }

  /** Milliseconds before the next start may be tried (0 or less: now). */
  get wait(): number {
    return this.nextAttemptAt - Date.now();
  }

  /** A stdio server that died is started again after its backoff by `start`, without waiting for a call (again while it fails). */
  scheduleRestart(start: () => Promise<unknown>): void {
    if (this.restartTimer || this.stopped) return;
    this.restartTimer = setTimeout(
      () => {
        this.restartTimer = undefined;
        start().catch(() => this.scheduleRestart(start));
      },
      Math.max(0, this.wait),
    );
    this.restartTimer.unref();
  }

  /** No more restarts. */
  stop(): void {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
  }
}
