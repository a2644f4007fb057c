import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import readline from 'node:readline';
import type { LaunchSpec } from './plan';

export type ServiceState = 'starting' | 'healthy' | 'failed' | 'exited' | 'restarting' | 'crash-loop' | 'stopped';

export interface RunningService {
  spec: LaunchSpec;
  child: ChildProcess;
  state: ServiceState;
  error?: string;
  startedMs?: number;
  lastLines: string[];
  /** Restarts after a crash, and when they happened (for the crash-loop window). */
  restarts: number;
  restartTimes: number[];
  colorCode: number;
}

/**
 * What happens when a service that was healthy dies, as compose's `restart: unless-stopped` with a
 * crash-loop limit: restart after a backoff that doubles from `initialBackoffMs` to `maxBackoffMs`,
 * and give up after `maxRestarts` restarts within `windowMs`. A service that never became healthy
 * is not restarted: that is a configuration error to fix, reported with its last error line.
 */
export interface RestartPolicy {
  enabled: boolean;
  maxRestarts: number;
  windowMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_RESTART: RestartPolicy = {
  enabled: true,
  maxRestarts: 5,
  windowMs: 60_000,
  initialBackoffMs: 500,
  maxBackoffMs: 30_000,
};

export interface LauncherOptions {
  startTimeoutMs: number;
  stopTimeoutMs: number;
  color: boolean;
  out: NodeJS.WritableStream;
  /** Node flags for the children (the tsx loader). */
  nodeArgs: string[];
  restart?: Partial<RestartPolicy>;
}

const COLORS = [36, 32, 33, 35, 34, 96, 92, 93, 95, 94];
const LEVEL_COLORS: Record<string, number> = { error: 31, warn: 33, info: 32, debug: 90 };

function paint(on: boolean, code: number, text: string): string {
  return on ? `\u001b[${code}m${text}\u001b[0m` : text;
}

/** One log line, prefixed with its service; JSON lines are shown as "level message key=value". */
export function formatLine(id: string, width: number, line: string, color: boolean, colorCode: number): string {
  const prefix = paint(color, colorCode, `${id.padEnd(width)} |`);
  if (!color || !line.startsWith('{')) return `${prefix} ${line}`;
  try {
    const { level, message, timestamp, service: _service, ...rest } = JSON.parse(line) as Record<string, unknown>;
    const extras = Object.entries(rest)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' ');
    const time = typeof timestamp === 'string' ? timestamp.slice(11, 19) : '';
    return `${prefix} ${time} ${paint(color, LEVEL_COLORS[String(level)] ?? 37, String(level).padEnd(5))} ${message}${extras ? ' ' + paint(color, 90, extras) : ''}`;
  } catch {
    return `${prefix} ${line}`;
  }
}

/**
 * A GET of a local service's `path` within `timeoutMs`: its status and body, or undefined when it
 * does not answer. Node's http rather than fetch: the launcher asks each starting service four
 * times a second, and fetch (undici) costs the start more CPU, loaded and per request.
 */
export function localGet(url: string, timeoutMs = 1000): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (b: Buffer) => chunks.push(b));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', () => resolve(undefined));
    });
    const timer = setTimeout(() => req.destroy(), timeoutMs);
    req.on('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}

async function healthy(url: string): Promise<boolean> {
  const res = await localGet(`${url}/health`);
  return res !== undefined && res.status >= 200 && res.status < 300;
}

export class Launcher {
  readonly services: RunningService[] = [];
  private stopping = false;
  /** Ends waitHealthy's pause early: a starting service logged that it listens, so its health is asked at once. */
  private wake?: () => void;

  constructor(private readonly options: LauncherOptions) {}

  private write(line: string) {
    this.options.out.write(line + '\n');
  }

  private get restartPolicy(): RestartPolicy {
    return { ...DEFAULT_RESTART, ...this.options.restart };
  }

  start(specs: LaunchSpec[]): RunningService[] {
    this.width = Math.max(this.width, ...specs.map((s) => s.entry.id.length));
    specs.forEach((spec, i) => {
      // the fleet's secrets live here: only this user may list it
      fs.mkdirSync(spec.env.DATA_DIR!, { recursive: true, mode: 0o700 });
      // `child` is set by spawn() right below.
      const svc = { spec, state: 'starting', lastLines: [], restarts: 0, restartTimes: [], colorCode: COLORS[i % COLORS.length] } as Omit<
        RunningService,
        'child'
      > as RunningService;
      this.services.push(svc);
      this.spawn(svc);
    });
    return this.services;
  }

  private width = 0;

  private spawn(svc: RunningService): void {
    const { spec } = svc;
    const child = spawn(process.execPath, [...(spec.nodeArgs ?? []), ...this.options.nodeArgs, spec.script], {
      env: spec.env as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    svc.child = child;
    svc.startedMs = Date.now();
    for (const stream of [child.stdout!, child.stderr!]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        // a kit service's "<id> listening" line: ask its health now rather than at the next round
        if (svc.state === 'starting' && line.includes(' listening')) this.wake?.();
        svc.lastLines.push(line);
        if (svc.lastLines.length > 20) svc.lastLines.shift();
        this.write(formatLine(spec.entry.id, this.width, line, this.options.color, svc.colorCode));
      });
    }
    child.on('error', (err) => {
      svc.state = 'failed';
      svc.error = err.message;
    });
    child.on('exit', (code, signal) => {
      if (this.stopping) {
        svc.state = 'stopped';
        return;
      }
      const wasHealthy = svc.state === 'healthy';
      const why = lastMeaningful(svc.lastLines);
      svc.error = `exited with ${signal ?? `code ${code}`}${why ? `: ${why}` : ''}`;
      if (!wasHealthy) {
        svc.state = svc.state === 'starting' ? 'failed' : 'exited';
        this.write(paint(this.options.color, 31, `!! ${spec.entry.id} ${svc.error}; the rest keep running.`));
        return;
      }
      this.scheduleRestart(svc);
    });
  }

  private scheduleRestart(svc: RunningService): void {
    const policy = this.restartPolicy;
    const id = svc.spec.entry.id;
    if (!policy.enabled) {
      svc.state = 'exited';
      this.write(paint(this.options.color, 31, `!! ${id} ${svc.error}; restarts are off (FLEET_RESTART=0), the rest keep running.`));
      return;
    }
    const now = Date.now();
    svc.restartTimes = svc.restartTimes.filter((t) => now - t < policy.windowMs);
    if (svc.restartTimes.length >= policy.maxRestarts) {
      svc.state = 'crash-loop';
      svc.error = `crashed ${svc.restartTimes.length + 1} times in ${Math.round(policy.windowMs / 1000)} s, not restarted again; last: ${svc.error}`;
      this.write(paint(this.options.color, 31, `!! ${id} ${svc.error}. Fix the cause and restart the fleet; the rest keep running.`));
      return;
    }
    const backoff = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** svc.restartTimes.length);
    svc.restartTimes.push(now);
    svc.restarts += 1;
    svc.state = 'restarting';
    this.write(
      paint(
        this.options.color,
        33,
        `!! ${id} ${svc.error}; restarting in ${backoff} ms (restart ${svc.restartTimes.length} of ${policy.maxRestarts} allowed in ${Math.round(policy.windowMs / 1000)} s).`,
      ),
    );
    const timer = setTimeout(() => {
      if (this.stopping) return;
      svc.state = 'starting';
      this.spawn(svc);
      void this.watchUntilHealthy(svc);
    }, backoff);
    timer.unref();
  }

  /** After a restart: healthy again, or failed when it does not answer in the start timeout. */
  private async watchUntilHealthy(svc: RunningService): Promise<void> {
    const deadline = Date.now() + this.options.startTimeoutMs;
    const child = svc.child;
    while (svc.state === 'starting' && svc.child === child && !this.stopping) {
      if (await healthy(svc.spec.url)) {
        if (svc.state === 'starting' && svc.child === child) {
          svc.state = 'healthy';
          this.write(paint(this.options.color, 32, `!! ${svc.spec.entry.id} is healthy again after restart ${svc.restarts}.`));
        }
        return;
      }
      if (Date.now() > deadline) {
        svc.state = 'failed';
        svc.error = `not healthy ${this.options.startTimeoutMs} ms after restart ${svc.restarts}`;
        return;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Resolves when every service is healthy, failed or out of time. */
  async waitHealthy(): Promise<void> {
    const deadline = Date.now() + this.options.startTimeoutMs;
    while (Date.now() < deadline) {
      const pending = this.services.filter((s) => s.state === 'starting');
      if (pending.length === 0) return;
      await Promise.all(
        pending.map(async (s) => {
          if (await healthy(s.spec.url)) {
            if (s.state === 'starting') s.state = 'healthy';
          }
        }),
      );
      // the next round in 250 ms, or as soon as a starting service says it listens
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 250);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    for (const s of this.services) {
      if (s.state === 'starting') {
        s.state = 'failed';
        s.error = `not healthy after ${this.options.startTimeoutMs} ms at ${s.spec.url}/health`;
      }
    }
  }

  table(): string {
    const rows = this.services.map((s) => [
      s.spec.entry.id,
      String(s.spec.port),
      s.spec.entry.pattern,
      s.state,
      String(s.child.pid ?? '-'),
      s.spec.url,
      [s.restarts ? `restarted ${s.restarts}×` : '', s.state === 'healthy' ? '' : (s.error ?? '')].filter(Boolean).join('; '),
    ]);
    const head = ['SERVICE', 'PORT', 'PATTERN', 'STATE', 'PID', 'URL', 'NOTE'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    const fmt = (r: string[]) =>
      r
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd();
    return [fmt(head), fmt(widths.map((w) => '-'.repeat(w))), ...rows.map(fmt)].join('\n');
  }

  state() {
    return this.services.map((s) => ({
      id: s.spec.entry.id,
      port: s.spec.port,
      url: s.spec.url,
      pid: s.child.pid,
      state: s.state,
      error: s.error,
      restarts: s.restarts,
      logFile: s.spec.logFile,
    }));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      this.services.map(
        (s) =>
          new Promise<void>((resolve) => {
            const child = s.child;
            const wasRunning = child.exitCode === null && child.signalCode === null;
            const done = () => {
              clearTimeout(timer);
              if (wasRunning) s.state = 'stopped';
              resolve();
            };
            const timer = wasRunning ? setTimeout(() => child.kill('SIGKILL'), this.options.stopTimeoutMs) : undefined;
            // Done once the child's output is read to its end (its last log lines shown); a grandchild
            // holding the pipes open delays that by a second at most.
            if (!wasRunning && child.stdout?.closed !== false && child.stderr?.closed !== false) return done();
            child.once('close', done);
            if (wasRunning) child.once('exit', () => setTimeout(done, 1000));
            else setTimeout(done, 1000);
            // It may have had the terminal's SIGINT already: a kit service stops once, whatever signals arrive.
            if (wasRunning) child.kill('SIGTERM');
          }),
      ),
    );
  }
}

function lastMeaningful(lines: string[]): string {
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i];
    if (!l.trim()) continue;
    try {
      const j = JSON.parse(l) as { level?: string; message?: string };
      if (j.level === 'error' && j.message) return j.message;
    } catch {
      return l.trim().slice(0, 300);
    }
  }
  // Only info lines: nothing said why it stopped.
  return '';
}
