import { runToCompletion, type Confinement } from '@mcp-fleet/sandbox';

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

/** Bytes kept of stdout (the first) and of stderr (the last). */
const KEEP = 1024 * 1024;

/**
 * Runs an engine with an argument array (no shell), in the sandbox's one runner. Abort or timeout
 * kills it (SIGKILL) and rejects; a missing program is NOT_CONFIGURED naming its package; a
 * non-zero exit resolves so the caller maps the engine's message.
 */
export function run(program: string, args: string[], options: RunOptions): Promise<RunResult> {
  const { debianPackage, ...rest } = options;
  return runToCompletion(program, args, {
    ...rest,
    maxOutputBytes: KEEP,
    keepStderr: 'end',
    notInstalled: `${program} is not installed: apt-get install ${debianPackage} (Debian package ${debianPackage}).`,
    cancelled: 'The transcription was cancelled.',
  });
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
