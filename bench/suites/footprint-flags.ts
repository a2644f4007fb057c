/**
 * What Node flags (and the C library's malloc settings) do to the built fleet's idle memory and
 * its start, each variant measured as a whole fleet in the same run, the variants interleaved
 * (round 1: A B C..., round 2: A B C...) so a change in what else runs on the machine falls on
 * all of them. For each start: "fleet ready" time, the CPU time the start cost, and after
 * BENCH_IDLE_MS (default 20 s) the fleet's PSS, its anonymous PSS (heaps, stacks, malloc: what the
 * flags change; the file-backed part is the node binary and libraries shared with every other
 * Node process on the machine, which moves with them), the launcher's and the gateway's.
 *
 *   pnpm bench footprint-flags                       # every variant, BENCH_ROUNDS (default 2) rounds
 *   BENCH_VARIANTS=base,lite pnpm bench footprint-flags
 *
 * The gateway's flags are measured for throughput apart (`pnpm bench vs-supergateway` with
 * FLEET_GATEWAY_NODE_ARGS), as a tool service idle and the gateway under load want different ones.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GATEWAY_ID } from '@mcp-fleet/inventory';
import { GATEWAY_NODE_ARGS, LAUNCHER_NODE_ARGS } from '../../scripts/fleet/plan';
import { markdownTable } from '../lib';
import { ownKiB, startFleet, treeKiB } from './footprint';

interface Variant {
  name: string;
  /** Flags of every service but the gateway (FLEET_NODE_ARGS); none: each service's own (plan.ts). */
  services?: readonly string[];
  gateway?: readonly string[];
  /** The launcher's flags; none: the same as the base variant's. */
  launcher?: readonly string[];
  env?: Record<string, string>;
}

const BASE = ['--max-semi-space-size=1'];
/** What was tried (docs/operations.md, "The build and the footprint", has the figures); the first is the baseline. */
export const VARIANTS: Variant[] = [
  { name: 'base', services: BASE },
  { name: 'optimize-for-size', services: [...BASE, '--optimize-for-size'] },
  { name: 'optimize-for-size+no-turbofan', services: [...BASE, '--optimize-for-size', '--no-turbofan'] },
  { name: 'fleet defaults', launcher: LAUNCHER_NODE_ARGS },
  { name: 'single-threaded-gc', services: [...BASE, '--single-threaded-gc'] },
  { name: 'v8-pool-size=1', services: [...BASE, '--v8-pool-size=1'] },
  { name: 'max-lazy', services: [...BASE, '--max-lazy'] },
  // reaches the launcher only: it hands each service just the variables it declares (scripts/fleet/service-env.ts), not MALLOC_ARENA_MAX
  { name: 'malloc-arena-max=2', services: BASE, env: { MALLOC_ARENA_MAX: '2' } },
  // on top of the fleet's defaults as they were before --single-threaded was taken (after the lazy loads of issue 32):
  // V8 without background threads (taken: SERVICE_NODE_ARGS), and functions compiled only when called
  { name: 'defaults+single-threaded', services: [...BASE, '--optimize-for-size', '--single-threaded'], launcher: LAUNCHER_NODE_ARGS },
  { name: 'defaults+max-lazy', services: [...BASE, '--optimize-for-size', '--max-lazy'], launcher: LAUNCHER_NODE_ARGS },
];

interface Sample {
  variant: string;
  round: number;
  readyMs: number;
  cpuMs: number;
  load: number;
  pssKiB: number;
  anonKiB: number;
  launcherKiB: number;
  /** The launcher's own anonymous PSS (what its flags change). */
  launcherAnonKiB: number;
  gatewayKiB: number;
  /** The median tool service's anonymous PSS (the gateway and the launcher apart). */
  serviceAnonKiB: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const mib = (kib: number) => (kib / 1024).toFixed(1);
const flags = (args: readonly string[]) => (args.length ? args.join(' ') : '-');

async function sample(v: Variant, round: number, dir: string, workspace: string, idleMs: number): Promise<Sample> {
  const fleet = await startFleet('built', dir, workspace, {
    env: {
      ...(v.services ? { FLEET_NODE_ARGS: flags(v.services) } : {}),
      FLEET_GATEWAY_NODE_ARGS: flags(v.gateway ?? GATEWAY_NODE_ARGS),
      ...v.env,
    },
    launcherArgs: v.launcher ?? BASE,
  });
  try {
    await new Promise((r) => setTimeout(r, idleMs));
    const { services } = fleet.state();
    const launcher = fleet.child.pid!;
    const gw = services.find((s) => s.id === GATEWAY_ID)!;
    const s: Sample = {
      variant: v.name,
      round,
      readyMs: Math.round(fleet.readyMs),
      cpuMs: fleet.readyCpuMs,
      load: Math.round(fleet.load * 100) / 100,
      pssKiB: treeKiB(launcher, 'Pss'),
      anonKiB: treeKiB(launcher, 'Pss_Anon'),
      launcherKiB: ownKiB(launcher, 'Pss'),
      launcherAnonKiB: ownKiB(launcher, 'Pss_Anon'),
      gatewayKiB: treeKiB(gw.pid, 'Pss'),
      serviceAnonKiB: median(services.filter((x) => x.id !== GATEWAY_ID).map((x) => treeKiB(x.pid, 'Pss_Anon'))),
    };
    process.stdout.write(
      `bench: footprint-flags: ${v.name} #${round}: ready ${s.readyMs} ms, ${s.cpuMs} CPU-ms, PSS ${mib(s.pssKiB)} MiB (anon ${mib(s.anonKiB)})\n`,
    );
    return s;
  } finally {
    await fleet.stop();
  }
}

export async function run(): Promise<{ json: unknown; markdown: string }> {
  const idleMs = Number(process.env.BENCH_IDLE_MS ?? 20_000);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
  const wanted = process.env.BENCH_VARIANTS?.split(',').filter(Boolean);
  const variants = wanted ? VARIANTS.filter((v) => wanted.includes(v.name)) : VARIANTS;
  if (!variants.length) throw new Error(`BENCH_VARIANTS names none of ${VARIANTS.map((v) => v.name).join(', ')}`);
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-footprint-flags-')));
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(workspace);
  execFileSync('git', ['init', '-q', workspace]);
  const { ensureBuilt } = await import('../../scripts/build/build');
  await ensureBuilt((line) => process.stdout.write(`bench: footprint-flags: ${line}\n`));
  const samples: Sample[] = [];
  const failures: string[] = [];
  try {
    // a first start, not counted, warms the page cache
    await (await startFleet('built', dir, workspace)).stop();
    for (let round = 1; round <= rounds; round++)
      for (const v of variants) {
        try {
          samples.push(await sample(v, round, dir, workspace, idleMs));
        } catch (err) {
          // a start that failed (or timed out on a loaded machine) is named in the results, not a hole in them
          failures.push(`${v.name} #${round}: ${(err as Error).message.split('\n')[0]}`);
          process.stdout.write(`bench: footprint-flags: ${failures.at(-1)}\n`);
        }
      }
  } finally {
    // a service's last writes may land as the directory goes
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
  const base = samples.filter((s) => s.variant === variants[0].name);
  const med = (xs: Sample[], k: keyof Sample) => median(xs.map((x) => Number(x[k])));
  const rows = variants.map((v) => {
    const xs = samples.filter((s) => s.variant === v.name);
    return [
      v.name,
      (v.services ? flags(v.services) : 'plan.ts defaults') + (v.env ? ` ${Object.entries(v.env).map(([k, x]) => `${k}=${x}`)}` : ''),
      mib(med(xs, 'pssKiB')),
      mib(med(xs, 'anonKiB')),
      `${((med(xs, 'anonKiB') - med(base, 'anonKiB')) / 1024).toFixed(1)}`,
      mib(med(xs, 'serviceAnonKiB')),
      `${mib(med(xs, 'launcherKiB'))} (anon ${mib(med(xs, 'launcherAnonKiB'))})`,
      mib(med(xs, 'gatewayKiB')),
      Math.round(med(xs, 'readyMs')),
      Math.round(med(xs, 'cpuMs')),
      xs.map((x) => x.load).join(', '),
    ];
  });
  const markdown = [
    '## Footprint: Node flags for the built fleet',
    '',
    `Whole built fleet per variant (flags of every service but the gateway), ${rounds} round(s) interleaved, medians; ` +
      `idle ${idleMs / 1000} s after "fleet ready". Anonymous PSS is what the flags change; the rest of PSS is the node binary ` +
      `and libraries, shared with whatever other Node processes run on the machine. Δ anon is against "${variants[0].name}".`,
    '',
    markdownTable(
      [
        'variant',
        'service flags',
        'fleet PSS, MiB',
        'anon PSS, MiB',
        'Δ anon, MiB',
        'service anon (median), MiB',
        'launcher PSS, MiB',
        'gateway PSS, MiB',
        'ready, ms',
        'start CPU, ms',
        'load at start',
      ],
      rows,
    ),
    ...(failures.length ? ['', `Starts that failed: ${failures.join('; ')}.`] : []),
  ].join('\n');
  return { json: { idleMs, rounds, samples, failures }, markdown };
}
