/**
 * The fleet launcher: starts every built service and the gateway on their documented ports with
 * embedded defaults, waits until they are healthy, prints what runs where, prefixes each
 * service's logs and stops everything cleanly on Ctrl-C.
 *
 *   pnpm start                      # all services
 *   pnpm fleet up --only git-mcp    # some services (plus the gateway)
 *   pnpm fleet plan                 # print the plan without starting anything
 *   pnpm fleet up --profile reference   # the earlier reference's ports (8001-8008, 8011) for old clients
 *   pnpm dev                        # (fleet up --dev) from the TypeScript source through tsx, no build
 *
 * `up` runs the built services (dist/services/<id>/server.js, scripts/build): a stale build is
 * rebuilt first (a second or two), a build that fails is reported and nothing starts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { builtEntry, ensureBuiltApart } from '../build/stamp';
import { Launcher, localGet } from './launcher';
import { monitoringTable, startMonitoring, stopMonitoring, waitMonitoring, type MonitoringProcess } from './monitoring';
import { planFleet, REPO_ROOT } from './plan';

function parseArgs(argv: string[]) {
  const [command = 'up', ...rest] = argv;
  let only: string[] | undefined;
  let monitoring = false;
  let profile: string | undefined;
  let dev = false;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--monitoring') monitoring = true;
    else if (rest[i] === '--dev') dev = true;
    else if (rest[i] === '--profile') profile = rest[++i] ?? '';
    else if (rest[i].startsWith('--profile=')) profile = rest[i].slice(10);
    else if (rest[i] === '--only') only = (rest[++i] ?? '').split(',').filter(Boolean);
    else if (rest[i].startsWith('--only=')) only = rest[i].slice(7).split(',').filter(Boolean);
    else
      throw new Error(
        `Unknown argument "${rest[i]}". Usage: fleet [up|plan] [--only id,id] [--monitoring] [--profile default|reference] [--dev]`,
      );
  }
  return { command, only, monitoring, profile, dev };
}

async function main() {
  const { command, only, monitoring, profile, dev } = parseArgs(process.argv.slice(2));
  const env = profile === undefined ? process.env : { ...process.env, FLEET_PROFILE: profile };
  let plan = planFleet({ env, only });
  const oldData = path.join(REPO_ROOT, '.data');
  if (fs.existsSync(oldData) && plan.dataDir !== oldData)
    process.stderr.write(
      `fleet: warning: ${oldData} (the data directory of earlier versions) is still in the checkout, where the file tools can read its secrets; stop the fleet and move it (mv ${oldData} ${plan.dataDir}) or delete it.\n`,
    );
  let monitors: MonitoringProcess[] = [];
  if (monitoring && command === 'up') {
    monitors = startMonitoring({ specs: plan.specs, dataDir: plan.dataDir, offset: Number(env.FLEET_PORT_OFFSET ?? 0), env });
    // Services push their logs to Loki when it runs.
    const loki = monitors.find((m) => m.id === 'loki' && m.state === 'starting');
    if (loki && !env.LOKI_URL) plan = planFleet({ env: { ...env, LOKI_URL: loki.url }, only });
  }
  if (command === 'plan') {
    for (const s of plan.specs) process.stdout.write(`${s.entry.id.padEnd(22)} ${String(s.port).padEnd(6)} ${s.url}\n`);
    return;
  }
  if (command !== 'up') throw new Error(`Unknown command "${command}". Usage: fleet [up|plan] [--only id,id]`);

  // Built JavaScript unless --dev: rebuilt here when any source changed since the build.
  if (!dev) {
    ensureBuiltApart();
    plan = { ...plan, specs: plan.specs.map((s) => ({ ...s, script: builtEntry(s.entry.id) })) };
  }
  const color = process.stdout.isTTY === true && !env.NO_COLOR;
  const launcher = new Launcher({
    startTimeoutMs: Number(env.FLEET_START_TIMEOUT_MS ?? 60_000),
    stopTimeoutMs: Number(env.FLEET_STOP_TIMEOUT_MS ?? 10_000),
    color,
    out: process.stdout,
    // --dev: TypeScript through the tsx loader, as the source is now (restart a service to take a change)
    nodeArgs: dev ? ['--import', 'tsx'] : [],
    // A service that dies is restarted with backoff and a crash-loop limit; FLEET_RESTART=0 turns it off.
    restart: {
      enabled: env.FLEET_RESTART !== '0',
      ...(env.FLEET_RESTART_BACKOFF_MS ? { initialBackoffMs: Number(env.FLEET_RESTART_BACKOFF_MS) } : {}),
    },
  });
  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    process.stdout.write(`\nfleet: ${signal} received, stopping ${launcher.services.length} processes...\n`);
    await Promise.all([launcher.stop(), stopMonitoring(monitors)]);
    fs.rmSync(plan.stateFile, { force: true });
    process.stdout.write('fleet: all stopped.\n');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  process.stdout.write(
    `fleet: starting ${plan.specs.length} processes ${dev ? 'from the TypeScript source (--dev)' : 'from the build (dist/)'}; data in ${plan.dataDir}, logs in ${path.join(plan.dataDir, 'logs')}\n`,
  );
  launcher.start(plan.specs);
  await Promise.all([launcher.waitHealthy(), waitMonitoring(monitors, 30_000)]);
  const gateway = plan.specs.find((s) => s.entry.pattern === 'gateway');
  // Ready means the gateway has polled every service once, so its catalog is whole (a stdio server
  // it starts itself may take a moment longer than the processes the launcher watches).
  if (gateway) await catalogWhole(gateway.url, 30_000);
  // written whole then renamed: a reader (./fleet status, the footprint bench) never sees half of it
  const writeState = () => {
    const tmp = `${plan.stateFile}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify({ pid: process.pid, services: launcher.state() }, null, 2));
    fs.renameSync(tmp, plan.stateFile);
  };
  writeState();
  const ok = launcher.services.filter((s) => s.state === 'healthy').length;
  process.stdout.write(`\n${launcher.table()}\n\n`);
  if (monitoring) process.stdout.write(`monitoring:\n${monitoringTable(monitors)}\n\n`);
  process.stdout.write(
    `fleet ready: ${ok}/${launcher.services.length} healthy. Gateway: ${gateway?.url}/mcp (MCP clients: Streamable HTTP at that URL). Ctrl-C stops everything.\n`,
  );
  setInterval(writeState, 2000).unref();
}

main().catch((err) => {
  process.stderr.write(`fleet: ${(err as Error).message}\n`);
  process.exit(1);
});

/** Waits until the gateway has polled every service at least once (GET /status), for at most `ms`. */
async function catalogWhole(url: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const res = await localGet(`${url}/status`);
      const body = JSON.parse(res?.body ?? '{}') as { services?: { total?: number; polled?: number } };
      if (body.services?.polled !== undefined && body.services.polled >= (body.services.total ?? 0)) return;
    } catch {
      // not answering yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
