import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import os from 'node:os';
import { AppError } from '@mcp-fleet/kit';
import type { Sandbox } from '@mcp-fleet/sandbox';

export interface RunProcessOptions {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** stdout and stderr each keep at most this many bytes; past it the process is stopped. */
  maxOutputBytes: number;
  stdin?: string;
  /** Aborted when the tool call ends early (client gone, call time limit). */
  signal?: AbortSignal;
  /** Between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** The program runs inside it, seeing only these directories. */
  sandbox: Sandbox;
  writable?: string[];
  readOnly?: string[];
}

export interface RunProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  truncated: boolean;
  timedOut: boolean;
}

class CappedBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  cut = false;

  constructor(private readonly max: number) {}

  /** Returns false once the cap is passed. */
  push(chunk: Buffer): boolean {
    if (this.cut) return false;
    const room = this.max - this.size;
    if (chunk.length > room) {
      this.chunks.push(chunk.subarray(0, room));
      this.size = this.max;
      this.cut = true;
      return false;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
    return true;
  }

  text(): string {
    const s = Buffer.concat(this.chunks).toString('utf8');
    // A cut through a multi-byte character leaves a replacement character at the end; drop it.
    return this.cut ? s.replace(/\uFFFD+$/, '') : s;
  }
}

/** Why a program did not start, as the caller's error (NOT_CONFIGURED from the sandbox passes through). */
function startError(file: string, err: unknown): AppError {
  if (err instanceof AppError) return err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') {
    return new AppError('NOT_FOUND', `Program "${file}" was not found on PATH; check its name.`, {
      details: [{ path: 'command', message: 'not found' }],
    });
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new AppError('FORBIDDEN', `Program "${file}" cannot be executed by the service user.`, {
      details: [{ path: 'command', message: 'not executable' }],
    });
  }
  return new AppError('INTERNAL', `Program "${file}" could not be started.`, { cause: err });
}

/** Signals the whole process group (the child was started detached, as its leader). */
function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Runs a program without a shell, inside the OS sandbox (its own PID namespace: when the program
 * exits or is stopped, everything it started ends), with a time limit (SIGTERM, then SIGKILL after
 * a grace period) and capped output.
 */
export function runProcess(options: RunProcessOptions): Promise<RunProcessResult> {
  const grace = options.killGraceMs ?? 1000;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let child: ChildProcessWithoutNullStreams;
    try {
      child = options.sandbox.spawn(
        options.file,
        options.args,
        { cwd: options.cwd, env: options.env, writable: options.writable, readOnly: options.readOnly },
        { detached: true, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true },
      ) as ChildProcessWithoutNullStreams;
    } catch (err) {
      reject(startError(options.file, err));
      return;
    }
    const stdout = new CappedBuffer(options.maxOutputBytes);
    const stderr = new CappedBuffer(options.maxOutputBytes);
    let timedOut = false;
    let stopping = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let giveUpTimer: NodeJS.Timeout | undefined;

    const stop = () => {
      if (stopping) return;
      stopping = true;
      options.sandbox.signalInside(child, 'SIGTERM');
      killTimer = setTimeout(() => {
        signalGroup(child.pid, 'SIGKILL');
        // A grandchild that left the group can still hold the pipes open; stop waiting for it.
        giveUpTimer = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          finish(null, 'SIGKILL');
        }, 2000);
      }, grace);
    };

    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    const onAbort = () => stop();
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const cleanup = () => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      clearTimeout(giveUpTimer);
      options.signal?.removeEventListener('abort', onAbort);
    };

    const finish = (exitCode: number | null, exitSignal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      cleanup();
      // bubblewrap exits with 128 + the number of the signal that ended the program inside
      const [code, signal] =
        stopping && exitSignal === null && exitCode === 128 + os.constants.signals.SIGTERM
          ? [null, 'SIGTERM' as const]
          : [exitCode, exitSignal];
      resolve({
        exitCode: code,
        signal,
        stdout: stdout.text(),
        stderr: stderr.text(),
        durationMs: Math.round(performance.now() - started),
        truncated: stdout.cut || stderr.cut,
        timedOut,
      });
    };

    child.stdout.on('data', (chunk: Buffer) => {
      if (!stdout.push(chunk)) stop();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (!stderr.push(chunk)) stop();
    });
    child.stdin.on('error', () => {
      // The program exited without reading all of stdin (EPIPE): not an error of the call.
    });
    child.stdin.end(options.stdin ?? '');

    child.on('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      cleanup();
      reject(startError(options.file, err));
    });
    child.on('exit', () => {
      // Background children left in the group would keep the pipes open (and outlive the call).
      signalGroup(child.pid, 'SIGKILL');
    });
    child.on('close', (code, signal) => finish(code, signal));
  });
}
