/**
 * MCP servers from npm that others wrote, behind the gateway over stdio in its OS sandbox (issue 29:
 * any MCP server behind it works as well as it does directly), besides the reference servers of
 * reference-servers.test.ts: `@modelcontextprotocol/server-sequential-thinking`,
 * `@modelcontextprotocol/server-github` (no network here: its calls fail, as they do directly) and
 * `@playwright/mcp` driving this machine's Chromium headless inside the sandbox. Each lists the same
 * tools through the gateway as directly (names, input schemas), and answers the same calls alike.
 */
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { serve } from '@mcp-fleet/testing';
import { gatewayWithClient } from './helpers';

const REPO = path.resolve(__dirname, '../../..');
/** A package's command-line program (its package.json `bin`). */
const bin = (pkg: string) => {
  const manifest = require.resolve(`${pkg}/package.json`, { paths: [REPO] });
  const { bin: programs } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return path.join(path.dirname(manifest), Object.values(programs)[0]);
};
const CHROMIUM = '/usr/lib/chromium/chromium';
const SERVERS: Record<string, { args: string[]; env: Record<string, string> }> = {
  thinking: { args: [bin('@modelcontextprotocol/server-sequential-thinking')], env: {} },
  github: { args: [bin('@modelcontextprotocol/server-github')], env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'not-a-token' } },
  browser: {
    // Debian's /usr/bin/chromium is a shell script reading /etc/chromium.d, which the sandbox does not show: the program itself
    args: [bin('@playwright/mcp'), '--browser', 'chromium', '--executable-path', CHROMIUM, '--headless', '--isolated', '--no-sandbox'],
    env: {},
  },
};

const direct = async (id: string) => {
  const client = new Client({ name: 'npm-servers', version: '1' });
  const { args, env } = SERVERS[id];
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args,
      cwd: REPO,
      env: { ...env, PATH: process.env.PATH ?? '' },
      stderr: 'ignore',
    }),
  );
  return client;
};

describe('MCP servers from npm behind the gateway, sandboxed', () => {
  let page: Awaited<ReturnType<typeof serve>>;
  const ids = Object.keys(SERVERS);
  const f = gatewayWithClient(
    async () => {
      page = await serve((_req: http.IncomingMessage, res: http.ServerResponse) => {
        res.setHeader('content-type', 'text/html');
        res.end('<html><head><title>fleet page</title></head><body><h1>Hello from the fleet</h1></body></html>');
      });
      return Object.entries(SERVERS).map(([id, { args, env }]) => ({
        id,
        url: `stdio:${id}`,
        mcp: { transport: 'stdio' as const, command: process.execPath, args, cwd: REPO, env },
      }));
    },
    (g) => ids.every((id) => g.gw.registry.services.find((s) => s.id === id)?.healthy),
    { HEALTH_TIMEOUT_MS: '20000', DOWNSTREAM_TIMEOUT_MS: '60000' },
    () => page?.stop(),
    60_000,
  );

  it.each(Object.keys(SERVERS))(
    '%s: healthy, and every tool listed as it lists it directly',
    async (id) => {
      const services = (await (await fetch(`${f.g.url}/services`)).json()) as {
        services: { id: string; status: string; reason?: string }[];
      };
      expect(services.services.find((s) => s.id === id)).toMatchObject({ status: 'healthy' });
      const own = await direct(id);
      try {
        const { tools } = await own.listTools();
        expect(tools.length).toBeGreaterThan(0);
        const through = new Map((await f.client.listTools()).tools.map((t) => [t.name, t]));
        for (const tool of tools) {
          expect(through.get(tool.name)).toMatchObject({ name: tool.name, inputSchema: tool.inputSchema });
          expect(through.get(tool.name)?.description).toContain(tool.description ?? '');
        }
      } finally {
        await own.close();
      }
    },
    60_000,
  );

  it('sequential-thinking answers a thought as it does directly', async () => {
    const args = { thought: 'one step', nextThoughtNeeded: false, thoughtNumber: 1, totalThoughts: 1 };
    const own = await direct('thinking');
    try {
      const expected = await own.callTool({ name: 'sequentialthinking', arguments: args });
      // exactly as the server answered (it leaves isError to its default, and so does the gateway)
      expect(await f.client.callTool({ name: 'sequentialthinking', arguments: args })).toEqual(expected);
    } finally {
      await own.close();
    }
  });

  it("github's call, which cannot reach GitHub here, is that call's error as directly; the server stays healthy", async () => {
    const args = { query: 'mcp-fleet' };
    const own = await direct('github');
    let expected: Record<string, unknown>;
    try {
      expected = await own.callTool({ name: 'search_repositories', arguments: args }).catch((err: Error) => ({ thrown: err.message }));
    } finally {
      await own.close();
    }
    const through = await f.client
      .callTool({ name: 'search_repositories', arguments: args })
      .catch((err: Error) => ({ thrown: err.message }));
    if ('thrown' in expected) expect(through).toHaveProperty('thrown');
    else expect(through).toMatchObject({ isError: true });
    const services = (await (await fetch(`${f.g.url}/services`)).json()) as { services: { id: string; status: string }[] };
    expect(services.services.find((s) => s.id === 'github')).toMatchObject({ status: 'healthy' });
  }, 60_000);

  it('playwright drives Chromium inside the sandbox: a page of this machine navigated to and read', async () => {
    const navigated = await f.client.callTool({ name: 'browser_navigate', arguments: { url: page.url } });
    expect(navigated.isError).toBeFalsy();
    const snapshot = await f.client.callTool({ name: 'browser_snapshot', arguments: {} });
    expect(snapshot.isError).toBeFalsy();
    const text = (snapshot.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');
    expect(text).toContain('Hello from the fleet');
    expect(text).toContain('fleet page');
  }, 60_000);
});
