/**
 * `BENCH_AB_BASE=dist-base pnpm bench build-ab`: this build against an earlier one, MCP tools/call
 * (file_list through the gateway to filesystem-mcp, as vs-supergateway calls it), in the same run.
 * Both stacks (a gateway and a filesystem-mcp each, from their build under plain node with the
 * fleet's flags) run at once; short windows of each alternate, the order flipped every pair, so that
 * the machine's drift in speed falls on both alike. The figure is the median of the pairs' ratios.
 * A window of one path in vs-supergateway moved by a fifth from run to run on a shared VM; a change of
 * a few percent shows only this way (docs/gateway.md, "Frames leave as they are made").
 *
 * Make the base before changing anything: `pnpm build && cp -r dist dist-base` (dist-base/ sits at
 * the repository's root, as dist/ does, so that its bundles find the same node_modules; it is
 * ignored by git). BENCH_AB_BASE=dist measures the build against itself: ratios near 1 say how far
 * this machine can be trusted. BENCH_AB_CONNECTIONS (default 32,1), BENCH_ROUNDS (12 pairs),
 * BENCH_PAIR_MS (1500 ms).
 *
 * Then "together" rounds (BENCH_AB_TOGETHER, default 8, 0 for none; 3 s each): both stacks under load at
 * the same time, each with half the connections, so that both meet the same machine at the same moment;
 * each process's CPU per call is compared round by round (median of the rounds' ratios). On a noisy
 * VM where the windows above read two identical stacks 0.93-1.04×, these read them 0.96-1.0×, and
 * they say which of the two processes a change moved.
 *
 * Node flags: both stacks run with the fleet's (FLEET_NODE_ARGS, FLEET_GATEWAY_NODE_ARGS), except that
 * BENCH_AB_NODE_ARGS (filesystem-mcp) and BENCH_AB_GATEWAY_NODE_ARGS (the gateway) replace them for
 * this build's stack only (`-` for none): with BENCH_AB_BASE=dist, the same build under other flags.
 * BENCH_AB_ENV ("NAME=value ...") sets variables for this build's stack only (e.g. `CHANNEL_SOCKET_DIR=`:
 * its channel over TCP).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt } from '../../scripts/build/build';
import { DIST_DIR } from '../../scripts/build/stamp';
import { nodeArgsOf } from '../../scripts/fleet/plan';
import {
  interleavedPairs,
  markdownTable,
  mcpSession,
  median,
  processTreeCpuMs,
  REPO_ROOT,
  runLoad,
  stackFlagsText,
  startServiceProcess,
  stopProcesses,
  waitForTool,
  type HttpCall,
  type LoadResult,
} from '../lib';

interface Stack {
  name: string;
  distDir: string;
  origin: string;
  call: HttpCall;
  processes: ChildProcess[];
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** A gateway and a filesystem-mcp from distDir, on ports of their own, in an MCP session ready to call file_list. */
async function startStack(
  name: string,
  distDir: string,
  workspace: string,
  portBase: number,
  processes: ChildProcess[],
  flagsEnv: NodeJS.ProcessEnv = process.env,
  extraEnv: Record<string, string> = {},
): Promise<Stack> {
  const fsPort = portBase + 1;
  const gwPort = portBase;
  const env = {
    DATA_DIR: `${workspace}.data-${name}`,
    // as `./fleet up --only filesystem-mcp` sets them (the channel over a Unix socket; the one service
    // polled); BENCH_AB_ENV may change them for this build's stack
    CHANNEL_SOCKET_DIR: `${workspace}.data-${name}/run`,
    FLEET_SERVICES: 'filesystem-mcp',
    WORKSPACE_ROOTS: workspace,
    FILESYSTEM_MCP_PORT: String(fsPort),
    HEALTH_POLL_MS: '1000',
    ...extraEnv,
  };
  const own: ChildProcess[] = [];
  for (const [id, port] of [
    ['filesystem-mcp', fsPort],
    ['mega-orchestrator', gwPort],
  ] as const) {
    const child = await startServiceProcess(id, env, port, { built: true, distDir, flagsEnv });
    own.push(child);
    processes.push(child); // stopped at the end even if the next start fails
  }
  const origin = `http://127.0.0.1:${gwPort}`;
  await waitForTool(origin, 'file_list');
  const headers = await mcpSession(origin, '/mcp');
  let id = 0;
  return {
    name,
    distDir,
    origin,
    processes: own,
    call: {
      path: '/mcp',
      headers,
      body: () =>
        JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'file_list', arguments: { path: '.' } } }),
      check: (b, s) => s === 200 && b.includes('"isError":false'),
    },
  };
}

/** CPU ms per call of one stack's processes (its filesystem-mcp, then its gateway) over a load. */
async function cpuPerCall(stack: Stack, load: Promise<LoadResult>): Promise<{ service: number; gateway: number; result: LoadResult }> {
  const [service, gateway] = stack.processes;
  const before = [processTreeCpuMs(service.pid) ?? NaN, processTreeCpuMs(gateway.pid) ?? NaN];
  const result = await load;
  const calls = Math.max(1, result.requests + result.errors);
  return {
    service: ((processTreeCpuMs(service.pid) ?? NaN) - before[0]) / calls,
    gateway: ((processTreeCpuMs(gateway.pid) ?? NaN) - before[1]) / calls,
    result,
  };
}

/**
 * Both stacks loaded at the same time (half the connections each): each process's CPU per call,
 * this build's over the base's, median of the rounds; undefined for no rounds.
 */
async function togetherRounds(base: Stack, current: Stack, concurrency: number, rounds: number) {
  if (rounds === 0) return undefined;
  const each = Math.max(1, Math.floor(concurrency / 2));
  const ratios = { gateway: [] as number[], service: [] as number[], both: [] as number[], throughput: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    const [b, c] = await Promise.all([base, current].map((s) => cpuPerCall(s, runLoad(s.origin, s.call, each, 3000, 0))));
    ratios.gateway.push(c.gateway / b.gateway);
    ratios.service.push(c.service / b.service);
    ratios.both.push((c.gateway + c.service) / (b.gateway + b.service));
    ratios.throughput.push(c.result.throughput / b.result.throughput);
  }
  return {
    rounds,
    connectionsEach: each,
    gateway: round3(median(ratios.gateway)),
    service: round3(median(ratios.service)),
    both: round3(median(ratios.both)),
    throughput: round3(median(ratios.throughput)),
    ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, v.map(round3)])),
  };
}

export async function run(): Promise<{ json: unknown; markdown: string }> {
  const baseSetting = process.env.BENCH_AB_BASE;
  if (!baseSetting) {
    const markdown =
      '### This build against an earlier one (build-ab)\n\nNot run: set BENCH_AB_BASE to a copy of an earlier build ' +
      '(`pnpm build && cp -r dist dist-base` before the change, then `BENCH_AB_BASE=dist-base pnpm bench build-ab`).';
    return { json: { skipped: 'BENCH_AB_BASE is not set' }, markdown };
  }
  const baseDir = path.resolve(REPO_ROOT, baseSetting);
  if (!fs.existsSync(path.join(baseDir, 'services', 'mega-orchestrator', 'server.js')))
    throw new Error(
      `BENCH_AB_BASE=${baseSetting}: no build there (services/mega-orchestrator/server.js is missing); copy dist/ there first`,
    );
  if (path.dirname(baseDir) !== REPO_ROOT)
    throw new Error(`BENCH_AB_BASE=${baseSetting}: put the copy at the repository's root (as dist/ is), so its bundles find node_modules`);
  await ensureBuilt((line) => process.stdout.write(`bench: build-ab: ${line}\n`));
  const connections = (process.env.BENCH_AB_CONNECTIONS ?? '32,1').split(',').map(Number);
  if (connections.some((c) => !Number.isInteger(c) || c < 1 || c > 256))
    throw new Error(`BENCH_AB_CONNECTIONS takes whole numbers 1-256, comma-separated; got "${process.env.BENCH_AB_CONNECTIONS}"`);
  const rounds = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 12));
  const pairMs = Math.max(500, Number(process.env.BENCH_PAIR_MS ?? 1500));
  const togetherCount = Math.max(0, Math.floor(Number(process.env.BENCH_AB_TOGETHER ?? 8)) || 0);

  // this build's stack under other flags, if asked (nodeArgsOf reads them as it reads FLEET_NODE_ARGS)
  const currentFlags: NodeJS.ProcessEnv = {
    ...process.env,
    ...(process.env.BENCH_AB_NODE_ARGS ? { FLEET_NODE_ARGS: process.env.BENCH_AB_NODE_ARGS } : {}),
    ...(process.env.BENCH_AB_GATEWAY_NODE_ARGS ? { FLEET_GATEWAY_NODE_ARGS: process.env.BENCH_AB_GATEWAY_NODE_ARGS } : {}),
  };
  // BENCH_AB_ENV: variables for this build's stack only ("NAME=value NAME2=", space-separated; an empty value turns a setting off)
  const currentEnv = Object.fromEntries(
    (process.env.BENCH_AB_ENV ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((pair) => {
        const eq = pair.indexOf('=');
        if (eq < 1) throw new Error(`BENCH_AB_ENV takes NAME=value pairs, space-separated; got "${pair}"`);
        return [pair.slice(0, eq), pair.slice(eq + 1)];
      }),
  );
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ab-')));
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(workspace, `file-${i}.txt`), `line ${i}\n`);
  const portBase = 3000 + Math.floor(Math.random() * 150) * 100 + 7000;
  const processes: ChildProcess[] = [];
  try {
    const base = await startStack('base', baseDir, workspace, portBase, processes);
    const current = await startStack(
      'current',
      path.join(REPO_ROOT, DIST_DIR),
      workspace,
      portBase + 10,
      processes,
      currentFlags,
      currentEnv,
    );
    for (const s of [base, current]) await runLoad(s.origin, s.call, 8, 2000, 0);
    const cpuOf = (s: Stack) => s.processes.reduce((sum, p) => sum + (processTreeCpuMs(p.pid) ?? NaN), 0);
    const rows: (string | number)[][] = [];
    const togetherRows: (string | number)[][] = [];
    const cells: unknown[] = [];
    for (const concurrency of connections) {
      const ratios: number[] = [];
      const p50Diffs: number[] = [];
      const cpu = new Map<Stack, { ms: number; calls: number }>([
        [base, { ms: 0, calls: 0 }],
        [current, { ms: 0, calls: 0 }],
      ]);
      const window = async (s: Stack): Promise<LoadResult> => {
        const before = cpuOf(s);
        const result = await runLoad(s.origin, s.call, concurrency, pairMs, 200);
        const spent = cpu.get(s)!;
        spent.ms += cpuOf(s) - before;
        spent.calls += result.requests + result.errors;
        return result;
      };
      await interleavedPairs(
        rounds,
        () => window(current),
        () => window(base),
        (ofCurrent, ofBase, round) => {
          ratios.push(Math.round((ofCurrent.throughput / ofBase.throughput) * 1000) / 1000);
          p50Diffs.push(round3(ofCurrent.p50Ms - ofBase.p50Ms));
          process.stdout.write(
            `build-ab c=${concurrency} round ${round}: base ${ofBase.throughput}/s p50 ${ofBase.p50Ms} ms, current ${ofCurrent.throughput}/s p50 ${ofCurrent.p50Ms} ms\n`,
          );
        },
      );
      const together = await togetherRounds(base, current, concurrency, togetherCount);
      const perCall = (s: Stack) => round3(cpu.get(s)!.ms / Math.max(1, cpu.get(s)!.calls));
      const cell = {
        concurrency,
        ratios,
        medianRatio: median(ratios),
        p50Diffs,
        medianP50DiffMs: median(p50Diffs),
        cpuMsPerCall: { base: perCall(base), current: perCall(current) },
        together,
      };
      cells.push(cell);
      if (together)
        togetherRows.push([
          concurrency,
          together.rounds,
          `**${together.gateway}×**`,
          `**${together.service}×**`,
          together.both,
          together.throughput,
        ]);
      rows.push([
        concurrency,
        `**${cell.medianRatio}×**`,
        `${Math.min(...ratios)}-${Math.max(...ratios)}`,
        cell.medianP50DiffMs,
        cell.cpuMsPerCall.base,
        cell.cpuMsPerCall.current,
      ]);
    }
    const markdown = [
      `### This build against ${path.relative(REPO_ROOT, baseDir)}/ (build-ab): file_list through the gateway, ${rounds} pairs of ${pairMs} ms windows, interleaved`,
      '',
      markdownTable(
        [
          'connections',
          'calls/s, this build over the base (median of pairs)',
          'pairs ranged',
          'p50 ms, this build minus the base (median)',
          'server CPU ms/call, base',
          'server CPU ms/call, this build',
        ],
        rows,
      ),
      '',
      'Both stacks ran at once (a gateway and a filesystem-mcp each, from their builds under plain node); server CPU per call is the two processes’ from /proc, over all windows.',
      '',
      ...(togetherRows.length
        ? [
            'Together: both stacks under load at once (half the connections each, 3 s rounds); CPU per call of this build over the base, median of the rounds:',
            '',
            markdownTable(
              ['connections (both stacks)', 'rounds', 'gateway CPU/call', 'filesystem-mcp CPU/call', 'both', 'calls/s'],
              togetherRows,
            ),
            '',
          ]
        : []),
      `Node flags: the base ${stackFlagsText(process.env)}; this build ${stackFlagsText(currentFlags)}.` +
        (Object.keys(currentEnv).length ? ` This build's stack also had ${process.env.BENCH_AB_ENV!.trim()}.` : ''),
    ].join('\n');
    return {
      json: {
        base: path.relative(REPO_ROOT, baseDir),
        rounds,
        pairMs,
        env: currentEnv,
        nodeArgs: {
          base: { gateway: nodeArgsOf('mega-orchestrator', process.env), service: nodeArgsOf('filesystem-mcp', process.env) },
          current: { gateway: nodeArgsOf('mega-orchestrator', currentFlags), service: nodeArgsOf('filesystem-mcp', currentFlags) },
        },
        cells,
      },
      markdown,
    };
  } finally {
    await stopProcesses(processes);
    fs.rmSync(workspace, { recursive: true, force: true });
    for (const name of ['base', 'current']) fs.rmSync(`${workspace}.data-${name}`, { recursive: true, force: true });
  }
}
