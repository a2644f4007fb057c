import { AppError } from '@mcp-fleet/kit';
import { runToCompletion, type Confinement, type Sandbox } from '@mcp-fleet/sandbox';

export interface RunOptions {
  signal?: AbortSignal;
  /** Kills the process (SIGKILL) after this long and rejects with TIMEOUT. */
  timeoutMs?: number;
  /** Bytes of stdout kept (the rest is dropped); lines are still passed to onLine. Default 8 MiB. */
  maxStdout?: number;
  /** Bytes of stderr kept, from the end. Default 256 KiB. */
  maxStderr?: number;
  /** Called with every complete stdout line (ffmpeg's -progress pipe:1). */
  onLine?: (line: string) => void;
}

export interface SandboxedRunOptions extends RunOptions {
  /** Where the program runs: inside the sandbox, seeing only these directories. */
  confinement: Confinement;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs ffmpeg or ffprobe with an argument array (never a shell), in the sandbox's one runner.
 * Abort or timeout kills it with SIGKILL and rejects; a non-zero exit resolves, so callers map the
 * engine's own message.
 */
export function runProgram(program: string, args: string[], options: SandboxedRunOptions): Promise<RunResult> {
  const { maxStdout, maxStderr, onLine, ...rest } = options;
  return runToCompletion(program, args, {
    ...rest,
    maxOutputBytes: maxStdout ?? 8 * 1024 * 1024,
    maxStderrBytes: maxStderr ?? 256 * 1024,
    keepStderr: 'end',
    ...(onLine ? { onStdoutLine: onLine } : {}),
    notInstalled: `${program} is not installed; apt-get install ffmpeg (Debian package ffmpeg).`,
    cancelled: 'The operation was cancelled.',
  });
}

/** The last meaningful lines of an engine's stderr, for an error message. */
export function engineMessage(stderr: string, lines = 3): string {
  const kept = stderr
    .split('\n')
    .map((l) => l.replace(/^\[[^\]]+ @ 0x[0-9a-f]+\]\s*/, '').trim())
    .filter((l) => l && !/^(Press \[q\]|frame=|size=|video:|Stream mapping|Input #|Output #)/.test(l));
  return kept.slice(-lines).join('; ').slice(0, 600) || 'no message';
}

export interface EngineInfo {
  available: boolean;
  program: string;
  version?: string;
  error?: string;
}

/** Runs `<program> -version`, so /health and the tools know whether audio/video work is possible. */
export async function detectEngine(program: string, sandbox: Sandbox): Promise<EngineInfo> {
  try {
    const res = await runProgram(program, ['-hide_banner', '-version'], { timeoutMs: 10_000, confinement: { sandbox } });
    if (res.code !== 0) return { available: false, program, error: `${program} -version exited with ${res.code}` };
    const version = /version\s+(\S+)/.exec(res.stdout)?.[1];
    return { available: true, program, ...(version ? { version } : {}) };
  } catch (err) {
    return { available: false, program, error: (err as Error).message };
  }
}

export interface Engines {
  ffmpeg: EngineInfo;
  ffprobe: EngineInfo;
}

/** How often a missing engine is looked for again when a call needs it. */
const RECHECK_MS = 5000;

/**
 * ffmpeg and ffprobe as last found. A call that needs a missing one looks again (at most every few
 * seconds), so `apt-get install ffmpeg` takes effect without a restart.
 */
export class AvEngines implements Engines {
  private checkedAt = 0;

  private constructor(
    private readonly programs: { ffmpeg: string; ffprobe: string },
    private readonly sandbox: Sandbox,
    public ffmpeg: EngineInfo,
    public ffprobe: EngineInfo,
  ) {}

  static async detect(programs: { ffmpeg: string; ffprobe: string }, sandbox: Sandbox): Promise<AvEngines> {
    const [ffmpeg, ffprobe] = await Promise.all([detectEngine(programs.ffmpeg, sandbox), detectEngine(programs.ffprobe, sandbox)]);
    const engines = new AvEngines(programs, sandbox, ffmpeg, ffprobe);
    engines.checkedAt = Date.now();
    return engines;
  }

  /** Looks for missing engines again (throttled); returns whether both are there. */
  async refresh(): Promise<boolean> {
    if (this.ffmpeg.available && this.ffprobe.available) return true;
    if (Date.now() - this.checkedAt >= RECHECK_MS) {
      this.checkedAt = Date.now();
      if (!this.ffmpeg.available) this.ffmpeg = await detectEngine(this.programs.ffmpeg, this.sandbox);
      if (!this.ffprobe.available) this.ffprobe = await detectEngine(this.programs.ffprobe, this.sandbox);
    }
    return this.ffmpeg.available && this.ffprobe.available;
  }

  /** Throws NOT_CONFIGURED naming the Debian package when ffmpeg or ffprobe is still missing. */
  async require(): Promise<void> {
    if (!(await this.refresh())) requireAv(this);
  }
}

/** Throws NOT_CONFIGURED naming the Debian package when ffmpeg or ffprobe is missing. */
export function requireAv(engines: Engines): void {
  const missing = [engines.ffmpeg, engines.ffprobe].filter((e) => !e.available).map((e) => e.program);
  if (missing.length) {
    throw new AppError(
      'NOT_CONFIGURED',
      `Audio and video need ffmpeg and ffprobe, and ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not installed: ` +
        'apt-get install ffmpeg (Debian package ffmpeg), or set FFMPEG_PATH/FFPROBE_PATH. Images work without it.',
    );
  }
}
