/**
 * The real gateway process, configured from its environment, fronting MCP servers: the inventory's
 * toolkit-mcp-server (a stdio child it starts itself), the official memory server from npm (stdio,
 * declared in MCP_SERVERS) and mqtt-mcp's own JSON-RPC endpoint (Streamable HTTP, declared with
 * ${MQTT_MCP_PORT} expanded from the launcher's environment). Stopping the fleet stops the children.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDir } from '@mcp-fleet/testing';
import { getJson, isAlive, postJson, REPO_ROOT, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';
import { listToolNames } from '../../services/mega-orchestrator/test/helpers';

const MEMORY_SERVER = require.resolve('@modelcontextprotocol/server-memory/dist/index.js', { paths: [REPO_ROOT] });

describe('MCP servers behind the gateway (fleet)', () => {
  const tmp = tempDir('mcp-fleet-it-mcp-');
  let fleet: FleetHandle;
  let gateway: string;

  beforeAll(async () => {
    fs.mkdirSync(path.join(tmp.dir, 'ws'));
    fs.mkdirSync(path.join(tmp.dir, 'memory'));
    fs.writeFileSync(path.join(tmp.dir, 'ws', 'notes.txt'), 'line one\nline two\n');
    fleet = await startFleet({
      dataDir: path.join(tmp.dir, 'data'),
      workspace: path.join(tmp.dir, 'ws'),
      only: ['mqtt-mcp'],
      env: {
        MCP_SERVERS: JSON.stringify({
          mcpServers: {
            // sandboxed (the default): it sees its code and, writable, the directory of its file, as a user declares them
            memory: {
              command: process.execPath,
              args: [MEMORY_SERVER],
              env: { MEMORY_FILE_PATH: path.join(tmp.dir, 'memory', 'memory.jsonl') },
              sandbox: { readOnly: [REPO_ROOT], writable: [path.join(tmp.dir, 'memory')] },
            },
            'mqtt-rpc': { url: 'http://127.0.0.1:${MQTT_MCP_PORT}/mcp' },
          },
        }),
      },
    });
    gateway = fleet.gateway;
    await waitFor(
      'every MCP server in the catalog',
      async () => {
        const names = ((await getJson(`${gateway}/tools/list`)).body.tools ?? []).map((t: { name: string }) => t.name);
        return ['fileretrieve', 'read_graph', 'mqtt-rpc__publish_message'].every((n) => names.includes(n)) ? names : undefined;
      },
      60_000,
    );
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    tmp.cleanup();
  });

  it('calls the toolkit over stdio, the memory server over stdio and mqtt-mcp over Streamable HTTP', async () => {
    const file = await postJson(`${gateway}/mcp`, { tool: 'fileretrieve', arguments: { paths: [path.join(tmp.dir, 'ws', 'notes.txt')] } });
    expect(file.status).toBe(200);
    expect(JSON.stringify(file.body.result)).toContain('line two');

    expect(
      (
        await postJson(`${gateway}/mcp`, {
          tool: 'create_entities',
          arguments: { entities: [{ name: 'fleet', entityType: 'x', observations: ['up'] }] },
        })
      ).status,
    ).toBe(200);
    const graph = await postJson(`${gateway}/mcp`, { tool: 'read_graph', arguments: {} });
    expect(JSON.stringify(graph.body.result)).toContain('"fleet"');

    // the same tool through mqtt-mcp's HTTP routes and through its MCP endpoint
    const direct = await postJson(`${gateway}/mcp`, { tool: 'publish_message', arguments: { topic: 'fleet/mcp', payload: 'a' } });
    const viaMcp = await postJson(`${gateway}/mcp`, { tool: 'mqtt-rpc__publish_message', arguments: { topic: 'fleet/mcp', payload: 'b' } });
    expect(direct.status).toBe(200);
    expect(viaMcp.status).toBe(200);
    expect(viaMcp.body.success).toBe(true);
    // a fleet service's own error code survives the MCP hop
    const bad = await postJson(`${gateway}/mcp`, { tool: 'mqtt-rpc__publish_message', arguments: { topic: 'a/#', payload: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });

  it("checks a repository with the toolkit's precommit inside the gateway's sandbox, and refuses one that names programs for git", async () => {
    const made = (name: string, hostile: boolean) => {
      const repo = path.join(tmp.dir, 'ws', name);
      const marker = path.join(repo, '.git', 'PWNED');
      const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
      fs.mkdirSync(repo);
      git('init', '-q');
      if (hostile) {
        git('config', 'core.fsmonitor', `touch '${marker}'; false`);
        git('config', 'filter.evil.clean', `touch '${marker}'; cat`);
        fs.writeFileSync(path.join(repo, '.gitattributes'), '* filter=evil\n');
      }
      fs.writeFileSync(path.join(repo, 'a.txt'), 'staged line\n');
      git('-c', 'core.fsmonitor=false', '-c', 'filter.evil.clean=cat', 'add', '.');
      return { repo, marker };
    };
    const clean = made('clean', false);
    const ok = await postJson(`${gateway}/mcp`, { tool: 'precommit', arguments: { path: clean.repo } });
    expect(ok.status).toBe(200);
    expect(ok.body.result).toMatchObject({ staged: ['a.txt'], ok: true });
    expect(ok.body.result.diff).toContain('+staged line');
    // the toolkit runs git in the gateway's sandbox (SANDBOX=outer), so a repository that names programs is refused
    const hostile = made('hostile', true);
    const refused = await postJson(`${gateway}/mcp`, { tool: 'precommit', arguments: { path: hostile.repo } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'FORBIDDEN', error: expect.stringMatching(/core\.fsmonitor.*filter\.evil\.clean/) });
    expect(fs.existsSync(hostile.marker)).toBe(false);
  });

  it('lists them to MCP clients and in /services, and stops the children with the fleet', async () => {
    const client = new Client({ name: 'it', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway}/mcp`)));
    const names = await listToolNames(client);
    await client.close();
    expect(names).toEqual(expect.arrayContaining(['thinkdeep', 'fileretrieve', 'read_graph', 'mqtt-rpc__publish_message']));

    const services = (await getJson(`${gateway}/services`)).body.services as { id: string; status: string; mcp?: { pid?: number } }[];
    const stdio = services.filter((s) => s.id === 'toolkit-mcp-server' || s.id === 'memory');
    expect(stdio.map((s) => s.status)).toEqual(['healthy', 'healthy']);
    const pids = stdio.map((s) => s.mcp!.pid!);
    expect(pids.every((p) => isAlive(p))).toBe(true);
    await fleet.stop();
    await waitFor('the stdio servers to stop with the fleet', async () => pids.every((p) => !isAlive(p)) || undefined, 15_000);
  });
});
