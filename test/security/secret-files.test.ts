/**
 * Secret files in the workspace (issue 27, 3b): `.env` files, private keys, credential files and
 * the fleet's own DATA_DIR lie inside the default workspace root, and a tricked agent asks the file,
 * config, log and code-graph tools for them in every spelling it can think of. Each must answer 403
 * FORBIDDEN naming the setting that opens it, write nothing, and no answer (list, search, analysis,
 * log search, code graph) may carry a secret's content; the legitimate files beside them stay
 * readable and writable. Real services (createApp) over real files in a temporary directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ServiceApp } from '@mcp-fleet/kit';
import { tempDir, testConfig, testLogger, toolCaller } from '@mcp-fleet/testing';
import { createApp as createCodeGraph } from '../../services/code-graph-mcp/src/app';
import { configSchema as codeGraphSchema } from '../../services/code-graph-mcp/src/config';
import { createApp as createConfig } from '../../services/config-mcp/src/app';
import { configSchema as configMcpSchema } from '../../services/config-mcp/src/config';
import { createApp as createFilesystem } from '../../services/filesystem-mcp/src/app';
import { configSchema as filesystemSchema } from '../../services/filesystem-mcp/src/config';
import { createApp as createLog } from '../../services/log-mcp/src/app';
import { configSchema as logSchema } from '../../services/log-mcp/src/config';

const MARK = 'SECRET-MARKER';
let tmp: ReturnType<typeof tempDir>;
let root: string;
let dataDir: string;
const services: ServiceApp[] = [];

/** Every secret's content carries MARK; no answer of any tool may. */
const SECRETS: Record<string, string> = {
  '.env': `DB_PASSWORD=${MARK}-env\n`,
  '.env.production': `API_TOKEN=${MARK}-prod\n`,
  'sub/.env.local': `LOCAL=${MARK}-local\n`,
  '.ENV': `UPPER=${MARK}-upper\n`,
  id_rsa: `-----BEGIN OPENSSH PRIVATE KEY-----\n${MARK}-rsa\n`,
  'keys/deploy.pem': `-----BEGIN PRIVATE KEY-----\n${MARK}-pem\n`,
  'keys/Deploy.KEY': `${MARK}-key\n`,
  'x/.git-credentials': `https://user:${MARK}-git@example.com\n`,
  '.netrc': `machine example.com password ${MARK}-netrc\n`,
  'a/.env/inside.txt': `${MARK}-in-env-dir\n`,
  'fleet-data/secrets-ui/store-token': `${MARK}-token\n`,
  'fleet-data/secrets-ui/env/terminal-mcp.env': `TERMINAL_ALLOWLIST=${MARK}-export\n`,
  'fleet-data/fleet.json': `{"pid": 1, "note": "${MARK}-state"}\n`,
  'fleet-data/logs/gateway.log': `{"level":"error","message":"${MARK}-log"}\n`,
  'fleet-data/plugins/evil.py': `def ${MARK.replace('-', '_').toLowerCase()}():\n    pass\n`,
  'custom/keys.json': `{"key": "${MARK}-custom"}\n`,
};

/** Files beside them that every tool must still serve. */
const LEGIT: Record<string, string> = {
  '.env.example': 'DB_PASSWORD=change-me\n',
  'plain/readme.txt': 'hello from the workspace\n',
  'plain/app.log': '{"level":"info","message":"hello log"}\n',
  'plain/config.json': '{"name": "svc"}\n',
  'pkg/__init__.py': '',
  'pkg/mod.py': 'def visible_function():\n    pass\n',
};

function write(files: Record<string, string>) {
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
}

let fsCall: ReturnType<typeof toolCaller>;
let configCall: ReturnType<typeof toolCaller>;
let logCall: ReturnType<typeof toolCaller>;
let graphCall: ReturnType<typeof toolCaller>;

/** The environment every service gets: the root, DATA_DIR inside it (as `./fleet up` had it), one extra SECRET_PATHS entry. */
const env = () => ({ ...testConfig, WORKSPACE_ROOTS: root, DATA_DIR: dataDir, SECRET_PATHS: path.join(root, 'custom', 'keys.json') });

beforeAll(async () => {
  tmp = tempDir('secret-files-');
  root = path.join(tmp.dir, 'ws');
  dataDir = path.join(root, 'fleet-data');
  write(SECRETS);
  write(LEGIT);
  fs.symlinkSync('.env', path.join(root, 'notes.txt'));
  fs.symlinkSync('fleet-data', path.join(root, 'datalink'));
  fs.symlinkSync(path.join(root, 'fleet-data', 'secrets-ui', 'env'), path.join(root, 'plain', 'exports'));

  const logger = testLogger();
  const fsApp = await createFilesystem({ config: filesystemSchema.parse(env()), logger, defaultMetrics: false });
  const configApp = createConfig({ config: configMcpSchema.parse(env()), logger, environment: {} });
  const logApp = createLog({ config: logSchema.parse({ ...env(), LOG_ROOTS: root }), logger });
  const graphApp = await createCodeGraph({ config: codeGraphSchema.parse(env()), logger, defaultMetrics: false });
  services.push(fsApp, configApp, logApp, graphApp);
  fsCall = toolCaller(fsApp.app);
  configCall = toolCaller(configApp.app);
  logCall = toolCaller(logApp.app);
  graphCall = toolCaller(graphApp.app);
});

afterAll(async () => {
  for (const s of services) await s.close();
  tmp.cleanup();
});

/** Every spelling of a secret path an agent might try, with what the refusal must name. */
const NAME_SETTING = /ALLOW_SECRET_FILES|SECRET_FILES/;
const STORE_SETTING = /DATA_DIR|SECRET_PATHS/;
const spellings = (): [string, RegExp][] => [
  ['.env', NAME_SETTING],
  ['./.env', NAME_SETTING],
  ['.//.env', NAME_SETTING],
  [`${root}//.env`, NAME_SETTING],
  ['.ENV', NAME_SETTING],
  ['.Env', NAME_SETTING],
  ['.env.production', NAME_SETTING],
  ['sub/.env.local', NAME_SETTING],
  ['sub//.env.local', NAME_SETTING],
  ['notes.txt', NAME_SETTING], // a symlink to .env
  ['id_rsa', NAME_SETTING],
  ['ID_RSA', NAME_SETTING],
  ['keys/deploy.pem', NAME_SETTING],
  ['keys/Deploy.KEY', NAME_SETTING],
  ['x/.git-credentials', NAME_SETTING],
  ['.netrc', NAME_SETTING],
  ['a/.env/inside.txt', NAME_SETTING],
  ['fleet-data/secrets-ui/store-token', STORE_SETTING],
  ['fleet-data/secrets-ui/env/terminal-mcp.env', STORE_SETTING],
  ['fleet-data/fleet.json', STORE_SETTING],
  ['datalink/secrets-ui/store-token', STORE_SETTING], // through a symlinked directory into DATA_DIR
  ['datalink/fleet.json', STORE_SETTING],
  ['plain/exports/terminal-mcp.env', STORE_SETTING],
  ['custom/keys.json', STORE_SETTING],
];

function expectForbidden(res: { status: number; body: { code?: string; error?: string } }, setting: RegExp, what: string) {
  expect({ what, status: res.status, code: res.body.code }).toEqual({ what, status: 403, code: 'FORBIDDEN' });
  expect(res.body.error).toMatch(setting);
  expect(JSON.stringify(res.body)).not.toContain(MARK);
}

const snapshot = () => Object.fromEntries(Object.keys(SECRETS).map((rel) => [rel, fs.readFileSync(path.join(root, rel), 'utf8')]));

describe('filesystem-mcp', () => {
  it('refuses to read a secret file in every spelling, and reads the files beside them', async () => {
    for (const [p, setting] of spellings()) expectForbidden(await fsCall('file_read', { path: p }), setting, p);
    expect((await fsCall('file_read', { path: '.env.example' }).expect(200)).body.result.content).toBe(LEGIT['.env.example']);
    expect((await fsCall('file_read', { path: 'plain/readme.txt' }).expect(200)).body.result.content).toBe(LEGIT['plain/readme.txt']);
  });

  it('refuses to write, create or overwrite a secret file, in every spelling', async () => {
    const before = snapshot();
    for (const [p, setting] of spellings()) {
      for (const mode of ['overwrite', 'append', 'create']) {
        expectForbidden(await fsCall('file_write', { path: p, content: 'TERMINAL_ALLOWLIST=*\n', mode }), setting, `${mode} ${p}`);
      }
    }
    for (const p of ['new/.env', '.env.local', 'deep/er/id_ed25519', 'fleet-data/secrets-ui/env/new.env', 'datalink/planted.txt']) {
      expectForbidden(await fsCall('file_write', { path: p, content: 'x', createDirs: true }), /SECRET_FILES|DATA_DIR/, p);
      expect(fs.existsSync(path.join(root, p))).toBe(false);
    }
    expect(fs.existsSync(path.join(root, 'new'))).toBe(false);
    expect(fs.existsSync(path.join(root, 'deep'))).toBe(false);
    expect(snapshot()).toEqual(before);
    await fsCall('file_write', { path: 'plain/new.txt', content: 'fine' }).expect(200);
    expect(fs.readFileSync(path.join(root, 'plain/new.txt'), 'utf8')).toBe('fine');
  });

  it('lists secret files by name only, marked, and never enters secret directories or DATA_DIR', async () => {
    const top = (await fsCall('file_list', { path: '.', includeHidden: true, limit: 500 }).expect(200)).body.result.entries;
    const byName = Object.fromEntries(top.map((e: { name: string }) => [e.name, e]));
    for (const name of ['.env', '.ENV', '.env.production', 'id_rsa', '.netrc', 'fleet-data']) {
      expect(byName[name]).toMatchObject({ secret: true, size: null, modifiedAt: null });
    }
    expect(byName['.env.example'].secret).toBeUndefined();
    expect(byName['notes.txt']).toMatchObject({ type: 'symlink', targetStatus: 'secret' });
    expect(byName['datalink']).toMatchObject({ type: 'symlink', targetStatus: 'secret' });

    const all = await fsCall('file_list', { path: '.', recursive: true, maxDepth: 10, includeHidden: true, limit: 500 }).expect(200);
    const paths: string[] = all.body.result.entries.map((e: { path: string }) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['a/.env', 'fleet-data', 'plain/readme.txt', 'pkg/mod.py']));
    expect(paths.filter((p) => p.startsWith('fleet-data/') || p.startsWith('a/.env/'))).toEqual([]);

    for (const [p, setting] of [
      ['fleet-data', STORE_SETTING],
      ['datalink', STORE_SETTING],
      ['fleet-data/secrets-ui', STORE_SETTING],
      ['a/.env', NAME_SETTING],
      ['A/.ENV', NAME_SETTING],
      ['plain/exports', STORE_SETTING],
    ] as const) {
      const res = await fsCall('file_list', { path: p });
      // A/.ENV does not exist on a case-sensitive filesystem: refused all the same, before any lookup
      expectForbidden(res, setting, p);
    }
  });

  it('never returns a secret content from a search, over ** and in every case', async () => {
    for (const caseSensitive of [false, true]) {
      const res = await fsCall('file_search', { path: '.', content: MARK, includeHidden: true, caseSensitive, maxResults: 1000 }).expect(
        200,
      );
      expect(res.body.result.matches).toEqual([]);
      expect(res.body.result.skippedSecret).toBeGreaterThan(0);
      expect(JSON.stringify(res.body)).not.toContain(MARK);
    }
    const lower = await fsCall('file_search', { path: '.', content: 'secret-marker', includeHidden: true }).expect(200);
    expect(lower.body.result.matches).toEqual([]);

    const names = await fsCall('file_search', { path: '.', name: '**', includeHidden: true, maxResults: 1000 }).expect(200);
    const found: { path: string; secret?: boolean }[] = names.body.result.matches;
    expect(found.filter((m) => m.path.startsWith('fleet-data/') || m.path.startsWith('a/.env/'))).toEqual([]);
    expect(found.find((m) => m.path === '.env')).toMatchObject({ secret: true });
    expect(found.find((m) => m.path === 'plain/readme.txt')?.secret).toBeUndefined();

    const legit = await fsCall('file_search', { path: '.', content: 'hello from' }).expect(200);
    expect(legit.body.result.matches).toEqual([expect.objectContaining({ path: 'plain/readme.txt', line: 1 })]);
    expectForbidden(await fsCall('file_search', { path: 'datalink', content: 'x' }), STORE_SETTING, 'search datalink');
  });

  it('analyses around secret files without opening them', async () => {
    for (const [p, setting] of spellings()) expectForbidden(await fsCall('file_analyze', { path: p }), setting, p);
    const res = await fsCall('file_analyze', { path: '.' }).expect(200);
    expect(res.body.result.secret).toBeGreaterThanOrEqual(8);
    expect((await fsCall('file_analyze', { path: '.env.example' }).expect(200)).body.result.type).toBe('file');
  });
});

describe('config-mcp', () => {
  it('refuses to read, validate or back up a secret file, in every spelling', async () => {
    for (const [p, setting] of spellings()) {
      expectForbidden(await configCall('config_file', { action: 'read', path: p, from: 'env' }), setting, `read ${p}`);
      expectForbidden(await configCall('validate', { path: p, format: 'env', schema: {} }), setting, `validate ${p}`);
      expectForbidden(await configCall('backup', { action: 'create', path: p }), setting, `backup ${p}`);
      expectForbidden(await configCall('validate', { config: {}, schema_path: p }), setting, `schema_path ${p}`);
    }
    const ok = await configCall('config_file', { action: 'read', path: '.env.example' }).expect(200);
    expect(ok.body.result.data).toEqual({ DB_PASSWORD: '[redacted]' });
  });

  it('refuses to write a converted file over a secret or exported env file', async () => {
    const before = snapshot();
    for (const [p, setting] of spellings()) {
      const res = await configCall('config_file', {
        action: 'convert',
        path: 'plain/config.json',
        to: 'env',
        output_path: p,
        overwrite: true,
      });
      expectForbidden(res, setting, p);
    }
    expectForbidden(
      await configCall('config_file', { action: 'convert', path: 'plain/config.json', output_path: 'plain/new.env' }),
      NAME_SETTING,
      'new .env',
    );
    expect(fs.existsSync(path.join(root, 'plain/new.env'))).toBe(false);
    expect(snapshot()).toEqual(before);
    await configCall('config_file', { action: 'convert', path: 'plain/config.json', output_path: 'plain/config.yaml' }).expect(200);
  });
});

describe('log-mcp', () => {
  it('refuses secret files by path and by glob, and never searches DATA_DIR or secret directories', async () => {
    for (const [p, setting] of spellings()) expectForbidden(await logCall('log_search', { files: [p] }), setting, p);
    for (const files of [undefined, ['**/*'], ['**/*.log'], ['*.env'], ['*']]) {
      const res = await logCall('log_search', { ...(files ? { files } : {}), query: MARK, limit: 500 });
      expect(JSON.stringify(res.body)).not.toContain(MARK);
      const all = await logCall('log_search', { ...(files ? { files } : {}), limit: 500 });
      expect(JSON.stringify(all.body)).not.toContain(MARK);
    }
    const legit = await logCall('log_search', { query: 'hello log' }).expect(200);
    expect(legit.body.result.matches.length).toBe(1);
    const analysis = await logCall('log_analysis', {}).expect(200);
    expect(JSON.stringify(analysis.body)).not.toContain(MARK);
  });
});

describe('code-graph-mcp', () => {
  it('never indexes a file inside DATA_DIR or a secret directory, and refuses them as project roots', async () => {
    const res = await graphCall('index_python_project', { root: '.' }).expect(200);
    expect(JSON.stringify(res.body)).not.toMatch(/fleet-data|evil/);
    const hidden = await graphCall('query_code_graph', { project: '.', name: `${MARK.replace('-', '_').toLowerCase()}*` }).expect(200);
    expect(JSON.stringify(hidden.body)).not.toMatch(/evil|secret_marker/);
    const visible = await graphCall('query_code_graph', { project: '.', name: 'visible_function' }).expect(200);
    expect(JSON.stringify(visible.body)).toContain('visible_function');
    for (const p of ['fleet-data', 'fleet-data/plugins', 'datalink/plugins', 'a/.env']) {
      expectForbidden(await graphCall('index_python_project', { root: p }), /SECRET_FILES|DATA_DIR/, p);
    }
  });
});

describe('configuration', () => {
  const fsWith = async (extra: Record<string, string>) =>
    createFilesystem({ config: filesystemSchema.parse({ ...env(), ...extra }), logger: testLogger(), defaultMetrics: false });

  it('ALLOW_SECRET_FILES=1 opens the names but never DATA_DIR or SECRET_PATHS', async () => {
    const svc = await fsWith({ ALLOW_SECRET_FILES: '1' });
    try {
      const call = toolCaller(svc.app);
      expect((await call('file_read', { path: '.env' }).expect(200)).body.result.content).toBe(SECRETS['.env']);
      expect((await call('file_read', { path: 'notes.txt' }).expect(200)).body.result.content).toBe(SECRETS['.env']);
      expectForbidden(await call('file_read', { path: 'fleet-data/fleet.json' }), STORE_SETTING, 'data dir');
      expectForbidden(await call('file_read', { path: 'custom/keys.json' }), STORE_SETTING, 'secret path');
    } finally {
      await svc.close();
    }
  });

  it('SECRET_FILES replaces the list; "default" keeps it; ! exempts', async () => {
    fs.writeFileSync(path.join(root, 'plain', 'vault.secret'), 'vault');
    const replaced = await fsWith({ SECRET_FILES: '*.secret' });
    const extended = await fsWith({ SECRET_FILES: 'default,*.secret,!.env.production' });
    try {
      const r = toolCaller(replaced.app);
      expectForbidden(await r('file_read', { path: 'plain/vault.secret' }), NAME_SETTING, 'replaced');
      await r('file_read', { path: '.env' }).expect(200);
      const e = toolCaller(extended.app);
      expectForbidden(await e('file_read', { path: 'plain/vault.secret' }), NAME_SETTING, 'extended');
      expectForbidden(await e('file_read', { path: '.env' }), NAME_SETTING, 'default kept');
      await e('file_read', { path: '.env.production' }).expect(200);
    } finally {
      await replaced.close();
      await extended.close();
      fs.rmSync(path.join(root, 'plain', 'vault.secret'));
    }
  });

  it('refuses a SECRET_FILES entry that is not a file-name pattern', () => {
    expect(() => filesystemSchema.parse({ ...env(), SECRET_FILES: 'a/b' })).toThrow(/file-name pattern/);
  });
});
