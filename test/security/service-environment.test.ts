/**
 * Least privilege between services (issue 27, item 4), with real processes: services started by
 * the launcher's own code, with secret-looking variables in its environment, each hold only the
 * ones their configuration declares (read back from /proc/<pid>/environ, what another process of
 * the same user could read).
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { tempDir } from '@mcp-fleet/testing';
import { Launcher } from '../../scripts/fleet/launcher';
import { planFleet } from '../../scripts/fleet/plan';
import { freeOffset } from '../support/fleet-process';

const SECRETS = {
  JWT_SECRET: 'jwt-secret-0123456789-0123456789-0123456789',
  DATABASE_URL: 'postgres://fleet:hunter2@127.0.0.1:5432/fleet',
  OPENAI_API_KEY: 'sk-openai-not-for-services',
  SECRETS_UI_ADMIN_TOKEN: 'secrets-ui-admin-token-0123456789',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-access-key',
  GITHUB_TOKEN: 'ghp_not_for_services',
  my_lowercase_api_token: 'lowercase-secret',
  REMOTE_MCP_TOKEN: 'only-the-gateway-sends-this',
  SHOWN_TO_COMMANDS: 'terminal-passthrough-value',
};

/** Who holds each secret, by service id; every other started service must hold none. */
const EXPECTED: Record<keyof typeof SECRETS, string[]> = {
  JWT_SECRET: ['marketplace-mcp', 'security-mcp'],
  DATABASE_URL: [],
  OPENAI_API_KEY: [],
  SECRETS_UI_ADMIN_TOKEN: ['secrets-ui'],
  AWS_SECRET_ACCESS_KEY: [],
  GITHUB_TOKEN: [],
  my_lowercase_api_token: [],
  REMOTE_MCP_TOKEN: ['mega-orchestrator'],
  SHOWN_TO_COMMANDS: ['terminal-mcp'],
};

function environ(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)) {
    const eq = entry.indexOf('=');
    out[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return out;
}

describe('each service process holds only its own variables', () => {
  const tmp = tempDir('service-env-');
  const workspace = path.join(tmp.dir, 'ws');
  fs.mkdirSync(workspace);
  const out = new PassThrough();
  const log: string[] = [];
  out.on('data', (b: Buffer) => log.push(b.toString()));
  const launcher = new Launcher({ startTimeoutMs: 60_000, stopTimeoutMs: 5_000, color: false, out, nodeArgs: ['--import', 'tsx'] });
  let environs: Record<string, Record<string, string>> = {};

  beforeAll(async () => {
    const plan = planFleet({
      env: {
        ...process.env,
        ...SECRETS,
        FLEET_PORT_OFFSET: String(await freeOffset()),
        FLEET_DATA_DIR: path.join(tmp.dir, 'data'),
        WORKSPACE_ROOTS: workspace,
        LOG_LEVEL: 'warn',
        STDIO_SERVERS: 'false',
        HEALTH_POLL_MS: '60000',
        TERMINAL_ENV_PASSTHROUGH: 'SHOWN_TO_COMMANDS',
        // a remote MCP server whose header the gateway fills from its environment; disabled, so nothing is contacted
        MCP_SERVERS: JSON.stringify({
          remote: { url: 'https://mcp.example.invalid/mcp', headers: { Authorization: 'Bearer ${REMOTE_MCP_TOKEN}' }, disabled: true },
        }),
      },
      only: ['security-mcp', 'marketplace-mcp', 'terminal-mcp', 'secrets-ui'],
    });
    launcher.start(plan.specs);
    await launcher.waitHealthy();
    environs = Object.fromEntries(launcher.state().map((s) => [s.id, environ(s.pid!)]));
  }, 90_000);

  afterAll(async () => {
    await launcher.stop();
    tmp.cleanup();
  });

  it('started every service healthy (the legitimate use still works)', () => {
    const states = Object.fromEntries(launcher.state().map((s) => [s.id, s.state]));
    expect({ states, log: Object.values(states).every((s) => s === 'healthy') ? '' : log.join('').slice(-3000) }).toEqual({
      states: {
        'security-mcp': 'healthy',
        'marketplace-mcp': 'healthy',
        'terminal-mcp': 'healthy',
        'secrets-ui': 'healthy',
        'mega-orchestrator': 'healthy',
      },
      log: '',
    });
  });

  it.each(Object.keys(SECRETS) as (keyof typeof SECRETS)[])('%s is held by exactly the services that declare or read it', (name) => {
    const holders = Object.entries(environs)
      .filter(([, env]) => env[name] !== undefined)
      .map(([id]) => id)
      .sort();
    expect(holders).toEqual(EXPECTED[name]);
    for (const id of holders) expect(environs[id][name]).toBe(SECRETS[name]);
  });

  it('no secret value hides under another name in any process', () => {
    for (const [id, env] of Object.entries(environs)) {
      const leaked = Object.entries(SECRETS)
        .filter(([name]) => !EXPECTED[name as keyof typeof SECRETS].includes(id))
        .filter(([, value]) => Object.values(env).some((v) => v.includes(value)))
        .map(([name]) => name);
      expect({ id, leaked }).toEqual({ id, leaked: [] });
    }
  });

  it('still gives every process what it runs on and the fleet’s ports', () => {
    for (const env of Object.values(environs)) {
      expect(env.PATH).toBe(process.env.PATH);
      expect(env.HOME).toBe(process.env.HOME);
      expect(env.DATA_DIR).toBe(path.join(tmp.dir, 'data'));
      expect(env.SECURITY_MCP_PORT).toMatch(/^\d+$/);
    }
  });
});
