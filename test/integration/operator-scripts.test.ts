/**
 * The operator scripts against a fleet running here: the launcher starts the gateway, memory-mcp,
 * system-mcp and secrets-ui on a random port offset, and each script is driven through bash.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { backendUrl, describeWithBackend, describeWithProgram, tempDir } from '@mcp-fleet/testing';
import { startFleet, waitFor, type FleetHandle } from '../support/fleet-process';
import { runScript } from '../support/run-script';

const RUNNING = ['mega-orchestrator', 'memory-mcp', 'system-mcp', 'secrets-ui'];
const tmp = tempDir('operator-scripts-');
const dataDir = path.join(tmp.dir, 'data');
let fleet: FleetHandle;
let env: NodeJS.ProcessEnv;

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

beforeAll(async () => {
  fs.mkdirSync(dataDir, { recursive: true });
  fleet = await startFleet({ dataDir, workspace: path.join(tmp.dir, 'ws'), only: ['memory-mcp', 'system-mcp', 'secrets-ui'] });
  env = { FLEET_PORT_OFFSET: String(fleet.offset), FLEET_DATA_DIR: dataDir };
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`${fleet.serviceUrl('memory-mcp', 7005)}/memory/store`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: `operator scripts memory ${i}` }),
    });
    expect(res.status).toBe(200);
  }
  // the gateway has polled its downstreams
  await waitFor(
    'gateway catalog',
    async () => ((await (await fetch(`${fleet.gateway}/tools/list`)).json()) as any).tools?.length > 0,
    20_000,
  );
}, 120_000);

afterAll(async () => {
  await fleet?.stop();
  tmp.cleanup();
});

describe('scripts/health-check.sh', () => {
  it('reports every running service healthy and exits 0', async () => {
    const out = await runScript('scripts/health-check.sh', ['--only', RUNNING.join(',')], env);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    // the gateway is degraded: most of its downstreams are not started here
    for (const id of RUNNING) expect(out.stdout).toMatch(new RegExp(`^${id}\\s+\\d+\\s+(healthy|degraded)\\s+200`, 'm'));
    expect(out.stdout).toMatch(/^system-mcp\s+\d+\s+healthy/m);
    expect(out.stdout).toContain('4 of 4 up');
  });

  it('answers JSON and exits 1 naming a service that is down', async () => {
    const out = await runScript('scripts/health-check.sh', ['--only', 'system-mcp,filesystem-mcp', '--json'], env);
    expect(out.code).toBe(1);
    const doc = JSON.parse(out.stdout);
    expect(doc).toMatchObject({ ok: false, failed: 1 });
    expect(doc.services.find((s: any) => s.service === 'filesystem-mcp')).toMatchObject({ status: 'down', httpStatus: 0 });
    expect(doc.services.find((s: any) => s.service === 'system-mcp')).toMatchObject({ status: 'healthy', httpStatus: 200 });
    expect(out.stderr).toContain('1 service(s) down or unhealthy');
  });

  it('refuses an unknown service, listing the known ones', async () => {
    const out = await runScript('scripts/health-check.sh', ['--only', 'nope-mcp'], env);
    expect(out.code).toBe(64);
    expect(out.stderr).toMatch(/unknown service "nope-mcp"; known: mega-orchestrator,/);
  });
});

describe('scripts/monitor-services.sh', () => {
  it('writes one status file per service, a summary and the launcher processes, atomically', async () => {
    const dir = path.join(tmp.dir, 'status');
    const out = await runScript(
      'scripts/monitor-services.sh',
      ['--dir', dir, '--only', RUNNING.join(','), '--interval', '0.2', '--count', '2'],
      env,
    );
    expect(out.code).toBe(0);
    expect(fs.readdirSync(dir).sort()).toEqual([
      'containers.json',
      'mega-orchestrator.json',
      'memory-mcp.json',
      'secrets-ui.json',
      'summary.json',
      'system-mcp.json',
    ]);
    const memory = JSON.parse(fs.readFileSync(path.join(dir, 'memory-mcp.json'), 'utf8'));
    expect(memory).toMatchObject({ service: 'memory-mcp', status: 'healthy', httpStatus: 200, health: { service: 'memory-mcp' } });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'summary.json'), 'utf8'))).toMatchObject({ ok: true, healthy: 4, total: 4 });
    const containers = JSON.parse(fs.readFileSync(path.join(dir, 'containers.json'), 'utf8'));
    expect(containers.source).toBe('launcher');
    expect(containers.processes.map((p: any) => p.id).sort()).toEqual([...RUNNING].sort());
  });

  it('exits 1 when a service is down and 73 when the folder cannot be written', async () => {
    const dir = path.join(tmp.dir, 'status-down');
    const out = await runScript('scripts/monitor-services.sh', ['--dir', dir, '--only', 'filesystem-mcp'], env);
    expect(out.code).toBe(1);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'filesystem-mcp.json'), 'utf8')).status).toBe('down');
    const file = path.join(tmp.dir, 'a-file');
    fs.writeFileSync(file, '');
    const bad = await runScript('scripts/monitor-services.sh', ['--dir', path.join(file, 'x')], env);
    expect(bad.code).toBe(73);
    expect(bad.stderr).toContain('cannot write to');
  });
});

describe('scripts/vault-variant-b-smoke.sh', () => {
  const tokenFile = () => path.join(dataDir, 'secrets-ui', 'store-token');

  it('passes on the file store with --allow-file-store, including a write probe that restores the value', async () => {
    const out = await runScript('scripts/vault-variant-b-smoke.sh', ['--allow-file-store', '--write-probe', 'memory-mcp'], {
      ...env,
      VAULT_TOKEN_FILE: tokenFile(),
    });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^secrets-ui\s+ok .*store file/m);
    expect(out.stdout).toMatch(/^write probe\s+ok\s+memory-mcp MEMORY_DATABASE_URL written, read back and restored/m);
    expect(out.stdout).toMatch(/^gateway\s+ok .*tools in \/tools\/list, \d+ over MCP tools\/list/m);
    // restored: the variable the probe used is unset again
    const res = await fetch(`${fleet.serviceUrl('secrets-ui', 10000)}/api/secrets/memory-mcp`, {
      headers: { authorization: `Bearer ${fs.readFileSync(tokenFile(), 'utf8').trim()}` },
    });
    const body = (await res.json()) as any;
    expect(body.result.keys.find((k: any) => k.name === 'MEMORY_DATABASE_URL').set).toBe(false);
    expect(body.result.version).toBe(2);
  });

  it('fails naming the problem when Vault is not there and the UI is on the file store', async () => {
    const out = await runScript('scripts/vault-variant-b-smoke.sh', [], {
      ...env,
      VAULT_TOKEN_FILE: tokenFile(),
      VAULT_ADDR: `http://127.0.0.1:${await freePort()}`,
    });
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/^vault\s+FAIL\s+nothing answers at/m);
    expect(out.stdout).toMatch(/uses the file store, not Vault/);
  });
});

describe('scripts/backup-databases.sh', () => {
  const countMemories = (file: string) => {
    const out = spawnSync('sqlite3', [file, "SELECT count(*) FROM memories WHERE content LIKE 'operator scripts memory%'"], {
      encoding: 'utf8',
    });
    return Number(out.stdout.trim());
  };

  it.each(['sqlite3', 'node'])('copies every SQLite store online with %s, checks integrity and keeps --keep runs', async (tool) => {
    const out = path.join(tmp.dir, `backups-${tool}`);
    for (let i = 0; i < 2; i++) {
      const res = await runScript('scripts/backup-databases.sh', ['--out', out, '--keep', '1', '--no-postgres'], {
        ...env,
        BACKUP_SQLITE_TOOL: tool === 'node' ? 'node' : '',
      });
      expect(res.stderr).toMatch(/SQLite store\(s\) backed up/);
      expect({ code: res.code, stdout: res.stdout }).toMatchObject({ code: 0 });
    }
    const runs = fs.readdirSync(out);
    expect(runs).toHaveLength(1);
    const run = path.join(out, runs[0]);
    const manifest = JSON.parse(fs.readFileSync(path.join(run, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ ok: true, failures: 0, sqliteTool: tool });
    const memory = manifest.files.find((f: any) => f.source.includes('memory-mcp'));
    expect(memory).toMatchObject({ kind: 'sqlite', integrity: 'ok', ok: true });
    expect(countMemories(path.join(run, memory.file))).toBe(5);
    expect(manifest.files.every((f: any) => f.integrity === 'ok')).toBe(true);
    expect(fs.readFileSync(path.join(run, 'RESTORE.md'), 'utf8')).toContain('PRAGMA integrity_check');
    expect(fs.statSync(path.join(run, 'manifest.json')).mode & 0o777).toBe(0o600);
  });

  it('fails and says which file when a store is damaged', async () => {
    const broken = path.join(tmp.dir, 'broken-data');
    fs.mkdirSync(broken);
    const good = path.join(broken, 'good.sqlite');
    spawnSync('sqlite3', [good, 'CREATE TABLE t(x); INSERT INTO t VALUES (1);']);
    const bytes = fs.readFileSync(good);
    bytes.fill(0xff, 100, bytes.length);
    fs.writeFileSync(path.join(broken, 'bad.sqlite'), bytes);
    const res = await runScript('scripts/backup-databases.sh', ['--data-dir', broken, '--no-postgres'], {});
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^FAIL\s+bad\.sqlite/m);
    expect(res.stdout).toMatch(/^ok\s+good\.sqlite/m);
    const run = fs.readdirSync(path.join(broken, 'backups'))[0];
    const manifest = JSON.parse(fs.readFileSync(path.join(broken, 'backups', run, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ ok: false, failures: 1 });
  });

  it('refuses a missing data directory', async () => {
    const res = await runScript('scripts/backup-databases.sh', ['--data-dir', path.join(tmp.dir, 'nope')], {});
    expect(res.code).toBe(66);
    expect(res.stderr).toContain('no data directory at');
  });
});

describeWithBackend('postgres', 'scripts/backup-databases.sh with PostgreSQL', () => {
  const db = `backup_test_${process.pid}_${Date.now() % 100000}`;
  let admin: Client;

  beforeAll(async () => {
    admin = new Client({ connectionString: backendUrl('postgres') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    const url = new URL(backendUrl('postgres'));
    url.pathname = `/${db}`;
    const c = new Client({ connectionString: url.toString() });
    await c.connect();
    await c.query('CREATE TABLE notes (id int primary key, body text); INSERT INTO notes VALUES (1, $$kept$$)');
    await c.end();
  });

  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${db}`);
    await admin.end();
  });

  it('dumps the configured database with pg_dump, never printing its password', async () => {
    const url = new URL(backendUrl('postgres'));
    url.pathname = `/${db}`;
    url.password = 'not-needed-with-trust';
    const out = path.join(tmp.dir, 'pg-backups');
    const res = await runScript('scripts/backup-databases.sh', ['--data-dir', dataDir, '--out', out, '--pg-url', url.toString()], env);
    expect(res.code).toBe(0);
    expect(res.stdout + res.stderr).not.toContain('not-needed-with-trust');
    expect(res.stdout).toContain(':[redacted]@');
    const run = path.join(out, fs.readdirSync(out)[0]);
    const list = spawnSync('pg_restore', ['--list', path.join(run, 'postgres', `${db}.dump`)], { encoding: 'utf8' });
    expect(list.stdout).toMatch(/TABLE public notes/);
  });
});

describe('scripts/diagnostics/quick_diagnose.sh', () => {
  it('reports the launcher, the services and the resources, and exits 0 with a service merely stopped', async () => {
    const out = await runScript('scripts/diagnostics/quick_diagnose.sh', ['--only', 'mega-orchestrator,system-mcp,filesystem-mcp'], env);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/launcher pid \d+ running/);
    expect(out.stdout).toMatch(/ok\s+system-mcp :\d+ healthy/);
    expect(out.stdout).toMatch(/warn\s+filesystem-mcp: nothing listens on/);
    expect(out.stdout).toMatch(/ok\s+memory-mcp\s+healthy/);
    expect(out.stdout).toMatch(/^OK: 0 failure\(s\)/m);
  });

  it('fails when a port of the fleet is taken by something that is not the service', async () => {
    const squatter = net.createServer((s) => s.destroy()).listen(0, '127.0.0.1');
    await new Promise((r) => squatter.once('listening', r));
    const port = (squatter.address() as net.AddressInfo).port;
    try {
      const out = await runScript('scripts/diagnostics/quick_diagnose.sh', ['--only', 'git-mcp', '--timeout', '1'], {
        ...env,
        GIT_MCP_PORT: String(port),
      });
      expect(out.code).toBe(1);
      expect(out.stdout).toMatch(new RegExp(`FAIL\\s+git-mcp: port ${port} is open but /health does not answer`));
    } finally {
      squatter.close();
    }
  });
});

describe('scripts/diagnostics/production_monitor.sh', () => {
  it('alerts the webhook once when a service stays down, and logs JSON lines', async () => {
    const received: any[] = [];
    const hook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.end('ok');
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', () => r()));
    const log = path.join(tmp.dir, 'monitor.log');
    try {
      const out = await runScript(
        'scripts/diagnostics/production_monitor.sh',
        [
          '--only',
          'system-mcp,filesystem-mcp',
          '--interval',
          '0.2',
          '--count',
          '4',
          '--threshold',
          '2',
          '--log',
          log,
          '--webhook',
          `http://127.0.0.1:${(hook.address() as net.AddressInfo).port}/alert`,
        ],
        env,
      );
      expect(out.code).toBe(1);
      expect(out.stderr).toMatch(/round 4: 1\/2 up; down: filesystem-mcp/);
    } finally {
      hook.close();
    }
    expect(received).toEqual([expect.objectContaining({ event: 'down', service: 'filesystem-mcp', httpStatus: 0, failures: 2 })]);
    const lines = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(received);
  });

  it('exits 0 after its rounds when everything is up, with no event', async () => {
    const log = path.join(tmp.dir, 'monitor-ok.log');
    const out = await runScript(
      'scripts/diagnostics/production_monitor.sh',
      ['--only', RUNNING.join(','), '-i', '0.1', '-n', '2', '-l', log],
      env,
    );
    expect(out.code).toBe(0);
    expect(fs.readFileSync(log, 'utf8')).toBe('');
  });
});

describeWithProgram('promtool', 'prometheus', 'scripts/monitoring-health-check.sh', () => {
  let prometheus: ChildProcess;
  let metricsUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    const dir = path.join(tmp.dir, 'prometheus');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'prometheus.yml'), 'global:\n  scrape_interval: 15s\n');
    prometheus = spawn(
      'prometheus',
      [`--config.file=${dir}/prometheus.yml`, `--web.listen-address=127.0.0.1:${port}`, `--storage.tsdb.path=${dir}/data`],
      {
        stdio: 'ignore',
      },
    );
    metricsUrl = `http://127.0.0.1:${port}`;
    await waitFor('prometheus', async () => (await fetch(`${metricsUrl}/-/healthy`)).ok, 30_000);
  }, 40_000);

  afterAll(() => {
    prometheus?.kill('SIGTERM');
  });

  it("validates the project's Prometheus config, rules, rule tests and dashboards", async () => {
    const out = await runScript('scripts/monitoring-health-check.sh', ['--config-only'], env);
    expect(out.code).toBe(0);
    for (const check of ['prometheus config', 'alert rules', 'rule tests', 'dashboards'])
      expect(out.stdout).toMatch(new RegExp(`^${check}\\s+ok`, 'm'));
  });

  it('probes the metrics server and fails naming the log aggregator when it does not answer', async () => {
    const logsUrl = `http://127.0.0.1:${await freePort()}`;
    const out = await runScript('scripts/monitoring-health-check.sh', ['--probes-only'], {
      ...env,
      METRICS_URL: metricsUrl,
      LOGS_URL: logsUrl,
    });
    expect(out.code).toBe(1);
    expect(out.stdout).toMatch(/^metrics probe\s+ok\s+.*\/-\/healthy/m);
    expect(out.stdout).toMatch(new RegExp(`^logs probe\\s+FAIL\\s+${logsUrl}/ready answered nothing`, 'm'));
    const skipped = await runScript('scripts/monitoring-health-check.sh', ['--probes-only', '--skip-logs'], {
      ...env,
      METRICS_URL: metricsUrl,
    });
    expect(skipped.code).toBe(0);
    const strict = await runScript('scripts/monitoring-health-check.sh', ['--config-only', '--strict'], env);
    // Grafana Loki cannot be installed here, so its check cannot run: --strict turns that into a failure.
    expect(strict.code).toBe(1);
    expect(strict.stdout).toMatch(/^loki config\s+FAIL/m);
  });
});
