/**
 * Secrets out of the workspace (issue 27, item 3a): the fleet's state (DATA_DIR with the secrets
 * UI's store, admin token, exported env files and logs; API keys; the gateway's MCP server file)
 * defaults outside every workspace root, and the launcher refuses any spelling of a state path
 * that overlaps a root: equal, inside, containing, through a symlink, with a trailing slash, `..`,
 * `//`, or relative.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { baseEnvSchema, defaultDataDir } from '../../packages/kit/src/config';
import { overlap, realPathOf } from '../../scripts/fleet/data-dir';
import { planFleet, REPO_ROOT } from '../../scripts/fleet/plan';

const tmp = tempDir('fleet-data-dir-');
afterAll(() => tmp.cleanup());
// real paths throughout, so that messages can be compared even where /tmp is a symlink
const base = fs.realpathSync(tmp.dir);
const ws = path.join(base, 'ws');
const other = path.join(base, 'other');
const state = path.join(base, 'state');
for (const d of [path.join(ws, 'a', 'b'), other, state]) fs.mkdirSync(d, { recursive: true });
fs.symlinkSync(ws, path.join(base, 'ws-link'));
fs.symlinkSync(path.join(ws, 'a', 'b'), path.join(base, 'deep-link'));
fs.symlinkSync(state, path.join(base, 'state-link'));

const plan = (env: Record<string, string>) => planFleet({ env: { HOME: path.join(base, 'home'), ...env } });
const refused = (env: Record<string, string>) => {
  try {
    plan(env);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`not refused: ${JSON.stringify(env)}`);
};

describe('DATA_DIR defaults outside every workspace root', () => {
  it('is $XDG_STATE_HOME/mcp-fleet, else ~/.local/state/mcp-fleet, in the launcher and the kit alike', () => {
    expect(plan({ XDG_STATE_HOME: state, WORKSPACE_ROOTS: ws }).dataDir).toBe(path.join(state, 'mcp-fleet'));
    expect(plan({ WORKSPACE_ROOTS: ws }).dataDir).toBe(path.join(base, 'home', '.local', 'state', 'mcp-fleet'));
    // a relative XDG_STATE_HOME is ignored, as the XDG spec says
    expect(plan({ XDG_STATE_HOME: 'state', WORKSPACE_ROOTS: ws }).dataDir).toBe(path.join(base, 'home', '.local', 'state', 'mcp-fleet'));
    for (const env of [{ XDG_STATE_HOME: state }, { HOME: path.join(base, 'home') }] as Record<string, string>[])
      expect(plan({ WORKSPACE_ROOTS: ws, ...env }).dataDir).toBe(defaultDataDir({ HOME: path.join(base, 'home'), ...env }));
    // a service started on its own (no launcher) defaults to the same place
    expect(baseEnvSchema.parse({}).DATA_DIR).toBe(defaultDataDir(process.env));
  });

  it('is outside the default workspace root (the checkout)', () => {
    const { dataDir, specs } = planFleet({ env: { XDG_STATE_HOME: state } });
    expect(specs.find((s) => s.entry.id === 'filesystem-mcp')!.env.WORKSPACE_ROOTS).toBe(REPO_ROOT);
    expect(overlap(realPathOf(dataDir), realPathOf(REPO_ROOT))).toBeUndefined();
  });

  it('still follows FLEET_DATA_DIR and DATA_DIR (FLEET_DATA_DIR first; empty is unset)', () => {
    expect(plan({ FLEET_DATA_DIR: other, DATA_DIR: state, WORKSPACE_ROOTS: ws }).dataDir).toBe(other);
    expect(plan({ DATA_DIR: other, WORKSPACE_ROOTS: ws }).dataDir).toBe(other);
    expect(plan({ FLEET_DATA_DIR: '', XDG_STATE_HOME: state, WORKSPACE_ROOTS: ws }).dataDir).toBe(path.join(state, 'mcp-fleet'));
  });
});

describe('the launcher refuses a DATA_DIR that overlaps a workspace root', () => {
  const spellings: [string, Record<string, string>][] = [
    ['equal', { FLEET_DATA_DIR: ws, WORKSPACE_ROOTS: ws }],
    ['inside', { FLEET_DATA_DIR: path.join(ws, '.data'), WORKSPACE_ROOTS: ws }],
    ['inside, as DATA_DIR', { DATA_DIR: path.join(ws, '.data'), WORKSPACE_ROOTS: ws }],
    ['containing', { FLEET_DATA_DIR: base, WORKSPACE_ROOTS: ws }],
    ['through a symlink to the root', { FLEET_DATA_DIR: path.join(base, 'ws-link', 'data'), WORKSPACE_ROOTS: ws }],
    ['a symlinked root containing it', { FLEET_DATA_DIR: path.join(state, 'fleet'), WORKSPACE_ROOTS: path.join(base, 'state-link') }],
    // deep-link/.. is ws/a to the kernel and the checkout's base to code that normalises first: both are checked
    ['`..` after a symlink in the root', { FLEET_DATA_DIR: path.join(other, 'data'), WORKSPACE_ROOTS: `${base}/deep-link/..` }],
    ['trailing slash', { FLEET_DATA_DIR: `${ws}/`, WORKSPACE_ROOTS: ws }],
    ['trailing slash on the root', { FLEET_DATA_DIR: path.join(ws, '.data'), WORKSPACE_ROOTS: `${ws}/` }],
    ['double slashes and dots', { FLEET_DATA_DIR: `${ws}//./a/../.data`, WORKSPACE_ROOTS: ws }],
    ['`..` out and back in', { FLEET_DATA_DIR: `${other}/../ws/data/`, WORKSPACE_ROOTS: ws }],
    ['relative path', { FLEET_DATA_DIR: path.relative(process.cwd(), path.join(ws, '.data')), WORKSPACE_ROOTS: ws }],
    ['relative root', { FLEET_DATA_DIR: path.join(ws, '.data'), WORKSPACE_ROOTS: path.relative(process.cwd(), ws) }],
    ['the second of several roots', { FLEET_DATA_DIR: path.join(ws, 'a', 'state'), WORKSPACE_ROOTS: `${other}, ${ws}` }],
    ['the XDG default under a root', { XDG_STATE_HOME: path.join(ws, '.state'), WORKSPACE_ROOTS: ws }],
  ];
  it.each(spellings)('%s', (_name, env) => {
    const message = refused(env);
    expect(message).toMatch(/DATA_DIR \(\/.+\) (is|is inside|contains) the workspace root \/.+ \(WORKSPACE_ROOTS\)/);
    // it says what to set
    expect(message).toContain('set FLEET_DATA_DIR (or DATA_DIR) to a directory outside every root');
  });

  it('names the real paths it compared', () => {
    expect(refused({ FLEET_DATA_DIR: path.join(base, 'ws-link', 'data'), WORKSPACE_ROOTS: ws })).toContain(
      `DATA_DIR (${path.join(ws, 'data')}) is inside the workspace root ${ws}`,
    );
    expect(refused({ FLEET_DATA_DIR: base, WORKSPACE_ROOTS: ws })).toContain(`DATA_DIR (${base}) contains the workspace root ${ws}`);
  });

  it('refuses the other state paths under a root: exported secrets, token files, API keys, MCP server file', () => {
    const data = { FLEET_DATA_DIR: path.join(other, 'data'), WORKSPACE_ROOTS: ws };
    for (const name of [
      'SECRETS_EXPORT_DIR',
      'SECRETS_UI_ADMIN_TOKEN_FILE',
      'VAULT_TOKEN_FILE',
      'API_KEYS_FILE',
      'MCP_SERVERS_FILE',
      'SESSION_DB',
    ])
      expect(refused({ ...data, [name]: path.join(base, 'ws-link', 'a', 'x') })).toContain(`${name} of `);
    // `..` after a symlink, as the kernel opens it: deep-link/../keys.json is ws/a/keys.json
    expect(refused({ ...data, API_KEYS_FILE: `${base}/deep-link/../keys.json` })).toContain(
      `API_KEYS_FILE of mega-orchestrator (${path.join(ws, 'a', 'keys.json')}) is inside the workspace root ${ws}`,
    );
    // also when an exported secrets file sets one for a service
    const exportDir = path.join(other, 'data', 'secrets-ui', 'env');
    fs.mkdirSync(exportDir, { recursive: true });
    fs.writeFileSync(path.join(exportDir, 'mega-orchestrator.env'), `API_KEYS_FILE=${path.join(ws, 'keys.json')}\n`);
    try {
      expect(refused(data)).toContain(`API_KEYS_FILE of mega-orchestrator (${path.join(ws, 'keys.json')}) is inside the workspace root`);
    } finally {
      fs.rmSync(exportDir, { recursive: true });
    }
  });

  it('refuses log roots that reach the state beyond the log directory', () => {
    const dataDir = path.join(other, 'data');
    const env = { FLEET_DATA_DIR: dataDir, WORKSPACE_ROOTS: ws };
    expect(refused({ ...env, LOG_ROOTS: dataDir })).toContain('(LOG_ROOTS)');
    expect(refused({ ...env, LOG_ROOTS: `${path.join(dataDir, 'logs')},${other}` })).toContain(
      `is inside the log root ${other} (LOG_ROOTS)`,
    );
    expect(refused({ ...env, LOG_ROOTS: path.join(dataDir, 'secrets-ui') })).toContain('(LOG_ROOTS)');
    expect(plan({ ...env, LOG_ROOTS: path.join(dataDir, 'logs') }).dataDir).toBe(dataDir);
    expect(plan({ ...env, LOG_ROOTS: path.join(dataDir, 'logs', 'old') }).dataDir).toBe(dataDir);
  });

  it('accepts state beside the roots, including a name that merely starts like a root', () => {
    expect(plan({ FLEET_DATA_DIR: `${ws}-data`, WORKSPACE_ROOTS: ws }).dataDir).toBe(`${ws}-data`);
    expect(plan({ FLEET_DATA_DIR: path.join(other, 'not', 'yet', 'made'), WORKSPACE_ROOTS: ws }).dataDir).toBe(
      path.join(other, 'not', 'yet', 'made'),
    );
    expect(
      plan({ FLEET_DATA_DIR: other, WORKSPACE_ROOTS: `${ws},${path.join(base, 'deep-link')}`, API_KEYS_FILE: path.join(other, 'k.json') })
        .dataDir,
    ).toBe(other);
  });

  it('`fleet up` exits with the reason and creates nothing inside the root', () => {
    const inside = path.join(ws, '.data');
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'scripts/fleet/cli.ts'), 'up', '--only', 'system-mcp'],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH,
          HOME: path.join(base, 'home'),
          FLEET_DATA_DIR: inside,
          WORKSPACE_ROOTS: ws,
          FLEET_PORT_OFFSET: '29000',
        },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`fleet: the fleet's state overlaps a directory its tools serve`);
    expect(run.stderr).toContain(`DATA_DIR (${inside}) is inside the workspace root ${ws}`);
    expect(fs.existsSync(inside)).toBe(false);
  });
});
