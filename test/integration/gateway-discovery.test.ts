/**
 * The gateway in MCP_DISCOVERY=meta mode in front of the fleet's real catalog (every built service's
 * tools, test/support/fleet-catalog.ts), with API keys on: the official SDK clients of both eras see
 * three meta-tools, search_tools finds file_read for a plain request, describe_tool gives its real
 * schema, call_tool runs it and the call is in the session's history, and a call the key's scopes
 * forbid is refused through call_tool exactly as it is directly. The native form too.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { serve, tempDir, testLogger } from '@mcp-fleet/testing';
import { createApp, type Gateway } from '../../services/mega-orchestrator/src/http/app';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { configSchema } from '../../services/mega-orchestrator/src/core/config';
import { startFleetCatalog, type FleetCatalog } from '../support/fleet-catalog';

type Result = { isError?: boolean; structuredContent?: Record<string, unknown>; content?: unknown };
const META = ['call_tool', 'describe_tool', 'search_tools'];
const README = 'show me the contents of README';

describe('gateway discovery mode (MCP_DISCOVERY=meta) with the SDK clients of both eras', () => {
  const tmp = tempDir('gateway-discovery-');
  let fleet: FleetCatalog;
  let gw: Gateway;
  let url: string;
  let stop: () => Promise<void>;
  const reader = newApiKey('reader', ['tools:read']);
  const auth = { authorization: `Bearer ${reader.key}` };

  beforeAll(async () => {
    fleet = await startFleetCatalog();
    fs.writeFileSync(path.join(fleet.homeOf('filesystem-mcp'), 'README.md'), 'hello from the fleet\n');
    fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([reader.entry]));
    gw = createApp({
      config: configSchema.parse({
        DATA_DIR: tmp.dir,
        LOG_LEVEL: 'error',
        HEALTH_POLL_MS: '600000',
        STDIO_SERVERS: 'false',
        SESSION_FLUSH_MS: '10',
        MCP_DISCOVERY: 'meta',
        API_KEYS_FILE: path.join(tmp.dir, 'keys.json'),
      }),
      logger: testLogger('gateway'),
      services: fleet.downstreams,
      autoStart: false,
    });
    // every service in the catalog before the tests (one poll may find a loaded machine's service slower than HEALTH_TIMEOUT_MS)
    const healthy = () => gw.registry.services.filter((s) => s.healthy).length;
    for (const end = Date.now() + 30_000; ;) {
      await gw.refresh();
      if (healthy() === fleet.downstreams.length || Date.now() > end) break;
    }
    const running = await serve(gw.app);
    url = running.url;
    stop = async () => {
      await gw.mcp.close();
      running.server.closeAllConnections();
      await running.stop();
      await gw.close();
    };
  }, 60_000);

  afterAll(async () => {
    await stop?.();
    await fleet?.close();
    tmp.cleanup();
  });

  /** file_read's input schema as filesystem-mcp itself lists it. */
  const realSchema = async () => {
    const fsUrl = fleet.downstreams.find((d) => d.id === 'filesystem-mcp')!.url;
    const listed = (await request(fsUrl).get('/tools/list').expect(200)).body as { tools: { name: string; inputSchema: unknown }[] };
    return listed.tools.find((t) => t.name === 'file_read')!.inputSchema;
  };

  const names = (r: Result) => ((r.structuredContent as { results: { name: string }[] }).results ?? []).map((h) => h.name);

  it('2025-era SDK client (session): meta-tools only; search, describe, call; the call is in the session history', async () => {
    const client = new Client({ name: 'discovery-v1', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: auth } });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(META);
      expect(gw.registry.catalog.entries.length).toBeGreaterThan(100);

      const found = (await client.callTool({ name: 'search_tools', arguments: { query: README } })) as Result;
      expect(found.isError).toBe(false);
      expect(names(found).slice(0, 3)).toContain('file_read');
      // a read-only key finds no tool it may not call
      expect(names(found)).not.toContain('file_write');

      const described = (await client.callTool({ name: 'describe_tool', arguments: { name: 'file_read' } })) as Result;
      expect(described.structuredContent).toMatchObject({ name: 'file_read', service: 'filesystem-mcp' });
      expect(described.structuredContent!.inputSchema).toEqual(await realSchema());

      const read = (await client.callTool({
        name: 'call_tool',
        arguments: { name: 'file_read', arguments: { path: 'README.md' } },
      })) as Result;
      expect(read.isError).toBe(false);
      expect(JSON.stringify(read.structuredContent)).toContain('hello from the fleet');

      const history = await request(url).get(`/debug/contexts/${transport.sessionId}`).set(auth).expect(200);
      expect(JSON.stringify(history.body)).toContain('file_read');
    } finally {
      await client.close();
    }
  });

  it('2026-07-28 SDK client (stateless): the same three tools, the same search, describe and call', async () => {
    const sent: string[] = [];
    const recording: typeof fetch = async (u, init) => {
      sent.push(String(new Headers(init?.headers).get('mcp-protocol-version')));
      return fetch(u, init);
    };
    // pinned to the stateless revision (the options type names versionNegotiation; the cast keeps the test independent of its typing)
    const client = new V2Client({ name: 'discovery-v2', version: '1.0.0' }, {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    } as ConstructorParameters<typeof V2Client>[1]);
    await client.connect(new V2Transport(new URL(`${url}/mcp`), { requestInit: { headers: auth }, fetch: recording }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(META);
      const found = (await client.callTool({ name: 'search_tools', arguments: { query: README, limit: 5 } })) as Result;
      expect(names(found)).toHaveLength(5);
      expect(names(found).slice(0, 3)).toContain('file_read');
      const described = (await client.callTool({ name: 'describe_tool', arguments: { name: 'file_read' } })) as Result;
      expect(described.structuredContent!.inputSchema).toEqual(await realSchema());
      const read = (await client.callTool({
        name: 'call_tool',
        arguments: { name: 'file_read', arguments: { path: 'README.md' } },
        _meta: { session_id: 'discovery-v2' },
      })) as Result;
      expect(JSON.stringify(read.structuredContent)).toContain('hello from the fleet');
      await gw.history.flush();
      const history = await request(url).get('/debug/contexts/discovery-v2').set(auth).expect(200);
      expect(JSON.stringify(history.body)).toContain('file_read');
      expect(sent.length).toBeGreaterThan(3);
      expect(sent.every((v) => v === '2026-07-28')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('refuses through call_tool what the scopes refuse directly, in the same words (both eras)', async () => {
    const client = new Client({ name: 'discovery-scopes', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: auth } }));
    const v2 = new V2Client({ name: 'discovery-scopes-v2', version: '1.0.0' }, {
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    } as ConstructorParameters<typeof V2Client>[1]);
    await v2.connect(new V2Transport(new URL(`${url}/mcp`), { requestInit: { headers: auth } }));
    try {
      const target = path.join(fleet.homeOf('filesystem-mcp'), 'written.txt');
      const args = { path: 'written.txt', content: 'x' };
      for (const c of [client, v2] as const) {
        const direct = (await c.callTool({ name: 'file_write', arguments: args })) as Result;
        const viaMeta = (await c.callTool({ name: 'call_tool', arguments: { name: 'file_write', arguments: args } })) as Result;
        expect(direct.isError).toBe(true);
        expect(direct.structuredContent).toMatchObject({ code: 'FORBIDDEN' });
        const { timestamp: _a, ...d } = direct.structuredContent!;
        const { timestamp: _b, ...m } = viaMeta.structuredContent!;
        expect(m).toEqual(d);
        // a tool the key may not call is not described either
        const hidden = (await c.callTool({ name: 'describe_tool', arguments: { name: 'file_write' } })) as Result;
        expect(hidden).toMatchObject({ isError: true, structuredContent: { code: 'UNKNOWN_TOOL' } });
      }
      expect(fs.existsSync(target)).toBe(false);
    } finally {
      await client.close();
      await v2.close();
    }
  });

  it('the native form: GET /tools/list shows the meta-tools, POST /mcp calls them, call_tool is refused as the direct call', async () => {
    const list = await request(url).get('/tools/list').set(auth).expect(200);
    expect(list.body.tools.map((t: { name: string }) => t.name).sort()).toEqual(META);
    const found = await request(url)
      .post('/mcp')
      .set(auth)
      .send({ tool: 'search_tools', arguments: { query: 'how much free space is left on the drive' } })
      .expect(200);
    expect(found.body).toMatchObject({ success: true, tool: 'search_tools' });
    expect(found.body.result.results[0].name).toBe('disk_usage');
    const read = await request(url)
      .post('/mcp')
      .set(auth)
      .send({ tool: 'call_tool', arguments: { name: 'file_read', arguments: { path: 'README.md' } } })
      .expect(200);
    expect(JSON.stringify(read.body.result)).toContain('hello from the fleet');
    const args = { path: 'n.txt', content: 'x' };
    const direct = await request(url).post('/mcp').set(auth).send({ tool: 'file_write', arguments: args }).expect(403);
    const viaMeta = await request(url)
      .post('/mcp')
      .set(auth)
      .send({ tool: 'call_tool', arguments: { name: 'file_write', arguments: args } })
      .expect(403);
    expect(viaMeta.body.error).toBe(direct.body.error);
    expect(viaMeta.headers['www-authenticate']).toBe(direct.headers['www-authenticate']);
    const bad = await request(url)
      .post('/mcp')
      .set(auth)
      .send({ tool: 'search_tools', arguments: { query: '' } })
      .expect(400);
    expect(bad.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
  });
});
