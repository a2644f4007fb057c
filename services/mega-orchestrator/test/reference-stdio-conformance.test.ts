/**
 * The official reference servers that speak stdio only (@modelcontextprotocol/server-memory and
 * server-filesystem) and the conformance suite (issue 29, fidelity): the suite speaks HTTP, so
 * "directly" is the server behind supergateway, a plain stdio → Streamable HTTP bridge. Every
 * required 2025-11-25 scenario it passes there passes through the gateway, with the server started
 * by the gateway over stdio (sandboxed, left to find its era) and with the bridge's HTTP endpoint
 * behind the gateway (found, and declared 2025-11-25). (They speak 2025 only: a 2026-07-28 client
 * gets more through the gateway than directly, reference-servers.test.ts.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, tempDir } from '@mcp-fleet/testing';
import type { McpServerSpec } from '../src/core/types';
import { lostThroughGateway, requiredScenarioCounts } from './fidelity';
import { initSession, startGatewayWithMcpServer, until } from './helpers';

const REPO = path.resolve(__dirname, '../../..');
const ERA = '2025-11-25';
const bin = (pkg: string) => require.resolve(`@modelcontextprotocol/${pkg}/dist/index.js`, { paths: [REPO] });

/** The server behind supergateway on a free port: its MCP endpoint, once it answers initialize. */
async function bridged(args: string[], env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const command = [process.execPath, ...args].map((a) => JSON.stringify(a)).join(' ');
  const child = spawn(
    path.join(REPO, 'node_modules', '.bin', 'supergateway'),
    ['--stdio', command, '--outputTransport', 'streamableHttp', '--stateful', '--port', String(port), '--logLevel', 'none'],
    { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'ignore' },
  );
  // up once it answers initialize (one try at a time)
  let up = false;
  let trying = false;
  await until(() => {
    if (!up && !trying) {
      trying = true;
      void initSession(`http://127.0.0.1:${port}`)
        .then(
          () => (up = true),
          () => undefined,
        )
        .finally(() => (trying = false));
    }
    return up;
  }, 20_000);
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

const servers: { pkg: string; id: string; tool: string; args: (dir: string) => string[]; env: (dir: string) => Record<string, string> }[] =
  [
    {
      pkg: 'server-memory',
      id: 'memory',
      tool: 'read_graph',
      args: () => [],
      env: (dir) => ({ MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') }),
    },
    { pkg: 'server-filesystem', id: 'files', tool: 'read_text_file', args: (dir) => [dir], env: () => ({}) },
  ];

describe.each(servers)('@modelcontextprotocol/$pkg (stdio only) and the conformance suite', ({ pkg, id, tool, args, env }) => {
  const tmp = tempDir(`mcp-fleet-${id}-conformance-`);
  let bridge: { url: string; child: ChildProcess } | undefined;
  afterAll(async () => {
    const child = bridge?.child;
    if (child && child.exitCode === null) {
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill();
      // supergateway waits for its server to end; it is given a second
      const late = setTimeout(() => child.kill('SIGKILL'), 1000);
      await gone;
      clearTimeout(late);
    }
    tmp.cleanup();
  });

  it('every required scenario it passes directly (behind a stdio bridge) passes through the gateway', async () => {
    const mine = path.join(tmp.dir, 'direct');
    const theirs = path.join(tmp.dir, 'gateway');
    fs.mkdirSync(mine);
    fs.mkdirSync(theirs);
    bridge = await bridged([bin(pkg), ...args(mine)], env(mine));
    const direct = await requiredScenarioCounts(bridge.url, ERA, tmp.dir);
    // what it passes directly: initialize, ping, tools-list, tools-call-simple-text, ... (its own tools are not the suite's)
    expect(direct.passed.size).toBeGreaterThanOrEqual(5);
    const stdio: McpServerSpec = {
      transport: 'stdio',
      command: process.execPath,
      args: [bin(pkg), ...args(theirs)],
      cwd: REPO,
      env: env(theirs),
      sandbox: { writable: [theirs] },
    };
    const fronts: { name: string; mcp: McpServerSpec }[] = [
      { name: 'stdio, found', mcp: stdio },
      {
        name: 'HTTP (the bridge), declared 2025-11-25',
        mcp: { transport: 'streamable-http', url: bridge.url, headers: {}, protocolVersion: ERA },
      },
    ];
    const lost: Record<string, Record<string, unknown>> = {};
    for (const { name, mcp } of fronts) {
      const g = await startGatewayWithMcpServer(id, mcp, path.join(tmp.dir, name.replace(/\W+/g, '-')), tool);
      try {
        lost[name] = lostThroughGateway(direct, await requiredScenarioCounts(`${g.url}/mcp`, ERA, tmp.dir, direct.passed));
      } finally {
        await g.stop();
      }
    }
    expect(lost).toEqual(Object.fromEntries(fronts.map((f) => [f.name, {}])));
  }, 240_000);
});
