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
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt } from '../../scripts/build/build';
import { DIST_DIR } from '../../scripts/build/stamp';
import {
  interleavedPairs,
  markdownTable,
  mcpSession,
  median,
  processTreeCpuMs,
  REPO_ROOT,
  runLoad,
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
async function startStack(name: string, distDir: string, workspace: string, portBase: number, processes: ChildProcess[]): Promise<Stack> {
  const fsPort = portBase + 1;
  const gwPort = portBase;
  const env = {
    DATA_DIR: `${workspace}.data-${name}`,
    WORKSPACE_ROOTS: workspace,
    FILESYSTEM_MCP_PORT: String(fsPort),
    HEALTH_POLL_MS: '1000',
  };
  const own: ChildProcess[] = [];
  for (const [id, port] of [
    ['filesystem-mcp', fsPort],
    ['mega-orchestrator', gwPort],
  ] as const) {
    const child = await startServiceProcess(id, env, port, { built: true, distDir });
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

  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ab-')));
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(workspace, `file-${i}.txt`), `line ${i}\n`);
  const portBase = 3000 + Math.floor(Math.random() * 150) * 100 + 7000;
  const processes: ChildProcess[] = [];
  try {
    const base = await startStack('base', baseDir, workspace, portBase, processes);
    const current = await startStack('current', path.join(REPO_ROOT, DIST_DIR), workspace, portBase + 10, processes);
    for (const s of [base, current]) await runLoad(s.origin, s.call, 8, 2000, 0);
    const cpuOf = (s: Stack) => s.processes.reduce((sum, p) => sum + (processTreeCpuMs(p.pid) ?? NaN), 0);
    const rows: (string | number)[][] = [];
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
      const perCall = (s: Stack) => round3(cpu.get(s)!.ms / Math.max(1, cpu.get(s)!.calls));
      const cell = {
        concurrency,
        ratios,
        medianRatio: median(ratios),
        p50Diffs,
        medianP50DiffMs: median(p50Diffs),
        cpuMsPerCall: { base: perCall(base), current: perCall(current) },
      };
      cells.push(cell);
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
      'Both stacks ran at once (a gateway and a filesystem-mcp each, from their builds under plain node with the fleet’s flags); server CPU per call is the two processes’ from /proc, over all windows.',
    ].join('\n');
    return { json: { base: path.relative(REPO_ROOT, baseDir), rounds, pairMs, cells }, markdown };
  } finally {
    await stopProcesses(processes);
    fs.rmSync(workspace, { recursive: true, force: true });
    for (const name of ['base', 'current']) fs.rmSync(`${workspace}.data-${name}`, { recursive: true, force: true });
  }
}
