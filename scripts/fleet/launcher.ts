import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';
import type { LaunchSpec } from './plan';

export type ServiceState = 'starting' | 'healthy' | 'failed' | 'exited' | 'stopped';

export interface RunningService {
  spec: LaunchSpec;
  child: ChildProcess;
  state: ServiceState;
  error?: string;
  startedMs?: number;
  lastLines: string[];
}

export interface LauncherOptions {
  startTimeoutMs: number;
  stopTimeoutMs: number;
  color: boolean;
  out: NodeJS.WritableStream;
  /** Node flags for the children (the tsx loader). */
  nodeArgs: string[];
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

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
    return res.ok;
  } catch {
    return false;
  }
}

export class Launcher {
  readonly services: RunningService[] = [];
  private stopping = false;

  constructor(private readonly options: LauncherOptions) {}

  private write(line: string) {
    this.options.out.write(line + '\n');
  }

  start(specs: LaunchSpec[]): RunningService[] {
    const width = Math.max(...specs.map((s) => s.entry.id.length));
    specs.forEach((spec, i) => {
      fs.mkdirSync(spec.env.DATA_DIR!, { recursive: true });
      const child = spawn(process.execPath, [...this.options.nodeArgs, spec.script], {
        env: spec.env as NodeJS.ProcessEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const svc: RunningService = { spec, child, state: 'starting', lastLines: [], startedMs: Date.now() };
      this.services.push(svc);
      const colorCode = COLORS[i % COLORS.length];
      for (const stream of [child.stdout!, child.stderr!]) {
        readline.createInterface({ input: stream }).on('line', (line) => {
          svc.lastLines.push(line);
          if (svc.lastLines.length > 20) svc.lastLines.shift();
          this.write(formatLine(spec.entry.id, width, line, this.options.color, colorCode));
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
        const was = svc.state;
        svc.state = was === 'starting' ? 'failed' : 'exited';
        svc.error = `exited with ${signal ?? `code ${code}`}${svc.lastLines.length ? `: ${lastMeaningful(svc.lastLines)}` : ''}`;
        this.write(paint(this.options.color, 31, `!! ${spec.entry.id} ${svc.error}; the rest keep running.`));
      });
    });
    return this.services;
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
      await new Promise((r) => setTimeout(r, 250));
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
      s.error ?? '',
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
      logFile: s.spec.logFile,
    }));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const alive = this.services.filter((s) => s.child.exitCode === null && s.child.signalCode === null);
    await Promise.all(
      alive.map(
        (s) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => s.child.kill('SIGKILL'), this.options.stopTimeoutMs);
            s.child.once('exit', () => {
              clearTimeout(timer);
              s.state = 'stopped';
              resolve();
            });
            s.child.kill('SIGTERM');
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
  return lines[lines.length - 1]?.slice(0, 300) ?? '';
}
