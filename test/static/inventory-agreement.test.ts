/** Docs drift; checks don't: the inventory, launcher, compose file and Prometheus targets agree. */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import YAML from 'yaml';
import { SERVICES, collisions, downstreamServices, launchedServices, GATEWAY_ID } from '@mcp-fleet/inventory';
import {
  COMPOSE_FILE,
  COMPOSE_VAULT_FILE,
  MONITORING_PORTS,
  PROMETHEUS_FILE,
  composedServices,
  dataVolume,
  envVolume,
  logVolume,
  render,
} from '../../scripts/gen/generate';
import { planFleet } from '../../scripts/fleet/plan';

const ROOT = path.resolve(__dirname, '../..');

describe('inventory agreement', () => {
  it('has the contract ports for every service id', () => {
    const ports = Object.fromEntries(SERVICES.map((s) => [s.id, s.port]));
    expect(ports).toMatchObject({
      'mega-orchestrator': 7000,
      'filesystem-mcp': 7001,
      'git-mcp': 7002,
      'terminal-mcp': 7003,
      'database-mcp': 7004,
      'memory-mcp': 7005,
      'network-mcp': 7006,
      'system-mcp': 7007,
      'security-mcp': 7008,
      'config-mcp': 7009,
      'log-mcp': 7010,
      'research-mcp': 7011,
      'advanced-memory-mcp': 7012,
      'transcriber-mcp': 7013,
      'vision-mcp': 7014,
      'mail-mcp': 7015,
      'media-mcp': 7016,
      'toolkit-mcp-server': 7017,
      'mqtt-mcp': 7019,
      'code-graph-mcp': 7020,
      'sql-mcp-wrapper': 7024,
      'cache-mcp-wrapper': 7025,
      'vector-mcp-wrapper': 7026,
      'marketplace-mcp': 7034,
      'secrets-ui': 10000,
    });
    expect(new Set(SERVICES.map((s) => s.port)).size).toBe(SERVICES.length);
  });

  it('keeps compose.yaml and prometheus.yml exactly as generated from the inventory (run `pnpm gen`)', () => {
    for (const [file, text] of Object.entries(render())) expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });

  it('composes every built service on its port with a health check, and the real engines', () => {
    const compose = YAML.parse(fs.readFileSync(COMPOSE_FILE, 'utf8'));
    for (const s of composedServices()) {
      const svc = compose.services[s.id];
      expect(svc.ports).toEqual([`127.0.0.1:${s.port}:${s.port}`]);
      expect(svc.environment.PORT).toBe(String(s.port));
      expect(svc.environment.HOST).toBe('0.0.0.0');
      expect(svc.healthcheck.test.join(' ')).toContain(`:${s.port}/health`);
      expect(fs.existsSync(path.join(ROOT, 'services', s.id, 'src/server.ts'))).toBe(true);
    }
    for (const engine of ['postgres', 'redis', 'qdrant', 'mosquitto', 'prometheus', 'grafana', 'loki'])
      expect(compose.services[engine]).toBeDefined();
    expect(compose.services.prometheus.ports).toEqual([`127.0.0.1:${MONITORING_PORTS.prometheus}:7028`]);
    expect(compose.services.loki.ports).toEqual(['127.0.0.1:7032:7032']);
    expect(compose.services.grafana.ports).toEqual(['127.0.0.1:7031:7031']);
    for (const mount of compose.services.prometheus.volumes.concat(compose.services.promtail.volumes, compose.services.grafana.volumes)) {
      const local = mount.split(':')[0];
      if (local.startsWith('./')) expect(fs.existsSync(path.join(ROOT, local))).toBe(true);
    }
  });

  it('passes the Compose Specification linter (dclint) with no finding', () => {
    const dclint = path.join(ROOT, 'node_modules/.bin/dclint');
    const run = spawnSync(dclint, [COMPOSE_FILE, COMPOSE_VAULT_FILE, '--max-warnings', '0', '--color', 'false'], { encoding: 'utf8' });
    expect(run.stdout + run.stderr).not.toMatch(/error|warning/);
    expect(run.status).toBe(0);
  });

  it('gives every long-running container a restart policy and a healthcheck, and writes no secret into the files', () => {
    const compose = YAML.parse(fs.readFileSync(COMPOSE_FILE, 'utf8'));
    for (const [id, svc] of Object.entries<Record<string, unknown>>(compose.services)) {
      expect([id, svc.restart]).toEqual([id, 'unless-stopped']);
      if (id !== 'promtail' && id !== 'postfix') expect([id, svc.healthcheck !== undefined]).toEqual([id, true]);
    }
    // YAML 1.1 readers (older Compose, PyYAML) must read Redis's flag as the string "yes".
    expect(YAML.parse(fs.readFileSync(COMPOSE_FILE, 'utf8'), { version: '1.1' }).services.redis.command).toEqual([
      'redis-server',
      '--appendonly',
      'yes',
    ]);
    for (const file of [COMPOSE_FILE, COMPOSE_VAULT_FILE]) {
      const text = fs.readFileSync(file, 'utf8');
      expect(text).not.toMatch(/(PASSWORD|TOKEN|SECRET)(?![A-Z_]*_(FILE|URL):)[A-Z_]*: (?!\$\{)[^\s]+/);
      expect(text).not.toMatch(/:\/\/[^:/\s]+:(?!\$\{)[^@\s]+@/);
    }
    expect(compose.services.mosquitto.volumes.length).toBeGreaterThan(0);
    expect(compose.services.dovecot.profiles).toEqual(['mail']);
    const named = Object.keys(compose.volumes);
    // one shared fleet-data volume was replaced by each service's own (the next test)
    for (const v of ['postgres-data', 'redis-data', 'prometheus-data', 'grafana-data', 'loki-data']) expect(named).toContain(v);
    for (const s of composedServices()) expect(named).toEqual(expect.arrayContaining([dataVolume(s.id), logVolume(s.id)]));
  });

  it('gives each service its own data, logs and secrets exports: no volume is written by two services, the log readers read logs only', () => {
    const base = YAML.parse(fs.readFileSync(COMPOSE_FILE, 'utf8'));
    const overlay = YAML.parse(fs.readFileSync(COMPOSE_VAULT_FILE, 'utf8'));
    const declared = new Set(Object.keys({ ...base.volumes, ...overlay.volumes }));
    // every mount of a named volume, in either file: [service, volume, target, read-only]
    const mounts: [string, string, string, boolean][] = [];
    for (const file of [base, overlay])
      for (const [id, svc] of Object.entries<{ volumes?: string[] }>(file.services))
        for (const m of svc.volumes ?? []) {
          const [source, target, mode] = m.split(':');
          if (source.startsWith('.') || source.startsWith('/')) {
            // a bind mount of the checkout or its config: read-only, except none
            expect([id, m, mode]).toEqual([id, m, 'ro']);
            continue;
          }
          expect([id, source, declared.has(source)]).toEqual([id, source, true]);
          mounts.push([id, source, target, mode === 'ro']);
        }
    const writers = new Map<string, string[]>();
    for (const [id, volume, , ro] of mounts) if (!ro) writers.set(volume, [...(writers.get(volume) ?? []), id]);
    for (const [volume, ids] of writers) expect([volume, ids]).toEqual([volume, [ids[0]]]);

    const readers = ['log-mcp', GATEWAY_ID, 'promtail'];
    for (const s of composedServices()) {
      const svc = base.services[s.id];
      const own = mounts.filter(([id]) => id === s.id);
      // its DATA_DIR and its LOG_FILE's folder: its own volumes, read-write, mounted nowhere else but read-only
      expect(own.find(([, , target]) => target === svc.environment.DATA_DIR)).toEqual([s.id, dataVolume(s.id), '/data', false]);
      expect(own.find(([, , target]) => target === path.posix.dirname(svc.environment.LOG_FILE))).toEqual([
        s.id,
        logVolume(s.id),
        `/logs/${s.id}`,
        false,
      ]);
      expect(mounts.filter(([id, v]) => v === dataVolume(s.id) && id !== s.id)).toEqual([]);
      // its logs reach the readers only, read-only; every reader gets them
      const logReaders = mounts.filter(([id, v]) => v === logVolume(s.id) && id !== s.id);
      expect(logReaders.every(([, , target, ro]) => ro && target === `/logs/${s.id}`)).toBe(true);
      expect(logReaders.map(([id]) => id).sort()).toEqual(readers.filter((r) => r !== s.id).sort());
      // the secrets secrets-ui exports for it: written by secrets-ui only, read by it only, where the image reads them
      if (s.id !== 'secrets-ui') {
        expect(mounts.filter(([, v]) => v === envVolume(s.id)).sort()).toEqual(
          [
            ['secrets-ui', envVolume(s.id), `/data/secrets-ui/env/${s.id}`, false],
            [s.id, envVolume(s.id), '/data/secrets-ui/env', true],
          ].sort(),
        );
      }
      // no other service's data, logs or secrets, except the readers' logs
      const foreign = own.filter(([, v]) => !v.startsWith(`${s.id}-`));
      if (readers.includes(s.id)) expect(foreign.every(([, v, , ro]) => ro && /-logs$/.test(v))).toBe(true);
      else if (s.id === 'secrets-ui') expect(foreign.every(([, v, , ro]) => !ro && /-env$/.test(v))).toBe(true);
      else expect(foreign).toEqual([]);
    }
    expect(base.services['log-mcp'].environment.LOG_ROOTS).toBe('/logs');
    // promtail reads the same folders its config ships
    expect(fs.readFileSync(path.join(ROOT, 'monitoring/promtail/promtail.yml'), 'utf8')).toContain('__path__: /logs/*/*.log');
  });

  it('makes the image hold every folder compose mounts a volume on, owned by its user', () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'docker/Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/mkdir -p "\/logs\/\$id"/);
    expect(dockerfile).toMatch(/mkdir -p "\/data\/secrets-ui\/env\/\$id"/);
    expect(dockerfile).toMatch(/chown -R node:node \/data \/logs /);
    // the start command reads the export where each service's own export volume is mounted
    expect(dockerfile).toContain('${DATA_DIR:-/data}/secrets-ui/env/${SERVICE}.env');
  });

  it('keeps Vault in the variant B overlay, which points the secret readers at it with a mounted token file', () => {
    const base = YAML.parse(fs.readFileSync(COMPOSE_FILE, 'utf8'));
    const overlay = YAML.parse(fs.readFileSync(COMPOSE_VAULT_FILE, 'utf8'));
    expect(base.services.vault).toBeUndefined();
    expect(overlay.services.vault.healthcheck.test.join(' ')).toContain('/v1/sys/health');
    for (const s of composedServices().filter((x) => x.backends.includes('vault'))) {
      expect(overlay.services[s.id].environment.VAULT_ADDR).toBe('http://vault:8200');
      expect(overlay.services[s.id].secrets).toEqual(['vault_token']);
    }
    expect(fs.existsSync(path.join(ROOT, 'monitoring/vault/vault.hcl'))).toBe(true);
  });

  it('builds images that run as an unprivileged user with a healthcheck', () => {
    const dockerfile = fs.readFileSync(path.join(ROOT, 'docker/Dockerfile'), 'utf8');
    const users = [...dockerfile.matchAll(/^USER\s+(\S+)/gm)].map((m) => m[1]);
    expect(users.at(-1)).toBe('node');
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/health/m);
  });

  it('scrapes exactly the composed services', () => {
    const prom = YAML.parse(fs.readFileSync(PROMETHEUS_FILE, 'utf8'));
    const targets = prom.scrape_configs[0].static_configs.map((c: { targets: string[] }) => c.targets[0]).sort();
    expect(targets).toEqual(
      composedServices()
        .map((s) => `${s.id}:${s.port}`)
        .sort(),
    );
  });

  it('has the launcher start every built service plus the gateway on inventory ports', () => {
    const plan = planFleet({ env: {} });
    expect(plan.specs.map((s) => s.entry.id).sort()).toEqual([...launchedServices().map((s) => s.id), GATEWAY_ID].sort());
    expect(plan.specs.map((s) => s.entry.id)).toContain('coordinator');
    for (const spec of plan.specs) {
      expect(spec.port).toBe(spec.entry.port);
      expect(fs.existsSync(spec.script)).toBe(true);
    }
    const moved = planFleet({ env: { FLEET_PORT_OFFSET: '100', GIT_MCP_PORT: '9999' } });
    expect(moved.specs.find((s) => s.entry.id === 'system-mcp')!.port).toBe(7107);
    expect(moved.specs.find((s) => s.entry.id === 'git-mcp')!.port).toBe(9999);
    expect(moved.specs[0].env.GIT_MCP_PORT).toBe('9999');
    // extra ports move with the offset too (mqtt-mcp's embedded broker), unless set
    expect(moved.specs.find((s) => s.entry.id === 'mqtt-mcp')!.env.MQTT_EMBEDDED_PORT).toBe('7219');
    expect(planFleet({ env: { MQTT_EMBEDDED_PORT: '1999' } }).specs.find((s) => s.entry.id === 'mqtt-mcp')!.env.MQTT_EMBEDDED_PORT).toBe(
      '1999',
    );
  });

  it('runs the coordinator surface (8020) beside the gateway, which it calls, not behind it', () => {
    expect(downstreamServices().map((s) => s.id)).not.toContain('coordinator');
    expect(collisions().get('file_read')).toBeUndefined();
    const compose = YAML.parse(fs.readFileSync(COMPOSE_FILE, 'utf8'));
    expect(compose.services.coordinator.depends_on).toContain(GATEWAY_ID);
    expect(compose.services[GATEWAY_ID].depends_on).not.toContain('coordinator');
    expect(compose.services.coordinator.environment.MEGA_ORCHESTRATOR_URL).toBe('http://mega-orchestrator:7000');
    const only = planFleet({ env: {}, only: ['coordinator', 'filesystem-mcp'] });
    expect(only.specs.map((s) => s.entry.id).sort()).toEqual(['coordinator', 'filesystem-mcp', GATEWAY_ID]);
    expect(only.specs.find((s) => s.entry.id === GATEWAY_ID)!.env.FLEET_SERVICES).toBe('filesystem-mcp');
  });

  it('names a primary owner for every colliding tool name', () => {
    const c = collisions();
    expect(c.get('system_info')).toEqual({ primary: 'system-mcp', owners: ['terminal-mcp', 'system-mcp'] });
    expect(c.get('store_memory')?.primary).toBe('memory-mcp');
    expect(c.get('search_memories')?.primary).toBe('memory-mcp');
  });
});
