import fs from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Pool } from 'undici';
import { DIST_DIR } from '../scripts/build/stamp';
import { nodeArgsOf } from '../scripts/fleet/plan';

export const REPO_ROOT = path.resolve(__dirname, '..');

export interface LoadResult {
  concurrency: number;
  requests: number;
  errors: number;
  seconds: number;
  throughput: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** The median as percentile() has it (the lower of the two middle values of an even count); NaN for none. */
export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/**
 * `rounds` pairs of windows of two paths, interleaved, the order flipped every pair (the other path
 * first in the first pair), so that the machine's drift in speed falls on both alike; `report` gets
 * each pair as (ours, other, round from 1).
 */
export async function interleavedPairs<T>(
  rounds: number,
  ours: () => Promise<T>,
  other: () => Promise<T>,
  report: (ours: T, other: T, round: number) => void,
): Promise<void> {
  for (let r = 0; r < rounds; r++) {
    const oursFirst = r % 2 === 1;
    const first = await (oursFirst ? ours : other)();
    const second = await (oursFirst ? other : ours)();
    report(oursFirst ? first : second, oursFirst ? second : first, r + 1);
  }
}

export function summarize(latenciesMs: number[], seconds: number, concurrency: number, errors: number): LoadResult {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return {
    concurrency,
    requests: latenciesMs.length,
    errors,
    seconds: round(seconds),
    throughput: Math.round(latenciesMs.length / seconds),
    p50Ms: round(percentile(sorted, 50)),
    p90Ms: round(percentile(sorted, 90)),
    p99Ms: round(percentile(sorted, 99)),
  };
}

export interface HttpCall {
  path: string;
  /** A fixed body, or one made per request (e.g. JSON-RPC ids must differ while in flight). */
  body: string | (() => string);
  headers?: Record<string, string>;
  /** Checks a response body; a false answer counts as an error. */
  check?: (body: string, status: number) => boolean;
}

/** Closed-loop load: `concurrency` workers each send the next request when the last one answers. */
export async function runLoad(
  origin: string,
  call: HttpCall,
  concurrency: number,
  durationMs: number,
  warmupMs = 500,
): Promise<LoadResult> {
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1 });
  const headers = { 'content-type': 'application/json', ...call.headers };
  const once = async () => {
    const body = typeof call.body === 'function' ? call.body() : call.body;
    const res = await pool.request({ method: 'POST', path: call.path, headers, body });
    const text = await res.body.text();
    return call.check ? call.check(text, res.statusCode) : res.statusCode === 200;
  };
  const loop = async (until: number, record?: number[], errs?: { n: number }) => {
    while (performance.now() < until) {
      const t0 = performance.now();
      let ok = false;
      try {
        ok = await once();
      } catch {
        ok = false;
      }
      if (record) {
        if (ok) record.push(performance.now() - t0);
        else errs!.n++;
      }
    }
  };
  const warmEnd = performance.now() + warmupMs;
  await Promise.all(Array.from({ length: concurrency }, () => loop(warmEnd)));
  const latencies: number[] = [];
  const errors = { n: 0 };
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => loop(start + durationMs, latencies, errors)));
  const seconds = (performance.now() - start) / 1000;
  await pool.close();
  return summarize(latencies, seconds, concurrency, errors.n);
}

/**
 * CPU time (user + system, ms) used so far by a process and all its descendants, every thread
 * counted (GC helpers, the libuv pool), from /proc; undefined where there is no /proc. Read before
 * and after a load, divided by the calls, it is a cost per call that does not depend on how much
 * of the machine the load generator takes.
 */
export function processTreeCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined || !fs.existsSync('/proc/self/stat')) return undefined;
  const ticksMs = 10; // USER_HZ is 100 on Linux
  let total = 0;
  const visit = (p: number) => {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) * ticksMs;
      for (const task of fs.readdirSync(`/proc/${p}/task`)) {
        const children = fs.readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim();
        if (children) for (const child of children.split(' ')) visit(Number(child));
      }
    } catch {
      // gone meanwhile
    }
  };
  visit(pid);
  return total;
}

/** How startServiceProcess runs a service. */
export interface StartOptions {
  /**
   * As `./fleet up` runs it: its bundle (dist/services/<id>/server.js, built first by
   * ensureBuilt) under plain node with the fleet's Node flags (scripts/fleet/plan.ts nodeArgsOf,
   * FLEET_NODE_ARGS / FLEET_GATEWAY_NODE_ARGS override them), unless BENCH_FROM_SOURCE=1.
   * Otherwise from its TypeScript source through tsx, with Node's default flags.
   */
  built?: boolean;
  /**
   * With `built`: the build directory to run instead of dist/ (`pnpm bench build-ab`'s base build).
   * It must sit at the repository's root, as dist/ does, for its bundles to find node_modules.
   */
  distDir?: string;
  /** With `built`: the environment whose FLEET_NODE_ARGS / FLEET_GATEWAY_NODE_ARGS give its Node flags (default: this process's). */
  flagsEnv?: NodeJS.ProcessEnv;
}

/** The Node flags a gateway + filesystem-mcp stack runs with under `env` (nodeArgsOf), as the suites report them. */
export function stackFlagsText(env: NodeJS.ProcessEnv = process.env): string {
  const of = (id: string) => nodeArgsOf(id, env).join(' ') || '(none)';
  return `the gateway ${of('mega-orchestrator')}, filesystem-mcp ${of('filesystem-mcp')}`;
}

/** Whether a suite that asks for the build gets it (BENCH_FROM_SOURCE=1: the source through tsx instead). */
export const benchBuilt = (): boolean => process.env.BENCH_FROM_SOURCE !== '1';

/** A service started as its own process, as in production. */
export async function startServiceProcess(
  id: string,
  env: NodeJS.ProcessEnv,
  port: number,
  options: StartOptions = {},
): Promise<ChildProcess> {
  // BENCH_GATEWAY_NODE_ARGS (the gateway) and BENCH_NODE_ARGS_<ID> (another service, e.g. BENCH_NODE_ARGS_FILESYSTEM_MCP):
  // more Node flags for its process (e.g. --cpu-prof), after the fleet's own
  const flags = (
    (id === 'mega-orchestrator'
      ? process.env.BENCH_GATEWAY_NODE_ARGS
      : process.env[`BENCH_NODE_ARGS_${id.replace(/-/g, '_').toUpperCase()}`]) ?? ''
  )
    .split(/\s+/)
    .filter(Boolean);
  const args =
    options.built && benchBuilt()
      ? [
          ...nodeArgsOf(id, options.flagsEnv ?? process.env),
          ...flags,
          path.join(options.distDir ?? path.join(REPO_ROOT, DIST_DIR), 'services', id, 'server.js'),
        ]
      : [...flags, '--import', 'tsx', path.join(REPO_ROOT, 'services', id, 'src', 'server.ts')];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`);
      if (res.ok) return child;
    } catch {
      // not yet
    }
    if (child.exitCode !== null) throw new Error(`${id} exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  throw new Error(`${id} not healthy on port ${port}`);
}

export function stopProcesses(children: ChildProcess[]): Promise<void[]> {
  return Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null) return resolve();
          c.once('exit', () => resolve());
          c.kill('SIGTERM');
          setTimeout(() => c.kill('SIGKILL'), 5000).unref();
        }),
    ),
  );
}

export function markdownTable(head: string[], rows: (string | number)[][]): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/**
 * An MCP session at origin + pathName, initialized with protocolVersion: the headers its calls carry
 * (Accept, MCP-Protocol-Version, and Mcp-Session-Id when the server gave one).
 */
export async function mcpSession(origin: string, pathName: string, protocolVersion = '2025-06-18'): Promise<Record<string, string>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(origin + pathName, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  await init.text();
  const sid = init.headers.get('mcp-session-id');
  const out: Record<string, string> = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': protocolVersion };
  if (sid) out['mcp-session-id'] = sid;
  await fetch(origin + pathName, {
    method: 'POST',
    headers: { ...headers, ...out },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  }).then((r) => r.text());
  return out;
}

/** Waits until the gateway at origin lists the tool (its downstreams are found after it starts). */
export async function waitForTool(origin: string, tool: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const body = (await (await fetch(`${origin}/tools/list`)).json()) as { tools: { name: string }[] };
    if (body.tools.some((t) => t.name === tool)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the gateway at ${origin} did not list ${tool} within ${timeoutMs} ms`);
}
