import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { REFERENCE_PORTS, SERVICES } from '@mcp-fleet/inventory';
import { markerWatch } from '@mcp-fleet/testing';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface FleetHandle {
  child: ChildProcess;
  output: string[];
  gateway: string;
  offset: number;
  env: NodeJS.ProcessEnv;
  stateFile: string;
  serviceUrl(id: string, port: number): string;
  state(): { services: { id: string; pid: number; port: number; state: string; restarts?: number }[] };
  stop(): Promise<number | null>;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A port offset whose every port (each inventory service, the monitoring ports) is free right now
 * and below the kernel's ephemeral range (32768+), so outgoing connections of other tests cannot
 * take them. Several fleets start at once in one jest run: each checks before it takes its block.
 */
export async function freeOffset(): Promise<number> {
  // the reference profile's ports too (fleet up --profile reference); each once, or two probes of one port race and both fail
  const base = [
    ...new Set([
      ...SERVICES.flatMap((s) => [s.port, ...Object.values(s.extraPorts ?? {})]),
      ...Object.values(REFERENCE_PORTS),
      7028,
      7031,
      7032,
      8020,
    ]),
  ];
  const top = Math.max(...base);
  for (let attempt = 0; attempt < 50; attempt++) {
    const offset = 3_000 + Math.floor(Math.random() * Math.floor((32_000 - top - 3_000) / 100)) * 100;
    const checks = await Promise.all(base.map((p) => portFree(p + offset)));
    if (checks.every(Boolean)) return offset;
  }
  throw new Error('no free block of fleet ports found below 32768');
}

/** Start the real fleet through the launcher (separate processes), on ports moved by an offset. */
export async function startFleet(options: {
  dataDir: string;
  workspace: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Start only these services (plus the gateway), as `fleet up --only`. */
  only?: string[];
  /** More arguments for `fleet up`, e.g. --monitoring. */
  args?: string[];
}): Promise<FleetHandle> {
  const offset = await freeOffset();
  // the launcher refuses a data directory that overlaps the workspace: keep them apart (test/security/data-dir.test.ts)
  fs.mkdirSync(options.workspace, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FLEET_PORT_OFFSET: String(offset),
    FLEET_DATA_DIR: options.dataDir,
    WORKSPACE_ROOTS: options.workspace,
    HEALTH_POLL_MS: '300',
    NO_COLOR: '1',
    LOG_LEVEL: 'info',
    ...options.env,
  };
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'scripts/fleet/cli.ts'),
      'up',
      ...(options.only ? ['--only', options.only.join(',')] : []),
      ...(options.args ?? []),
    ],
    {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const output: string[] = [];
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`fleet not ready in time:\n${output.slice(-40).join('')}`)),
      options.timeoutMs ?? 90_000,
    );
    const sawReady = markerWatch('fleet ready:');
    const onData = (buf: Buffer) => {
      const text = buf.toString();
      output.push(text);
      if (sawReady(text)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (b: Buffer) => output.push(b.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`launcher exited (${code}) before ready:\n${output.slice(-40).join('')}`));
    });
  });
  await ready;
  const stateFile = path.join(options.dataDir, 'fleet.json');
  return {
    child,
    output,
    offset,
    env,
    stateFile,
    gateway: `http://127.0.0.1:${7000 + offset}`,
    serviceUrl: (_id, port) => `http://127.0.0.1:${port + offset}`,
    state: () => JSON.parse(fs.readFileSync(stateFile, 'utf8')),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill('SIGINT');
      }),
  };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 15_000, everyMs = 150): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

export async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    return { status: res.status, body: text };
  }
}
