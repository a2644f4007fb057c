/**
 * The one way the fleet runs a program to its end inside the sandbox and collects what it wrote:
 * no shell, capped output, a time limit, the call's abort signal, and a stop that reaches every
 * process the program started (terminal-mcp's commands, media-mcp's ffmpeg, transcriber-mcp's
 * engines). Programs that talk for as long as they live (the gateway's stdio servers) do not belong here.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import os from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { AppError } from '@mcp-fleet/kit';
import type { Confinement, Sandbox, SandboxPolicy } from './sandbox';

export interface RunInSandboxOptions {
  /** What the program sees: its cwd, its whole environment, the directories mounted. */
  policy: SandboxPolicy;
  /** Stops the program after this long (`timedOut` in the result); none when absent. */
  timeoutMs?: number;
  /** The call's signal: stops the program when aborted; an already aborted signal starts nothing. */
  signal?: AbortSignal;
  /** Written to the program's stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  /** Bytes of stdout kept, and of stderr unless `maxStderrBytes` says otherwise. */
  maxOutputBytes: number;
  maxStderrBytes?: number;
  /** Which bytes of stderr are kept once it passes its cap: the first (default) or the last (an engine's summary). */
  keepStderr?: 'start' | 'end';
  /** Past a cap: stop the program (default), or let it run on and drop the surplus. */
  onOverflow?: 'stop' | 'drop';
  /**
   * How a stop is made. With a grace (default 1000 ms) the programs inside get SIGTERM, and the
   * process group SIGKILL after the grace; with 0 the process group gets SIGKILL at once.
   */
  killGraceMs?: number;
  /** Every complete stdout line, its line ending trimmed, also past the cap (a progress pipe). */
  onStdoutLine?: (line: string) => void;
}

export interface RunInSandboxResult {
  /** The exit code; null when a signal ended it. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The time limit was reached and the program stopped. */
  timedOut: boolean;
  /** Output passed a cap (and was cut). */
  truncated: boolean;
  /** What stopped it first; absent when it ended by itself. */
  stoppedBy?: 'timeout' | 'abort' | 'output';
  durationMs: number;
}

/** How long to wait for the pipes after SIGKILL: a grandchild that left the group may hold them open. */
const GIVE_UP_MS = 2000;

/** The signals a stop sends. */
const STOP_SIGNALS = ['SIGTERM', 'SIGKILL'] as const;

/** Keeps the first or the last `max` bytes of a stream. */
class CappedBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  cut = false;

  constructor(
    private readonly max: number,
    private readonly keep: 'start' | 'end',
  ) {}

  /** Returns false once the cap is passed. */
  push(chunk: Buffer): boolean {
    if (this.keep === 'end') {
      this.chunks.push(chunk);
      this.size += chunk.length;
      // Drop whole chunks from the front while what stays still fills the cap; text() cuts the rest.
      while (this.chunks.length > 1 && this.size - this.chunks[0]!.length >= this.max) {
        this.size -= this.chunks.shift()!.length;
        this.cut = true;
      }
      this.cut ||= this.size > this.max;
    } else if (!this.cut) {
      const kept = chunk.subarray(0, this.max - this.size);
      this.chunks.push(kept);
      this.size += kept.length;
      this.cut = kept.length < chunk.length;
    }
    return !this.cut;
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    if (!this.cut) return all.toString('utf8');
    // A cut through a multi-byte character leaves a replacement character at the cut; drop it.
    if (this.keep === 'start') return all.toString('utf8').replace(/\uFFFD+$/, '');
    return all
      .subarray(all.length - this.max)
      .toString('utf8')
      .replace(/^\uFFFD+/, '');
  }
}

/** Signals a process group (the child is started detached, as its leader). */
function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Runs `file args` inside the sandbox to its end and resolves with what it wrote and how it ended:
 * a non-zero exit, a signal, the time limit, an abort or too much output are all results. Rejects
 * only when the program could not be started, with the error as it came (the sandbox's
 * NOT_CONFIGURED, or spawn's ENOENT/EACCES), so each caller says it in its own words.
 */
export function runInSandbox(sandbox: Sandbox, file: string, args: string[], options: RunInSandboxOptions): Promise<RunInSandboxResult> {
  const grace = options.killGraceMs ?? 1000;
  const started = performance.now();
  if (options.signal?.aborted) {
    return Promise.resolve({
      code: null,
      signal: null,
      stdout: '',
      stderr: '',
      timedOut: false,
      truncated: false,
      stoppedBy: 'abort',
      durationMs: 0,
    });
  }
  return new Promise((resolve, reject) => {
    let child: ChildProcessWithoutNullStreams;
    try {
      child = sandbox.spawn(file, args, options.policy, {
        // Its own process group, so a stop reaches everything it started (also with SANDBOX=off).
        detached: true,
        stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      }) as ChildProcessWithoutNullStreams;
    } catch (err) {
      reject(err as Error);
      return;
    }
    const stdout = new CappedBuffer(options.maxOutputBytes, 'start');
    const stderr = new CappedBuffer(options.maxStderrBytes ?? options.maxOutputBytes, options.keepStderr ?? 'start');
    const stopOnOverflow = (options.onOverflow ?? 'stop') === 'stop';
    let stoppedBy: RunInSandboxResult['stoppedBy'];
    let timedOut = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let giveUpTimer: NodeJS.Timeout | undefined;

    const kill = () => {
      // Inside first (bubblewrap passes no signal on, and may be told not to die with its parent), then the group.
      sandbox.signalInside(child, 'SIGKILL');
      signalGroup(child.pid, 'SIGKILL');
      giveUpTimer = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(null, 'SIGKILL');
      }, GIVE_UP_MS);
    };
    const stop = (why: NonNullable<RunInSandboxResult['stoppedBy']>) => {
      if (stoppedBy) return;
      stoppedBy = why;
      if (grace <= 0) return kill();
      sandbox.signalInside(child, 'SIGTERM');
      killTimer = setTimeout(kill, grace);
    };

    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            stop('timeout');
          }, options.timeoutMs);
    const onAbort = () => stop('abort');
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const cleanup = () => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      clearTimeout(giveUpTimer);
      options.signal?.removeEventListener('abort', onAbort);
    };

    const lines = options.onStdoutLine ? { decoder: new StringDecoder('utf8'), pending: '', emit: options.onStdoutLine } : undefined;
    const finish = (exitCode: number | null, exitSignal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      cleanup();
      if (lines && !stoppedBy) {
        const last = lines.pending + lines.decoder.end();
        if (last) lines.emit(last.trimEnd());
      }
      // bubblewrap exits with 128 + the number of the signal that ended the program inside: after a stop, that signal
      const sent = STOP_SIGNALS.find((name) => exitCode === 128 + os.constants.signals[name]);
      const [code, signal] = stoppedBy && exitSignal === null && sent ? [null, sent] : [exitCode, exitSignal];
      resolve({
        code,
        signal,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut,
        truncated: stdout.cut || stderr.cut,
        ...(stoppedBy ? { stoppedBy } : {}),
        durationMs: Math.round(performance.now() - started),
      });
    };

    child.stdout.on('data', (chunk: Buffer) => {
      if (!stdout.push(chunk) && stopOnOverflow) stop('output');
      if (lines) {
        const parts = (lines.pending + lines.decoder.write(chunk)).split('\n');
        lines.pending = parts.pop() ?? '';
        for (const line of parts) lines.emit(line.trimEnd());
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (!stderr.push(chunk) && stopOnOverflow) stop('output');
    });
    if (options.stdin !== undefined) {
      child.stdin.on('error', () => {
        // The program exited without reading all of stdin (EPIPE): not an error of the call.
      });
      child.stdin.end(options.stdin);
    }

    child.on('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      cleanup();
      reject(err);
    });
    child.on('exit', () => {
      // Background children left in the group would keep the pipes open (and outlive the call).
      signalGroup(child.pid, 'SIGKILL');
    });
    child.on('close', (code, signal) => finish(code, signal));
  });
}

/** The environment of a program run by `runToCompletion` when none is given. */
export const PROGRAM_ENV: Readonly<Record<string, string>> = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' };

export interface RunToCompletionOptions extends Omit<RunInSandboxOptions, 'policy' | 'onOverflow' | 'killGraceMs'> {
  /** The sandbox and the directories the program sees. */
  confinement: Confinement;
  /** Default `/`. */
  cwd?: string;
  /** Default PROGRAM_ENV. */
  env?: Record<string, string>;
  /** The NOT_CONFIGURED message when the program is not installed (what to install). */
  notInstalled: string;
  /** The TIMEOUT message when the call is aborted without a reason of its own. */
  cancelled: string;
}

/**
 * For a program whose work the call needs whole (an engine such as ffmpeg): runs it with
 * `runInSandbox` and resolves with its exit code and output (a non-zero exit too, so the caller
 * says what the engine said). A stop is the call's failure: the time limit rejects TIMEOUT, an
 * abort rejects with the signal's reason; the program is killed at once (SIGKILL) and output past
 * the caps is dropped while it runs on. A missing program rejects NOT_CONFIGURED.
 */
export async function runToCompletion(
  file: string,
  args: string[],
  options: RunToCompletionOptions,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { confinement, cwd, env, notInstalled, cancelled, ...run } = options;
  const { sandbox, readOnly, writable } = confinement;
  const res = await runInSandbox(sandbox, file, args, {
    ...run,
    policy: { cwd: cwd ?? '/', env: env ?? { ...PROGRAM_ENV }, readOnly, writable },
    onOverflow: 'drop',
    killGraceMs: 0,
  }).catch((err: unknown) => {
    throw (err as NodeJS.ErrnoException).code === 'ENOENT' ? new AppError('NOT_CONFIGURED', notInstalled) : err;
  });
  if (res.stoppedBy === 'abort') {
    const reason: unknown = options.signal?.reason;
    throw reason instanceof Error ? reason : new AppError('TIMEOUT', cancelled);
  }
  if (res.stoppedBy === 'timeout') {
    throw new AppError('TIMEOUT', `${file} did not finish within ${options.timeoutMs} ms; it was stopped.`);
  }
  return { code: res.code, stdout: res.stdout, stderr: res.stderr };
}
