/**
 * The fleet's footprint on this machine, from the TypeScript source through tsx (`fleet up --dev`)
 * and from the build (`fleet up`, dist/services/<id>/server.js), measured in the same run:
 *  - warm start: the launcher's start to its "fleet ready" line (every service healthy and the
 *    gateway's catalog whole), on the second start of each mode (the first warms the page cache,
 *    tsx's transform cache and the build);
 *  - idle PSS (proportional set size, /proc/<pid>/smaps_rollup: shared pages divided among the
 *    processes sharing them, so the sum is the fleet's share of memory) of the whole process
 *    tree, of each service (with its children: the gateway's stdio toolkit-mcp-server) and of the
 *    launcher, read after BENCH_IDLE_MS (default 30 s) of idleness, when V8 has shrunk its heaps;
 *  - first-call latency per service: its first tools/call after ready, direct on its port (one
 *    cheap call each, a success where one is possible without credentials), and the first and a
 *    later call through the gateway.
 * Targets (issue 32): the idle fleet under 600 MiB PSS, warm start under 5 s.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freeOffset } from '../../test/support/fleet-process';
import { DIST_DIR } from '../../scripts/build/stamp';
import { LAUNCHER_NODE_ARGS } from '../../scripts/fleet/plan';
import { markdownTable, processTreeCpuMs, REPO_ROOT } from '../lib';
import { markerWatch } from '@mcp-fleet/testing';

export type Mode = 'tsx' | 'built';
const MODES: Mode[] = ['tsx', 'built'];
const KiB_PER_MiB = 1024;

/** A cheap, credential-free tools/call per service (its first request after start). */
const FIRST_CALLS: Record<string, { name: string; arguments: Record<string, unknown> }> = {
  'filesystem-mcp': { name: 'file_list', arguments: {} },
  'git-mcp': { name: 'git_status', arguments: { path: '.' } },
  'terminal-mcp': { name: 'system_info', arguments: {} },
  'database-mcp': { name: 'db_tables', arguments: {} },
  'memory-mcp': { name: 'memory_stats', arguments: {} },
  'network-mcp': { name: 'dns_lookup', arguments: { name: 'localhost' } },
  'system-mcp': { name: 'system_info', arguments: {} },
  'security-mcp': { name: 'password_hash', arguments: { password: 'a bench password' } },
  'config-mcp': { name: 'env_vars', arguments: {} },
  'log-mcp': { name: 'log_search', arguments: {} },
  'research-mcp': { name: 'research_query', arguments: { query: 'bench' } },
  'advanced-memory-mcp': { name: 'get_context', arguments: { query: 'bench' } },
  'transcriber-mcp': { name: 'transcribe_audio', arguments: { audio_base64: 'AAAA' } },
  'mail-mcp': { name: 'mail_count', arguments: {} },
  'media-mcp': { name: 'media_query', arguments: { action: 'list' } },
  'mqtt-mcp': { name: 'get_mqtt_status', arguments: {} },
  'code-graph-mcp': { name: 'index_python_project', arguments: { root: '.' } },
  'sql-mcp-wrapper': { name: 'connection', arguments: {} },
  'cache-mcp-wrapper': { name: 'cache', arguments: { action: 'exists', key: 'bench' } },
  'vector-mcp-wrapper': { name: 'collection', arguments: { action: 'list' } },
  'marketplace-mcp': { name: 'skills_list', arguments: {} },
};

/** A process's Pss, Pss_Anon (its heaps, stacks and malloc: what flags change) or Rss in KiB, /proc/<pid>/smaps_rollup (0 for one that is gone). */
export type MemoryField = 'Pss' | 'Pss_Anon' | 'Rss';
export function ownKiB(pid: number, field: MemoryField): number {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** A process and all its descendants. */
export function processTree(pid: number): number[] {
  const out = [pid];
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const children = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (children) for (const child of children.split(' ')) out.push(...processTree(Number(child)));
    }
  } catch {
    // gone meanwhile
  }
  return out;
}

/** Pss (the fleet's share: shared pages divided among their sharers) or Rss (what a container is charged) of a process tree, KiB. */
export const treeKiB = (pid: number, field: MemoryField) => processTree(pid).reduce((sum, p) => sum + ownKiB(p, field), 0);

export interface Fleet {
  child: ChildProcess;
  readyMs: number;
  /** CPU time (user + system) the launcher and every process it started had used at "fleet ready": what the start costs whatever else runs. */
  readyCpuMs: number;
  /** The machine's 1-minute load average when the start began (other work slows the start down). */
  load: number;
  offset: number;
  output: string[];
  state(): { services: { id: string; pid: number; port: number }[] };
  stop(): Promise<void>;
}

/**
 * `fleet up` (built) or `fleet up --dev` (tsx), on free ports, timed to its "fleet ready" line;
 * `extra` sets more variables (FLEET_NODE_ARGS...) and the built launcher's own Node flags.
 */
export async function startFleet(
  mode: Mode,
  dir: string,
  workspace: string,
  extra: { env?: Record<string, string>; launcherArgs?: readonly string[] } = {},
): Promise<Fleet> {
  const offset = await freeOffset();
  const dataDir = path.join(dir, `data-${mode}`);
  const load = os.loadavg()[0];
  const t0 = performance.now();
  // as ./fleet runs them: the built launcher for the built fleet, the launcher's source through tsx for --dev
  const args =
    mode === 'built'
      ? [...(extra.launcherArgs ?? LAUNCHER_NODE_ARGS), path.join(DIST_DIR, 'fleet', 'cli.js'), 'up']
      : ['--import', 'tsx', 'scripts/fleet/cli.ts', 'up', '--dev'];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      FLEET_PORT_OFFSET: String(offset),
      FLEET_DATA_DIR: dataDir,
      WORKSPACE_ROOTS: workspace,
      NO_COLOR: '1',
      // a machine shared with other work can take longer than the launcher's 60 s to start 24 processes
      FLEET_START_TIMEOUT_MS: '180000',
      ...extra.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let readyCpuMs = 0;
  const readyMs = await new Promise<number>((resolve, reject) => {
    const timeoutMs = Number(process.env.BENCH_START_TIMEOUT_MS ?? 240_000);
    const timer = setTimeout(() => {
      // the launcher stops what it started before the error is reported (no service left behind)
      child.kill('SIGINT');
      reject(new Error(`fleet (${mode}) not ready in ${timeoutMs} ms:\n${output.slice(-30).join('')}`));
    }, timeoutMs);
    const sawReady = markerWatch('fleet ready:');
    child.stdout!.on('data', (b: Buffer) => {
      const text = b.toString();
      output.push(text);
      if (sawReady(text)) {
        clearTimeout(timer);
        readyCpuMs = processTreeCpuMs(child.pid) ?? 0;
        resolve(performance.now() - t0);
      }
    });
    child.stderr!.on('data', (b: Buffer) => output.push(b.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fleet (${mode}) exited (${code}) before ready:\n${output.slice(-30).join('')}`));
    });
  });
  if (!/fleet ready: (\d+)\/\1 healthy/.test(output.join(''))) throw new Error(`fleet (${mode}) not all healthy:\n${output.join('')}`);
  return {
    child,
    readyMs,
    readyCpuMs,
    load,
    offset,
    output,
    state: () => JSON.parse(fs.readFileSync(path.join(dataDir, 'fleet.json'), 'utf8')),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT');
      }),
  };
}

async function timedCall(url: string, body: unknown): Promise<{ ms: number; status: number }> {
  const t0 = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await res.arrayBuffer();
  return { ms: Math.round((performance.now() - t0) * 10) / 10, status: res.status };
}

interface ModeResult {
  mode: Mode;
  firstStartMs: number;
  warmStartMs: number;
  warmStartCpuMs: number;
  warmStartLoad: number;
  processes: number;
  idlePssKiB: { fleet: number; launcher: number; services: Record<string, number> };
  /** Each service's process tree alone, as a container would be charged (docs/deployment.md sizes requests from it). */
  idleRssKiB: Record<string, number>;
  firstCall: Record<string, { ms: number; status: number }>;
  gateway: { firstMs: number; secondMs: number };
  afterCallsPssKiB: number;
}

async function measure(mode: Mode, dir: string, workspace: string, idleMs: number): Promise<ModeResult> {
  process.stdout.write(`bench: footprint: ${mode}: first start...\n`);
  const first = await startFleet(mode, dir, workspace);
  await first.stop();
  process.stdout.write(`bench: footprint: ${mode}: warm start...\n`);
  let fleet = await startFleet(mode, dir, workspace);
  // a source changed meanwhile (another editor in this checkout): that start included a build, so it is not a warm one
  for (let again = 0; again < 3 && fleet.output.join('').includes('building the services'); again++) {
    await fleet.stop();
    fleet = await startFleet(mode, dir, workspace);
  }
  try {
    process.stdout.write(`bench: footprint: ${mode}: ready in ${Math.round(fleet.readyMs)} ms; idle ${idleMs / 1000} s...\n`);
    await new Promise((r) => setTimeout(r, idleMs));
    const { services } = fleet.state();
    const perService: Record<string, number> = {};
    const rssPerService: Record<string, number> = {};
    for (const s of services) {
      perService[s.id] = treeKiB(s.pid, 'Pss');
      rssPerService[s.id] = treeKiB(s.pid, 'Rss');
    }
    const launcherPid = fleet.child.pid!;
    const fleetPss = treeKiB(launcherPid, 'Pss');
    const firstCall: ModeResult['firstCall'] = {};
    for (const s of services) {
      const call = FIRST_CALLS[s.id];
      if (call) firstCall[s.id] = await timedCall(`http://127.0.0.1:${s.port}/tools/call`, call);
    }
    const gw = services.find((s) => s.id === 'mega-orchestrator')!;
    const viaGateway = { tool: 'fileretrieve', arguments: { paths: ['a.py'] } };
    const g1 = await timedCall(`http://127.0.0.1:${gw.port}/mcp`, viaGateway);
    const g2 = await timedCall(`http://127.0.0.1:${gw.port}/mcp`, viaGateway);
    return {
      mode,
      firstStartMs: Math.round(first.readyMs),
      warmStartMs: Math.round(fleet.readyMs),
      warmStartCpuMs: fleet.readyCpuMs,
      warmStartLoad: Math.round(fleet.load * 100) / 100,
      processes: processTree(launcherPid).length,
      idlePssKiB: { fleet: fleetPss, launcher: ownKiB(launcherPid, 'Pss'), services: perService },
      idleRssKiB: rssPerService,
      firstCall,
      gateway: { firstMs: g1.ms, secondMs: g2.ms },
      afterCallsPssKiB: treeKiB(launcherPid, 'Pss'),
    };
  } finally {
    await fleet.stop();
  }
}

const mib = (kib: number) => (kib / KiB_PER_MiB).toFixed(1);
const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : '-');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export async function run(): Promise<{ json: unknown; markdown: string }> {
  const idleMs = Number(process.env.BENCH_IDLE_MS ?? 30_000);
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-footprint-')));
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(workspace, 'a.py'), 'import os\n\n\ndef main():\n    return os.getcwd()\n');
  // git-mcp's first call reads a repository
  execFileSync('git', ['init', '-q', workspace]);
  // the build is made (or found current) before anything is timed: `fleet up` would otherwise build inside the first start
  const { ensureBuilt } = await import('../../scripts/build/build');
  await ensureBuilt((line) => process.stdout.write(`bench: footprint: ${line}\n`));
  const results: ModeResult[] = [];
  try {
    for (const mode of MODES) results.push(await measure(mode, dir, workspace, idleMs));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const [tsx, built] = results;
  const ids = Object.keys(built.idlePssKiB.services);
  const rows = ids.map((id) => [
    id,
    mib(tsx.idlePssKiB.services[id] ?? 0),
    mib(built.idlePssKiB.services[id] ?? 0),
    mib(built.idleRssKiB[id] ?? 0),
    tsx.firstCall[id] ? `${tsx.firstCall[id].ms} (${tsx.firstCall[id].status})` : '-',
    built.firstCall[id] ? `${built.firstCall[id].ms} (${built.firstCall[id].status})` : '-',
  ]);
  const firstCallMedian = (r: ModeResult) => median(Object.values(r.firstCall).map((c) => c.ms));
  const summary = {
    idleFleetMiB: { tsx: Number(mib(tsx.idlePssKiB.fleet)), built: Number(mib(built.idlePssKiB.fleet)) },
    warmStartMs: { tsx: tsx.warmStartMs, built: built.warmStartMs },
    warmStartCpuMs: { tsx: tsx.warmStartCpuMs, built: built.warmStartCpuMs },
    firstCallMedianMs: { tsx: firstCallMedian(tsx), built: firstCallMedian(built) },
    ratios: {
      idlePss: Number(ratio(built.idlePssKiB.fleet, tsx.idlePssKiB.fleet)),
      warmStart: Number(ratio(built.warmStartMs, tsx.warmStartMs)),
      firstCallMedian: Number(ratio(firstCallMedian(built), firstCallMedian(tsx))),
    },
    targets: {
      idleFleetUnder600MiB: built.idlePssKiB.fleet < 600 * KiB_PER_MiB,
      warmStartUnder5s: built.warmStartMs < 5000,
    },
  };
  const markdown = [
    '## Footprint: the fleet from TypeScript source (tsx) and from the build',
    '',
    `Whole fleet (${built.processes} processes built, ${tsx.processes} with tsx), idle ${idleMs / 1000} s after "fleet ready"; ` +
      'PSS from /proc/<pid>/smaps_rollup. Targets (issue 32): idle fleet under 600 MiB PSS, warm start under 5 s.',
    '',
    markdownTable(
      ['', 'tsx (fleet up --dev)', 'built (fleet up)', 'built / tsx'],
      [
        [
          'idle fleet PSS, MiB',
          mib(tsx.idlePssKiB.fleet),
          mib(built.idlePssKiB.fleet),
          ratio(built.idlePssKiB.fleet, tsx.idlePssKiB.fleet),
        ],
        [
          '  of which the launcher, MiB',
          mib(tsx.idlePssKiB.launcher),
          mib(built.idlePssKiB.launcher),
          ratio(built.idlePssKiB.launcher, tsx.idlePssKiB.launcher),
        ],
        [
          'PSS after the first calls, MiB',
          mib(tsx.afterCallsPssKiB),
          mib(built.afterCallsPssKiB),
          ratio(built.afterCallsPssKiB, tsx.afterCallsPssKiB),
        ],
        ['warm start to "fleet ready", ms', tsx.warmStartMs, built.warmStartMs, ratio(built.warmStartMs, tsx.warmStartMs)],
        [
          '  CPU time of the whole start, ms (all processes)',
          tsx.warmStartCpuMs,
          built.warmStartCpuMs,
          ratio(built.warmStartCpuMs, tsx.warmStartCpuMs),
        ],
        ['  load average when it began (other work on the machine)', tsx.warmStartLoad, built.warmStartLoad, ''],
        ['first start (cold caches), ms', tsx.firstStartMs, built.firstStartMs, ratio(built.firstStartMs, tsx.firstStartMs)],
        ['first call, median over services, ms', firstCallMedian(tsx), firstCallMedian(built), summary.ratios.firstCallMedian],
        [
          'gateway: first call (stdio toolkit), ms',
          tsx.gateway.firstMs,
          built.gateway.firstMs,
          ratio(built.gateway.firstMs, tsx.gateway.firstMs),
        ],
        ['gateway: second call, ms', tsx.gateway.secondMs, built.gateway.secondMs, ratio(built.gateway.secondMs, tsx.gateway.secondMs)],
      ],
    ),
    '',
    `Targets: idle fleet under 600 MiB: ${summary.targets.idleFleetUnder600MiB ? 'met' : `missed by ${mib(built.idlePssKiB.fleet - 600 * KiB_PER_MiB)} MiB`}; ` +
      `warm start under 5 s: ${summary.targets.warmStartUnder5s ? 'met' : `missed by ${built.warmStartMs - 5000} ms`} ` +
      `(load average ${built.warmStartLoad} as it began; the start itself used ${(built.warmStartCpuMs / 1000).toFixed(1)} CPU-seconds, ` +
      `so on ${os.cpus().length} idle cores it takes at least ${(built.warmStartCpuMs / 1000 / os.cpus().length).toFixed(1)} s).`,
    '',
    'Per service (PSS and RSS with its children, MiB: RSS is what a container of its own is charged; first tools/call direct on its port, ms, with the HTTP status):',
    '',
    markdownTable(['service', 'PSS tsx', 'PSS built', 'RSS built', 'first call tsx', 'first call built'], rows),
  ].join('\n');
  return { json: { summary, results }, markdown };
}
