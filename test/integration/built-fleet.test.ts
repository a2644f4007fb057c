/**
 * The fleet as `fleet up` runs it: built JavaScript (dist/, scripts/build) under plain node, no
 * TypeScript loader, with the young generation capped. Each place that finds a file beside its own
 * source works from the bundle: the sandbox's sandbox-exec script (git-mcp), the tree-sitter grammar
 * (code-graph-mcp), ajv for config-mcp's worker threads, the UI and catalog directories (secrets-ui,
 * the gateway's status page and console, marketplace-mcp); the gateway starts its stdio server from
 * the build too; the launcher's variable lists equal the schemas'; the kit's lazily loaded MCP SDK
 * answers POST /mcp; a stale build is made again before anything starts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort, tempDir } from '@mcp-fleet/testing';
import { builtCheck, configSource, declaredEnvFile, ensureBuiltApart, readStamp, staleReason } from '../../scripts/build/stamp';
import { localGet } from '../../scripts/fleet/launcher';
import { defaultNodeArgs, HOT_PATH_NODE_ARGS, SERVICE_NODE_ARGS } from '../../scripts/fleet/plan';
import { declaredNames } from '../../scripts/fleet/service-env';
import { getJson, postJson, REPO_ROOT, startFleet, type FleetHandle } from '../support/fleet-process';

const ONLY = ['filesystem-mcp', 'git-mcp', 'config-mcp', 'code-graph-mcp', 'mqtt-mcp', 'marketplace-mcp', 'secrets-ui'];
let fleet: FleetHandle;
let tmp: { dir: string; cleanup: () => void };
let workspace: string;

const cmdline = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
const children = (pid: number) =>
  fs
    .readdirSync(`/proc/${pid}/task`)
    .flatMap((t) => fs.readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(' ').filter(Boolean))
    .map(Number);
const urlOf = (id: string) => {
  const s = fleet.state().services.find((x) => x.id === id)!;
  return `http://127.0.0.1:${s.port}`;
};
const call = (id: string, name: string, args: unknown) => postJson(`${urlOf(id)}/tools/call`, { name, arguments: args });

beforeAll(async () => {
  // a source touched (content unchanged) makes the build stale: made again before anything runs
  const touched = path.join(REPO_ROOT, 'services', 'system-mcp', 'src', 'server.ts');
  const now = new Date();
  fs.utimesSync(touched, now, now);
  expect(staleReason()).toBeDefined();
  // ./fleet's check (plain node, no tsx) agrees: 1 while stale, 0 once built
  const check = () => spawnSync(process.execPath, [builtCheck()], { encoding: 'utf8' }).status;
  if (fs.existsSync(builtCheck())) expect(check()).toBe(1);
  ensureBuiltApart();
  expect(staleReason()).toBeUndefined();
  expect(check()).toBe(0);
  expect(readStamp()!.builtAt).toBeGreaterThanOrEqual(now.getTime() - 1000);

  tmp = tempDir('built-fleet-');
  workspace = path.join(tmp.dir, 'ws');
  fs.mkdirSync(path.join(workspace, 'repo'), { recursive: true });
  fs.writeFileSync(path.join(workspace, 'a.py'), 'import os\n\n\ndef main():\n    return os.getcwd()\n');
  execFileSync('git', ['init', '-q', path.join(workspace, 'repo')]);
  fleet = await startFleet({ dataDir: path.join(tmp.dir, 'data'), workspace, only: ONLY });
}, 120_000);

afterAll(async () => {
  await fleet?.stop();
  tmp?.cleanup();
});

describe('the built fleet', () => {
  it('runs every service from its bundle under plain node, the stdio server the gateway starts too', () => {
    const { services } = fleet.state();
    expect(services.map((s) => s.id).sort()).toEqual([...ONLY, 'mega-orchestrator'].sort());
    for (const s of services) {
      const args = cmdline(s.pid);
      expect(args).toContain(path.join(REPO_ROOT, 'dist', 'services', s.id, 'server.js'));
      // a young generation capped per semi-space: 1 MiB for an idle tool service, 2 MiB for filesystem-mcp (the
      // agents' hot path), 16 MiB for the gateway (its throughput)
      expect(args.some((a) => /^--max-semi-space-size=\d+$/.test(a))).toBe(true);
      // each process's own flags (scripts/fleet/plan.ts): --optimize-for-size for the idle tool services
      expect(args.slice(1, -1)).toEqual(defaultNodeArgs(s.id));
      if (s.id === 'filesystem-mcp') expect(args.slice(1, -1)).toEqual(HOT_PATH_NODE_ARGS);
      expect(args.join(' ')).not.toMatch(/tsx/);
    }
    // the gateway's descendants (its stdio server, in the OS sandbox where there is one)
    const gateway = services.find((s) => s.id === 'mega-orchestrator')!;
    const descendants = (pid: number): number[] => children(pid).flatMap((c) => [c, ...descendants(c)]);
    const stdio = descendants(gateway.pid).map(cmdline);
    const toolkit = path.join(REPO_ROOT, 'dist', 'services', 'toolkit-mcp-server', 'server.js');
    expect(stdio.filter((args) => args.at(-1) === toolkit).length).toBeGreaterThan(0);
    for (const args of stdio) expect(args.join(' ')).not.toMatch(/tsx/);
    // node itself (inside the sandbox's wrapper where there is one) with the tool services' flags
    const toolkitNode = stdio.filter((args) => args.at(-1) === toolkit && args[0] === process.execPath);
    expect(toolkitNode.length).toBe(1);
    expect(toolkitNode[0].slice(1, -1)).toEqual(SERVICE_NODE_ARGS);
  });

  it('starts each service with the variables its schema declares, as read from the source', () => {
    const built = JSON.parse(fs.readFileSync(declaredEnvFile(), 'utf8')) as Record<string, string[]>;
    const ids = fs.readdirSync(path.join(REPO_ROOT, 'services')).filter((id) => configSource(id) !== undefined);
    expect(ids).toContain('mega-orchestrator');
    expect(Object.keys(built).sort()).toEqual(ids.sort());
    for (const id of ids) expect(built[id]).toEqual(declaredNames(id));
  });

  it('finds the files beside the source: sandbox-exec, the grammar, ajv in a worker thread', async () => {
    const git = await call('git-mcp', 'git_status', { path: 'repo' });
    expect(git.status).toBe(200);
    expect(git.body.success).toBe(true);

    const graph = await call('code-graph-mcp', 'index_python_project', { root: '.' });
    expect(graph.status).toBe(200);
    expect(graph.body.result).toMatchObject({ parsed: 1, errors: [] });

    const schema = { type: 'object', properties: { port: { type: 'integer' } } };
    const bad = await call('config-mcp', 'validate', { config: { port: 'eighty' }, schema });
    expect(bad.status).toBe(200);
    expect(bad.body.result.valid).toBe(false);
    const good = await call('config-mcp', 'validate', { config: { port: 80 }, schema });
    expect(good.body.result.valid).toBe(true);
  });

  it('serves the UI and catalog directories: secrets-ui, the status page, the console, the skills', async () => {
    const ui = await fetch(`${urlOf('secrets-ui')}/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/<html/i);
    const script = await fetch(`${fleet.gateway}/ui/status.js`);
    expect(script.status).toBe(200);
    expect((await script.text()).length).toBeGreaterThan(100);
    const console = await fetch(`${fleet.gateway}/console/`);
    expect(console.status).toBe(200);
    expect(await console.text()).toMatch(/<html/i);
    const skills = await call('marketplace-mcp', 'skills_list', {});
    expect(skills.status).toBe(200);
    expect(skills.body.result.skills.length).toBeGreaterThan(0);
  });

  it('answers MCP on a service (the SDK loaded at the first request) and through the gateway to its stdio server', async () => {
    const res = await postJson(
      `${urlOf('mqtt-mcp')}/mcp`,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { accept: 'application/json, text/event-stream' },
    );
    expect(res.status).toBe(200);
    expect(res.body.result.tools.map((t: { name: string }) => t.name)).toContain('get_mqtt_status');
    const { body } = await getJson(`${fleet.gateway}/status`);
    expect(body.services.polled).toBeGreaterThanOrEqual(body.services.total);
    const viaGateway = await postJson(`${fleet.gateway}/mcp`, { tool: 'fileretrieve', arguments: { paths: ['a.py'] } });
    expect(viaGateway.status).toBe(200);
    expect(JSON.stringify(viaGateway.body)).toContain('def main');
  });
});

describe("the launcher's health GET (localGet: node's http, not fetch)", () => {
  it('gives a status and body, and undefined for a closed port or a server silent past its time limit', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as net.AddressInfo).port;
    try {
      const health = await localGet(`${urlOf('config-mcp')}/health`);
      expect(health?.status).toBe(200);
      expect(JSON.parse(health!.body)).toMatchObject({ service: 'config-mcp' });
      expect((await localGet(`${urlOf('config-mcp')}/no-such-route`))?.status).toBe(404);
      expect(await localGet(`http://127.0.0.1:${await freePort()}/health`)).toBeUndefined();
      const started = Date.now();
      expect(await localGet(`http://127.0.0.1:${silentPort}/health`, 300)).toBeUndefined();
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    } finally {
      silent.close();
    }
  });
});
