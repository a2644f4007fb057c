/**
 * `fleet up --monitoring`: Prometheus (and Grafana Loki, when one is installed) beside the fleet,
 * configured from the project's own files with the targets moved to where the launcher runs them.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { LaunchSpec } from './plan';
import { REPO_ROOT } from './plan';
import { runtimeEnv } from './service-env';

export interface MonitoringProcess {
  id: 'prometheus' | 'loki';
  port: number;
  url: string;
  /** The contract's probe: `/-/healthy` for Prometheus, `/ready` for Loki. */
  probe: string;
  child?: ChildProcess;
  state: 'starting' | 'healthy' | 'failed' | 'missing';
  note: string;
}

/** The program's path on the PATH of `env` (the environment the launcher was given). */
const which = (program: string, env: NodeJS.ProcessEnv): string | undefined =>
  (env.PATH ?? '')
    .split(path.delimiter)
    .map((dir) => path.join(dir, program))
    .find((p) => fs.existsSync(p));

/** Grafana Loki's binary, if installed: Debian's `loki` package is an unrelated genetics program. */
export function findGrafanaLoki(env: NodeJS.ProcessEnv): string | undefined {
  const candidate = env.LOKI_BIN ?? which('loki', env);
  if (!candidate) return undefined;
  const out = spawnSync(candidate, ['-version'], { encoding: 'utf8', timeout: 5000 });
  return /loki, version/i.test(`${out.stdout}${out.stderr}`) ? candidate : undefined;
}

/** The project's prometheus.yml with every target moved to 127.0.0.1 and the launcher's ports. */
export function prometheusConfigFor(specs: LaunchSpec[], promPort: number, interval?: string): Record<string, unknown> {
  const base = YAML.parse(fs.readFileSync(path.join(REPO_ROOT, 'monitoring/prometheus/prometheus.yml'), 'utf8'));
  const byId = new Map(specs.map((s) => [s.entry.id, s]));
  const job = base.scrape_configs.find((j: { job_name: string }) => j.job_name === 'mcp-fleet');
  job.static_configs = job.static_configs
    .filter((c: { labels: { service: string } }) => byId.has(c.labels.service))
    .map((c: { labels: { service: string } }) => ({ ...c, targets: [`127.0.0.1:${byId.get(c.labels.service)!.port}`] }));
  base.scrape_configs.find((j: { job_name: string }) => j.job_name === 'prometheus').static_configs = [
    { targets: [`127.0.0.1:${promPort}`] },
  ];
  base.rule_files = [path.join(REPO_ROOT, 'monitoring/prometheus/rules/*.yml')];
  if (interval) base.global = { ...base.global, scrape_interval: interval, evaluation_interval: interval };
  return base;
}

/** What a user without Prometheus reads: Debian's package carries it (and promtool). */
export const PROMETHEUS_MISSING =
  'Prometheus is not installed: sudo apt-get install prometheus (Debian/Ubuntu), then ./fleet up --monitoring again; or docker compose up prometheus';

export function startMonitoring(options: {
  specs: LaunchSpec[];
  dataDir: string;
  offset: number;
  env: NodeJS.ProcessEnv;
}): MonitoringProcess[] {
  const dir = path.join(options.dataDir, 'monitoring');
  fs.mkdirSync(dir, { recursive: true });
  const out: MonitoringProcess[] = [];

  const promPort = 7028 + options.offset;
  const prom: MonitoringProcess = {
    id: 'prometheus',
    port: promPort,
    url: `http://127.0.0.1:${promPort}`,
    probe: '/-/healthy',
    state: 'missing',
    note: PROMETHEUS_MISSING,
  };
  const promBin = which('prometheus', options.env);
  if (promBin) {
    const config = path.join(dir, 'prometheus.yml');
    fs.writeFileSync(config, YAML.stringify(prometheusConfigFor(options.specs, promPort, options.env.FLEET_SCRAPE_INTERVAL)));
    prom.child = spawn(
      promBin,
      [`--config.file=${config}`, `--storage.tsdb.path=${path.join(dir, 'prometheus-data')}`, `--web.listen-address=127.0.0.1:${promPort}`],
      {
        env: runtimeEnv(options.env),
        stdio: ['ignore', fs.openSync(path.join(dir, 'prometheus.log'), 'a'), fs.openSync(path.join(dir, 'prometheus.log'), 'a')],
      },
    );
    prom.state = 'starting';
    prom.note = `config ${config}; log ${path.join(dir, 'prometheus.log')}`;
  }
  out.push(prom);

  const lokiPort = 7032 + options.offset;
  const loki: MonitoringProcess = {
    id: 'loki',
    port: lokiPort,
    url: `http://127.0.0.1:${lokiPort}`,
    probe: '/ready',
    state: 'missing',
    note: 'Grafana Loki not installed (Debian has no package): put its binary on PATH or in LOKI_BIN, or use `docker compose up loki`',
  };
  const lokiBin = findGrafanaLoki(options.env);
  if (lokiBin) {
    const storage = path.join(dir, 'loki-data');
    const config = path.join(dir, 'loki.yml');
    fs.writeFileSync(
      config,
      YAML.stringify({
        auth_enabled: false,
        server: { http_listen_address: '127.0.0.1', http_listen_port: lokiPort, grpc_listen_port: 0 },
        common: {
          path_prefix: storage,
          replication_factor: 1,
          ring: { instance_addr: '127.0.0.1', kvstore: { store: 'inmemory' } },
          storage: { filesystem: { chunks_directory: path.join(storage, 'chunks'), rules_directory: path.join(storage, 'rules') } },
        },
        schema_config: {
          configs: [
            { from: '2024-01-01', store: 'tsdb', object_store: 'filesystem', schema: 'v13', index: { prefix: 'index_', period: '24h' } },
          ],
        },
      }),
    );
    loki.child = spawn(lokiBin, [`-config.file=${config}`], {
      env: runtimeEnv(options.env),
      stdio: ['ignore', fs.openSync(path.join(dir, 'loki.log'), 'a'), fs.openSync(path.join(dir, 'loki.log'), 'a')],
    });
    loki.state = 'starting';
    loki.note = `config ${config}`;
  }
  out.push(loki);
  return out;
}

/** Waits for each started process's probe, up to the deadline. */
export async function waitMonitoring(procs: MonitoringProcess[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const p of procs.filter((x) => x.state === 'starting')) {
    while (p.state === 'starting') {
      const ok = await fetch(p.url + p.probe, { signal: AbortSignal.timeout(1000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) p.state = 'healthy';
      else if (p.child?.exitCode !== null || Date.now() > deadline) {
        p.state = 'failed';
        p.note = `did not answer ${p.probe}; see ${p.note}`;
      } else await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export function stopMonitoring(procs: MonitoringProcess[]): Promise<void[]> {
  return Promise.all(
    procs
      .filter((p) => p.child && p.child.exitCode === null)
      .map(
        (p) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => p.child!.kill('SIGKILL'), 5000);
            p.child!.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            p.child!.kill('SIGTERM');
          }),
      ),
  );
}

/** One row per program: name, port, state, its probe's URL (none for a program that is not installed) and what to do or where to look. */
export function monitoringTable(procs: MonitoringProcess[]): string {
  return procs
    .map(
      (p) =>
        `${p.id.padEnd(12)} ${String(p.port).padEnd(6)} ${p.state.padEnd(8)} ${p.state === 'missing' ? '-' : `${p.url}${p.probe}`}  ${p.note}`,
    )
    .join('\n');
}
