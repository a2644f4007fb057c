/**
 * Each process's Node flags in the fleet's plan (scripts/fleet/plan.ts, issue 32): the tool
 * services tuned for memory, the gateway for throughput, the launcher as ./fleet starts it; the
 * variables that replace them, and a clear error for a value that is not a flag. The same flags
 * where the launcher does not start the process: the gateway's stdio toolkit-mcp-server and the image.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { GATEWAY_ID, SERVICES } from '@mcp-fleet/inventory';
import { tempDir } from '@mcp-fleet/testing';
import {
  GATEWAY_NODE_ARGS,
  HOT_PATH_NODE_ARGS,
  LAUNCHER_NODE_ARGS,
  planFleet,
  REPO_ROOT,
  SERVICE_NODE_ARGS,
} from '../../scripts/fleet/plan';
import { inventoryStdioServers } from '../../services/mega-orchestrator/src/downstream/mcp-servers-config';

const tmp = tempDir('fleet-node-args-');
afterAll(() => tmp.cleanup());
const base = { PATH: '/usr/bin:/bin', FLEET_DATA_DIR: path.join(tmp.dir, 'data'), WORKSPACE_ROOTS: path.join(tmp.dir, 'ws') };
const argsById = (env: Record<string, string>) =>
  Object.fromEntries(planFleet({ env: { ...base, ...env } }).specs.map((s) => [s.entry.id, s.nodeArgs]));

describe("the fleet's Node flags", () => {
  const hotPath = SERVICES.filter((s) => s.hotPath).map((s) => s.id);

  it('tune the tool services for memory, and leave the gateway and the hot-path services their speed', () => {
    const args = argsById({});
    expect(SERVICE_NODE_ARGS).toEqual(['--max-semi-space-size=1', '--optimize-for-size', '--single-threaded']);
    expect(HOT_PATH_NODE_ARGS).toEqual(['--max-semi-space-size=2', '--single-threaded']);
    expect(GATEWAY_NODE_ARGS).toEqual(['--max-semi-space-size=16']);
    expect(hotPath).toEqual(['filesystem-mcp']);
    expect(args[GATEWAY_ID]).toEqual(GATEWAY_NODE_ARGS);
    expect(args['filesystem-mcp']).toEqual(HOT_PATH_NODE_ARGS);
    const tools = Object.keys(args).filter((id) => id !== GATEWAY_ID && !hotPath.includes(id));
    expect(tools.length).toBeGreaterThan(20);
    for (const id of tools) expect([id, args[id]]).toEqual([id, SERVICE_NODE_ARGS]);
  });

  it('are replaced by FLEET_NODE_ARGS (every service but the gateway) and FLEET_GATEWAY_NODE_ARGS, "-" for none', () => {
    const args = argsById({ FLEET_NODE_ARGS: ' --max-semi-space-size=2   --single-threaded-gc ', FLEET_GATEWAY_NODE_ARGS: '-' });
    expect(args[GATEWAY_ID]).toEqual([]);
    expect(args['system-mcp']).toEqual(['--max-semi-space-size=2', '--single-threaded-gc']);
    // a hot-path service's own flags are replaced as well
    expect(args['filesystem-mcp']).toEqual(['--max-semi-space-size=2', '--single-threaded-gc']);
    expect(argsById({ FLEET_GATEWAY_NODE_ARGS: '--optimize-for-size' })[GATEWAY_ID]).toEqual(['--optimize-for-size']);
    // empty is unset, as the services read variables
    expect(argsById({ FLEET_NODE_ARGS: '  ' })['system-mcp']).toEqual(SERVICE_NODE_ARGS);
  });

  it('refuse a value that is not a flag, naming the variable and the word', () => {
    expect(() => argsById({ FLEET_NODE_ARGS: '--optimize-for-size server.js' })).toThrow(
      'FLEET_NODE_ARGS takes Node flags (--name or --name=value), got "server.js"',
    );
    expect(() => argsById({ FLEET_GATEWAY_NODE_ARGS: '-r x' })).toThrow('FLEET_GATEWAY_NODE_ARGS takes Node flags');
  });

  it('start the launcher in ./fleet with LAUNCHER_NODE_ARGS', () => {
    const script = fs.readFileSync(path.join(REPO_ROOT, 'fleet'), 'utf8');
    const launch = /exec node (.*) dist\/fleet\/cli\.js/.exec(script);
    expect(launch?.[1].split(' ')).toEqual(LAUNCHER_NODE_ARGS);
  });

  it("give the gateway's stdio toolkit-mcp-server the tool services' flags, built and from source", () => {
    const root = path.join(tmp.dir, 'checkout');
    for (const file of ['dist/services/toolkit-mcp-server/server.js', 'services/toolkit-mcp-server/src/server.ts']) {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), '');
    }
    const argsOf = (built: boolean) => {
      const mcp = inventoryStdioServers({}, undefined, root, built).specs[0].mcp!;
      return mcp.transport === 'stdio' ? mcp.args : [];
    };
    expect(argsOf(true)).toEqual([...SERVICE_NODE_ARGS, path.join(root, 'dist/services/toolkit-mcp-server/server.js')]);
    expect(argsOf(false)).toEqual([...SERVICE_NODE_ARGS, '--import', 'tsx', path.join(root, 'services/toolkit-mcp-server/src/server.ts')]);
  });

  it("start each service in the image with its flags (the Dockerfile's CMD, run by sh)", () => {
    const dockerfile = fs.readFileSync(path.join(REPO_ROOT, 'docker', 'Dockerfile'), 'utf8');
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]) as string[];
    expect(cmd.slice(0, 2)).toEqual(['sh', '-c']);
    // the command as the image runs it, with echo in node's place
    const started = (service: string) =>
      execFileSync('sh', ['-c', cmd[2].replace('exec node ', 'echo ')], {
        env: { PATH: '/usr/bin:/bin', SERVICE: service, DATA_DIR: tmp.dir },
        encoding: 'utf8',
      })
        .trim()
        .split(' ');
    expect(started(GATEWAY_ID)).toEqual([...GATEWAY_NODE_ARGS, `dist/services/${GATEWAY_ID}/server.js`]);
    for (const id of ['system-mcp', 'secrets-ui', 'coordinator'])
      expect(started(id)).toEqual([...SERVICE_NODE_ARGS, `dist/services/${id}/server.js`]);
    for (const id of hotPath) expect(started(id)).toEqual([...HOT_PATH_NODE_ARGS, `dist/services/${id}/server.js`]);
  });
});
