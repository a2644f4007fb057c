/**
 * The monitoring stack run, not only written: Debian's Prometheus scrapes a running fleet with the
 * project's own configuration (targets moved to the test's ports), loads the alert rules, and every
 * Grafana panel's PromQL is evaluated against it after a short load. Broken PromQL fails here.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describeWithProgram, requireBackends, tempDir } from '@mcp-fleet/testing';
import { monitoringTable, startMonitoring } from '../../scripts/fleet/monitoring';
import { REPO_ROOT, postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

const RULES_DIR = path.join(REPO_ROOT, 'monitoring/prometheus/rules');
const DASHBOARDS_DIR = path.join(REPO_ROOT, 'monitoring/grafana/dashboards');
const SERVICES = ['system-mcp', 'filesystem-mcp'];

interface Panel {
  title: string;
  datasource: { type: string };
  targets: { expr: string }[];
}

/** Every Prometheus query of every dashboard, with Grafana's variables filled in as a person would pick them. */
export function dashboardQueries(): { dashboard: string; panel: string; expr: string }[] {
  const out: { dashboard: string; panel: string; expr: string }[] = [];
  for (const file of fs.readdirSync(DASHBOARDS_DIR).filter((f) => f.endsWith('.json'))) {
    const dash = JSON.parse(fs.readFileSync(path.join(DASHBOARDS_DIR, file), 'utf8')) as { title: string; panels: Panel[] };
    for (const panel of dash.panels) {
      if (panel.datasource.type !== 'prometheus') continue;
      for (const t of panel.targets)
        out.push({
          dashboard: dash.title,
          panel: panel.title,
          expr: t.expr.replaceAll('$__rate_interval', '30s').replaceAll('$service', 'system-mcp'),
        });
    }
  }
  return out;
}

describe('monitoring configuration, offline', () => {
  it('has alert rules that promtool accepts and whose unit tests pass', () => {
    const check = spawnSync('promtool', ['check', 'rules', ...fs.readdirSync(RULES_DIR).map((f) => path.join(RULES_DIR, f))], {
      encoding: 'utf8',
    });
    // No promtool (the Debian package prometheus): nothing to check here, except in CI where it must be there.
    if (check.error && !requireBackends()) return expect(spawnSync('which', ['promtool']).status).not.toBe(0);
    expect(check.error).toBeUndefined();
    expect(check.stdout + check.stderr).toContain('SUCCESS: 6 rules found');
    const unit = spawnSync('promtool', ['test', 'rules', 'monitoring/prometheus/tests/fleet-alerts.test.yml'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(unit.stdout + unit.stderr).toContain('SUCCESS');
    expect(unit.status).toBe(0);
  });

  it('provisions every dashboard with a Prometheus query per panel and the datasource uids it uses', () => {
    const queries = dashboardQueries();
    expect(new Set(queries.map((q) => q.dashboard)).size).toBe(3);
    const ds = YAML.parse(fs.readFileSync(path.join(REPO_ROOT, 'monitoring/grafana/provisioning/datasources/datasources.yml'), 'utf8'));
    const uids = ds.datasources.map((d: { uid: string }) => d.uid);
    for (const file of fs.readdirSync(DASHBOARDS_DIR)) {
      const dash = JSON.parse(fs.readFileSync(path.join(DASHBOARDS_DIR, file), 'utf8'));
      for (const p of dash.panels) expect(uids).toContain(p.datasource.uid);
    }
  });
});

describe('fleet up --monitoring without Prometheus installed', () => {
  it('names the Debian package to install instead of only "missing", and shows no URL for it', () => {
    const tmp = tempDir('mcp-fleet-monitoring-missing-');
    // a PATH without prometheus (nor Grafana Loki)
    const procs = startMonitoring({ specs: [], dataDir: tmp.dir, offset: 0, env: { PATH: tmp.dir } });
    tmp.cleanup();
    expect(procs.map((p) => [p.id, p.state, p.child])).toEqual([
      ['prometheus', 'missing', undefined],
      ['loki', 'missing', undefined],
    ]);
    const row = monitoringTable(procs).split('\n')[0];
    expect(row).toMatch(
      /^prometheus\s+7028\s+missing\s+-\s+Prometheus is not installed: sudo apt-get install prometheus \(Debian\/Ubuntu\)/,
    );
    expect(row).not.toContain('http://');
  });
});

describeWithProgram('prometheus', 'prometheus', 'Prometheus against a running fleet', () => {
  let fleet: FleetHandle;
  let promUrl: string;
  const tmp = tempDir('mcp-fleet-monitoring-');

  const query = async (expr: string) => {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    return (await res.json()) as { status: string; error?: string; data?: { result: unknown[] } };
  };

  beforeAll(async () => {
    const workspace = path.join(tmp.dir, 'ws');
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, 'a.txt'), 'hello\n');
    // `fleet up --monitoring` starts Prometheus with the project's configuration, targets moved to this fleet.
    fleet = await startFleet({
      dataDir: path.join(tmp.dir, 'data'),
      workspace,
      only: SERVICES,
      args: ['--monitoring'],
      env: { FLEET_SCRAPE_INTERVAL: '1s' },
    });
    promUrl = `http://127.0.0.1:${7028 + fleet.offset}`;
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    tmp.cleanup();
  });

  it('prints Prometheus in the launcher table and says how to get Loki', () => {
    const out = fleet.output.join('');
    expect(out).toMatch(new RegExp(`prometheus\\s+${7028 + fleet.offset}\\s+healthy\\s+${promUrl}/-/healthy`));
    expect(out).toMatch(/loki\s+\d+\s+missing .*Grafana Loki not installed/);
  });

  it('answers the contract probe and scrapes every target up, with the rules loaded', async () => {
    expect((await fetch(`${promUrl}/-/healthy`)).status).toBe(200);
    await waitFor(
      'every target up',
      async () => {
        const targets = (await (await fetch(`${promUrl}/api/v1/targets`)).json()) as {
          data: { activeTargets: { health: string; labels: { job: string } }[] };
        };
        const fleetTargets = targets.data.activeTargets.filter((t) => t.labels.job === 'mcp-fleet');
        return fleetTargets.length === SERVICES.length + 1 && fleetTargets.every((t) => t.health === 'up');
      },
      30_000,
    );
    const rules = (await (await fetch(`${promUrl}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { name: string; health: string }[] }[] };
    };
    const loaded = rules.data.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual([
      'FleetBreakerOpen',
      'FleetHighErrorRatio',
      'FleetHighP99Latency',
      'FleetHistoryDropping',
      'FleetServiceDown',
      'FleetSessionQueueFull',
    ]);
  }, 60_000);

  it('has data for every Grafana panel query after a short load', async () => {
    await waitFor(
      'system_info through the gateway',
      async () => (await postJson(`${fleet.gateway}/mcp`, { tool: 'system_info', arguments: {} })).body.success === true,
      20_000,
    );
    for (let i = 0; i < 20; i++) {
      await postJson(`${fleet.gateway}/mcp`, { tool: 'system_info', arguments: {} });
      await postJson(`${fleet.gateway}/mcp`, { tool: 'file_list', arguments: { path: '.' } });
      await postJson(`${fleet.gateway}/mcp`, { tool: 'file_read', arguments: { path: 'missing.txt' } });
    }
    const queries = dashboardQueries();
    const empty: string[] = [];
    await waitFor(
      'data in every panel',
      async () => {
        empty.length = 0;
        for (const q of queries) {
          const answer = await query(q.expr);
          if (answer.status !== 'success') throw new Error(`${q.dashboard} / ${q.panel}: ${answer.error} in ${q.expr}`);
          if (!answer.data?.result.length) empty.push(`${q.dashboard} / ${q.panel}: ${q.expr}`);
        }
        return empty.length === 0;
      },
      30_000,
    ).catch(() => {
      throw new Error(`panels without data:\n${empty.join('\n')}`);
    });
    const series = await query('mcp_fleet_tool_calls_total{service="filesystem-mcp", tool="file_read"}');
    expect(series.data?.result.length).toBeGreaterThan(0);
  }, 90_000);
});
