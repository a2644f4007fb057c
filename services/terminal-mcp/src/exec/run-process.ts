import { AppError } from '@mcp-fleet/kit';
import { runInSandbox, type Sandbox } from '@mcp-fleet/sandbox';

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

/**
 * Runs a program without a shell, inside the OS sandbox (its own PID namespace: when the program
 * exits or is stopped, everything it started ends), with a time limit (SIGTERM, then SIGKILL after
 * a grace period) and capped output: the sandbox's one runner, its failures to start said for a command line.
 */
export async function runProcess(options: RunProcessOptions): Promise<RunProcessResult> {
  const res = await runInSandbox(options.sandbox, options.file, options.args, {
    policy: { cwd: options.cwd, env: options.env, writable: options.writable, readOnly: options.readOnly },
    timeoutMs: options.timeoutMs,
    maxOutputBytes: options.maxOutputBytes,
    stdin: options.stdin ?? '',
    signal: options.signal,
    killGraceMs: options.killGraceMs ?? 1000,
  }).catch((err: unknown) => {
    throw startError(options.file, err);
  });
  return {
    exitCode: res.code,
    signal: res.signal,
    stdout: res.stdout,
    stderr: res.stderr,
    durationMs: res.durationMs,
    truncated: res.truncated,
    timedOut: res.timedOut,
  };
}
