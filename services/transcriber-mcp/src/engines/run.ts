import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { AppError } from '@mcp-fleet/kit';
import type { Confinement } from '@mcp-fleet/sandbox';

/** The environment of the engines inside the sandbox. */
const ENGINE_ENV = { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' };

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** SIGKILL after this long, rejecting with TIMEOUT. */
  timeoutMs?: number;
  /** The Debian package named in NOT_CONFIGURED when the program is missing. */
  debianPackage: string;
  /** The program runs inside this sandbox, seeing only these directories. */
  confinement: Confinement;
}

const KEEP = 1024 * 1024;

/**
 * Runs a program with an argument array (no shell). Abort or timeout kills it (SIGKILL) and
 * rejects; a missing program is NOT_CONFIGURED naming its package; a non-zero exit resolves so
 * the caller maps the engine's message.
 */
export function run(program: string, args: string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const { signal, timeoutMs, debianPackage } = options;
    if (signal?.aborted) return reject(cancelled(signal));
    const { sandbox, readOnly, writable } = options.confinement;
    let child: ChildProcessWithoutNullStreams;
    try {
      child = sandbox.spawn(
        program,
        args,
        { cwd: '/', env: ENGINE_ENV, readOnly, writable },
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ) as ChildProcessWithoutNullStreams;
    } catch (err) {
      return reject(startError(program, debianPackage, err));
    }
    let stdout = '';
    let stderr = '';
    let failure: Error | undefined;
    const stop = (err: Error) => {
      failure ??= err;
      child.kill('SIGKILL');
    };
    const onAbort = () => stop(cancelled(signal!));
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => stop(new AppError('TIMEOUT', `${program} did not finish within ${timeoutMs} ms; it was stopped.`)), timeoutMs);
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      if (stdout.length < KEEP) stdout += s;
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr = (stderr + s).slice(-KEEP);
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      done();
      reject(startError(program, debianPackage, err));
    });
    child.on('close', (code) => {
      done();
      if (failure) reject(failure);
      else resolve({ code, stdout, stderr });
    });
  });
}

function startError(program: string, debianPackage: string, err: unknown): Error {
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
    return new AppError(
      'NOT_CONFIGURED',
      `${program} is not installed: apt-get install ${debianPackage} (Debian package ${debianPackage}).`,
    );
  }
  return err as Error;
}

function cancelled(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new AppError('TIMEOUT', 'The transcription was cancelled.');
}

/** Whether a program runs at all (for /health and NOT_CONFIGURED), with its first output line. */
export async function probeProgram(
  program: string,
  args: string[],
  debianPackage: string,
  confinement: Confinement,
): Promise<{ ok: boolean; detail: string }> {
  try {
    const res = await run(program, args, { timeoutMs: 10_000, debianPackage, confinement });
    const line = `${res.stdout}\n${res.stderr}`.split('\n').find((l) => l.trim()) ?? '';
    return { ok: true, detail: line.trim().slice(0, 200) };
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  }
}
