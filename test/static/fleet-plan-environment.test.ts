/**
 * The launcher's plan gives each service only the variables its configuration schema declares, the
 * runtime's few, and the names it reads dynamically (issue 27, item 4). The declared names are read
 * here through zod's JSON Schema (as `pnpm gen` documents them), not through the launcher's code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { SERVICES, envPrefix, type Env } from '@mcp-fleet/inventory';
import { tempDir } from '@mcp-fleet/testing';
import { isSecretName } from '../../packages/kit/src/logger';
import { planFleet, REPO_ROOT } from '../../scripts/fleet/plan';
import { configSource } from '../../scripts/build/stamp';
import { RUNTIME_NAMES, RUNTIME_PREFIXES, runtimeEnv } from '../../scripts/fleet/service-env';
import { GIT_ENV_PASSTHROUGH } from '../../services/git-mcp/src/config';
import { CHILD_ENV_NAMES } from '../../services/terminal-mcp/src/config';

function declared(id: string): string[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { configSchema } = require(configSource(id) ?? path.join(REPO_ROOT, 'services', id, 'src', 'config.ts')) as {
    configSchema: z.ZodType;
  };
  return Object.keys((z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }) as { properties: object }).properties);
}

const SECRETS: Env = {
  JWT_SECRET: 'j'.repeat(40),
  DATABASE_URL: 'postgres://fleet:hunter2@127.0.0.1:5432/fleet',
  OPENAI_API_KEY: 'sk-openai',
  SECRETS_UI_ADMIN_TOKEN: 'admin-token-0123456789',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  GITHUB_TOKEN: 'ghp_token',
  my_lowercase_api_token: 'lower',
  PGPASSWORD: 'pg-password',
  REMOTE_TOKEN: 'remote-token',
  FILE_TOKEN: 'file-token',
  SHOWN_TO_COMMANDS: 'visible',
};

describe('the environment each service is started with', () => {
  const tmp = tempDir('fleet-plan-env-');
  afterAll(() => tmp.cleanup());
  const serversFile = path.join(tmp.dir, 'mcp-servers.json');
  fs.writeFileSync(serversFile, JSON.stringify({ mcpServers: { files: { command: 'x', env: { T: '${FILE_TOKEN}' } } } }));
  const env: Env = {
    PATH: '/usr/bin:/bin',
    HOME: '/home/fleet',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TZ: 'UTC',
    ...SECRETS,
    FLEET_DATA_DIR: path.join(tmp.dir, 'data'),
    MCP_SERVERS: JSON.stringify({ remote: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${REMOTE_TOKEN}' } } }),
    MCP_SERVERS_FILE: serversFile,
    TERMINAL_ENV_PASSTHROUGH: 'SHOWN_TO_COMMANDS',
  };
  const { specs } = planFleet({ env });
  const holders = (name: string) =>
    specs
      .filter((s) => s.env[name] !== undefined)
      .map((s) => s.entry.id)
      .sort();

  it('holds nothing but declared, runtime and address-book names, plus the few read dynamically', () => {
    const addresses = SERVICES.flatMap((s) => [`${envPrefix(s.id)}_PORT`, `${envPrefix(s.id)}_URL`]);
    const dynamic: Record<string, string[]> = {
      'mega-orchestrator': ['REMOTE_TOKEN', 'FILE_TOKEN', ...declared('toolkit-mcp-server')],
      'terminal-mcp': ['SHOWN_TO_COMMANDS'],
      'git-mcp': ['SSH_AUTH_SOCK'],
    };
    expect(specs.length).toBeGreaterThan(10);
    for (const spec of specs) {
      const allowed = new Set([...declared(spec.entry.id), ...RUNTIME_NAMES, ...addresses, ...(dynamic[spec.entry.id] ?? [])]);
      const extra = Object.keys(spec.env).filter((n) => !allowed.has(n) && !RUNTIME_PREFIXES.some((p) => n.startsWith(p)));
      expect({ id: spec.entry.id, extra }).toEqual({ id: spec.entry.id, extra: [] });
      // and every service still gets what it runs on
      expect(spec.env).toMatchObject({ PATH: '/usr/bin:/bin', HOME: '/home/fleet', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TZ: 'UTC' });
    }
  });

  it('passes runtime names that hold no credential, every one of them', () => {
    expect([...RUNTIME_NAMES, ...RUNTIME_PREFIXES].filter((n) => isSecretName(n))).toEqual([]);
    expect(RUNTIME_PREFIXES).toEqual(['LC_', 'OTEL_']);
    // what Prometheus and Loki (fleet up --monitoring) are started with
    expect(runtimeEnv(env)).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/fleet', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TZ: 'UTC' });
  });

  it('gives JWT_SECRET to security-mcp and marketplace-mcp and nobody else', () => {
    expect(holders('JWT_SECRET')).toEqual(['marketplace-mcp', 'security-mcp']);
  });

  it('gives a database URL, an admin token and the gateway’s references only to the services that read them', () => {
    expect(holders('DATABASE_URL')).toEqual(['database-mcp', 'memory-mcp', 'sql-mcp-wrapper']);
    expect(holders('SECRETS_UI_ADMIN_TOKEN')).toEqual(['secrets-ui']);
    expect(holders('REMOTE_TOKEN')).toEqual(['mega-orchestrator']);
    expect(holders('FILE_TOKEN')).toEqual(['mega-orchestrator']);
    expect(holders('SHOWN_TO_COMMANDS')).toEqual(['terminal-mcp']);
  });

  it('gives secrets no schema declares to nobody, whatever their spelling', () => {
    for (const name of ['OPENAI_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'my_lowercase_api_token', 'PGPASSWORD'])
      expect({ name, holders: holders(name) }).toEqual({ name, holders: [] });
  });

  it('still gives every service the ports of the whole fleet and what the launcher sets', () => {
    for (const spec of specs) {
      for (const s of SERVICES) expect(spec.env[`${envPrefix(s.id)}_PORT`]).toBe(String(s.port));
      expect(spec.env).toMatchObject({
        PORT: String(spec.port),
        HOST: '127.0.0.1',
        DATA_DIR: path.join(tmp.dir, 'data'),
        LOG_FILE: spec.logFile,
      });
    }
    expect(specs.find((s) => s.entry.id === 'log-mcp')!.env.LOG_ROOTS).toBe(path.join(tmp.dir, 'data', 'logs'));
    expect(specs.find((s) => s.entry.id === 'filesystem-mcp')!.env.WORKSPACE_ROOTS).toBe(REPO_ROOT);
  });

  it('keeps the names the services copy into their children (drift between the launcher and git-mcp / terminal-mcp)', () => {
    const full = planFleet({ env: { ...env, SSH_AUTH_SOCK: '/run/agent.sock', TERM: 'xterm' } }).specs;
    const of = (id: string) => full.find((s) => s.entry.id === id)!.env;
    for (const name of GIT_ENV_PASSTHROUGH) expect({ name, value: of('git-mcp')[name] }).toEqual({ name, value: expect.any(String) });
    for (const name of CHILD_ENV_NAMES) expect({ name, value: of('terminal-mcp')[name] }).toEqual({ name, value: expect.any(String) });
    expect(full.filter((s) => s.env.SSH_AUTH_SOCK !== undefined).map((s) => s.entry.id)).toEqual(['git-mcp']);
  });

  it('filters the runtime secrets secrets-ui exported for a service through the same names', () => {
    const exportDir = path.join(tmp.dir, 'data', 'secrets-ui', 'env');
    fs.mkdirSync(exportDir, { recursive: true });
    fs.writeFileSync(path.join(exportDir, 'system-mcp.env'), 'LOG_LEVEL=debug\nAWS_SECRET_ACCESS_KEY=from-the-file\n');
    const system = planFleet({ env }).specs.find((s) => s.entry.id === 'system-mcp')!;
    expect(system.env.LOG_LEVEL).toBe('debug');
    expect(system.env.AWS_SECRET_ACCESS_KEY).toBeUndefined();
  });
});
