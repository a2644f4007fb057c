import { spawn } from 'node:child_process';
import { AppError } from '@mcp-fleet/kit';

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
 * Runs a program without a shell, in its own process group, with a time limit (SIGTERM to the
 * group, SIGKILL after a grace period) and capped output. When the program exits, whatever it
 * left running in its group is killed, so nothing outlives the call.
 */
export function runProcess(options: RunProcessOptions): Promise<RunProcessResult> {
  const grace = options.killGraceMs ?? 1000;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(options.file, options.args, {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
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
      signalGroup(child.pid, 'SIGTERM');
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

    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      cleanup();
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
      if (err.code === 'ENOENT') {
        reject(
          new AppError('NOT_FOUND', `Program "${options.file}" was not found on PATH; check its name.`, {
            details: [{ path: 'command', message: 'not found' }],
          }),
        );
      } else if (err.code === 'EACCES' || err.code === 'EPERM') {
        reject(
          new AppError('FORBIDDEN', `Program "${options.file}" cannot be executed by the service user.`, {
            details: [{ path: 'command', message: 'not executable' }],
          }),
        );
      } else {
        reject(new AppError('INTERNAL', `Program "${options.file}" could not be started.`, { cause: err }));
      }
    });
    child.on('exit', () => {
      // Background children left in the group would keep the pipes open (and outlive the call).
      signalGroup(child.pid, 'SIGKILL');
    });
    child.on('close', (code, signal) => finish(code, signal));
  });
}
