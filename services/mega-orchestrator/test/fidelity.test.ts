/**
 * Fidelity (issue 29): an MCP server behind the gateway works as well as it does directly.
 *
 * - A dual-era server built with the official v2 server SDK (fixtures/dual-era-mcp-server.ts), over
 *   Streamable HTTP, declared 2026-07-28 and left for the gateway to find: the conformance suite's
 *   required server scenarios of each revision run against it directly and through the gateway;
 *   every one that passes directly passes through the gateway, for clients of both eras.
 * - A sloppy 2026-07-28 server (fixtures/modern-mcp-server.ts, `sloppy`), answering as real servers
 *   do: without resultType, with unknown fields, against the schema, slowly, never; and a listen
 *   stream it ends. One bad answer is that call's error, never the server's.
 * - The caller's declared client capabilities reach the server (-32021 for one it did not declare).
 */
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import request from 'supertest';
import type { McpDownstream } from '../src/downstream/mcp';
import { dualEraFronts, ERAS, lostThroughGateway, requiredScenarioCounts, type ScenarioCounts } from './fidelity';
import { startDualEraServer, type DualEraServer } from './fixtures/dual-era-mcp-server';
import { startModernServer, type ModernServer } from './fixtures/modern-mcp-server';
import { META_2026, post2026, startGatewayWithMcpServer, type RunningGateway } from './helpers';

const http = (url: string, declared?: '2026-07-28') => ({
  transport: 'streamable-http' as const,
  url,
  headers: {},
  ...(declared ? { protocolVersion: declared } : {}),
});

/** A server and a gateway in front of it, for one describe block: stopped after it. */
function fronted<S extends { stop(): Promise<void> }>(name: string): { dir: string; server: S; g: RunningGateway } {
  const tmp = tempDir(`mcp-fleet-${name}-`);
  const t = { dir: tmp.dir } as { dir: string; server: S; g: RunningGateway };
  afterAll(async () => {
    await t.g?.stop();
    await t.server?.stop();
    tmp.cleanup();
  });
  return t;
}

describe('a sloppy 2026-07-28 server behind the gateway', () => {
  const t = fronted<ModernServer>('sloppy');
  const call = (tool: string, args: Record<string, unknown> = {}) => request(t.g.url).post('/mcp').send({ tool, arguments: args });
  const discovers = () => t.server.methods.filter((m) => m === 'server/discover').length;

  beforeAll(async () => {
    t.server = await startModernServer({ sloppy: true });
    t.g = await startGatewayWithMcpServer('sloppy', http(t.server.url, '2026-07-28'), t.dir, 'sloppy_hang', {
      DOWNSTREAM_TIMEOUT_MS: '1500',
      BREAKER_FAILURES: '3',
    });
  });
  it('a tools/call answer without resultType is bridged as complete', async () => {
    const res = await call('sloppy_no_result_type').expect(200);
    expect(res.body).toMatchObject({ success: true, result: { text: 'no resultType here' } });
    const mcp = (await (await post2026(t.g.url, 'tools/call', { name: 'sloppy_no_result_type', arguments: {} })).json()) as any;
    expect(mcp.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'no resultType here' }] });
  });

  it('one answer that breaks the revision’s rules is that call’s UPSTREAM_ERROR: the other tools keep working, the breaker stays closed, the connection stays', async () => {
    const before = discovers();
    // more bad answers than BREAKER_FAILURES, of two kinds
    for (const tool of ['sloppy_bad_result', 'sloppy_weird_result_type', 'sloppy_bad_result', 'sloppy_weird_result_type']) {
      const res = await call(tool).expect(502);
      expect(res.body).toMatchObject({ success: false, code: 'UPSTREAM_ERROR', service: 'sloppy' });
      expect(res.body.error).toMatch(/does not allow/);
    }
    await call('modern_echo', { text: 'still here' }).expect(200);
    const services = await request(t.g.url).get('/services').expect(200);
    expect(services.body.services.find((s: { id: string }) => s.id === 'sloppy')).toMatchObject({
      breaker: { state: 'closed' },
      routable: true,
    });
    expect(discovers()).toBe(before);
    // an MCP client gets that call's error too, not "unavailable"
    const mcp = (await (await post2026(t.g.url, 'tools/call', { name: 'sloppy_bad_result', arguments: {} })).json()) as any;
    expect(mcp.result).toMatchObject({ isError: true });
    expect(JSON.stringify(mcp.result.content)).toMatch(/UPSTREAM_ERROR|does not allow/);
  });

  it('fields no revision defines, in a listing and in an answer, are tolerated (what the revision defines is passed on)', async () => {
    const res = await call('sloppy_unknown_fields').expect(200);
    expect(res.body.mcp.content).toEqual([expect.objectContaining({ type: 'text', text: 'with extras' })]);
    const listed = (await (await post2026(t.g.url, 'tools/list', {})).json()) as any;
    expect(listed.result.tools.find((t: { name: string }) => t.name === 'sloppy_no_result_type')).toBeDefined();
  });

  it('a slow answer within the time limit arrives; a hung one is that call’s TIMEOUT and the other tools still answer', async () => {
    await call('sloppy_slow', { ms: 300 }).expect(200);
    const hung = await call('sloppy_hang').expect(504);
    expect(hung.body).toMatchObject({ success: false, code: 'TIMEOUT' });
    await call('modern_echo', { text: 'after the hang' }).expect(200);
  });
});

describe('a listen stream the server ends', () => {
  const t = fronted<ModernServer>('listen-ends');

  it('is opened again with growing backoff (not every second), and what changed meanwhile is read again', async () => {
    t.server = await startModernServer({ resources: true, listenEndsAfterMs: 50 });
    t.g = await startGatewayWithMcpServer('ends', http(t.server.url, '2026-07-28'), t.dir, 'modern_bump');
    const listens = () => t.server.methods.filter((m) => m === 'subscriptions/listen').length;
    const lists = () => t.server.methods.filter((m) => m === 'tools/list').length;
    const first = listens();
    const listed = lists();
    await new Promise((r) => setTimeout(r, 6500));
    // ended at 50 ms each time: opened again after 1, 2 then 4 s (at most 3 more in 6.5 s; without backoff, 6)
    const more = listens() - first;
    expect(more).toBeGreaterThanOrEqual(2);
    expect(more).toBeLessThanOrEqual(3);
    expect(lists()).toBeGreaterThan(listed);
  }, 20_000);
});

describe('the caller’s declared client capabilities reach the server', () => {
  const t = fronted<DualEraServer>('caps');

  beforeAll(async () => {
    t.server = await startDualEraServer();
    t.g = await startGatewayWithMcpServer('dual', http(t.server.url, '2026-07-28'), t.dir, 'dual_echo');
  });
  const callWith = async (capabilities: Record<string, unknown>) =>
    (await (
      await post2026(
        t.g.url,
        'tools/call',
        { name: 'test_missing_capability', arguments: {} },
        { meta: { ...META_2026, 'io.modelcontextprotocol/clientCapabilities': capabilities } },
      )
    ).json()) as { result?: any; error?: { code: number; message: string } };

  it('a request that needs a capability the caller did not declare is refused with -32021', async () => {
    for (const caps of [{}, { elicitation: {} }, { roots: {} }]) expect((await callWith(caps)).error).toMatchObject({ code: -32021 });
  });

  it('a caller that declared it is asked (input_required with the server’s own key)', async () => {
    const asked = await callWith({ sampling: {} });
    expect(asked.result).toMatchObject({ resultType: 'input_required', inputRequests: { llm: { method: 'sampling/createMessage' } } });
  });
});

describe('a server that speaks both eras, left for the gateway to find', () => {
  const t = fronted<DualEraServer>('found');

  beforeAll(async () => {
    t.server = await startDualEraServer();
    t.g = await startGatewayWithMcpServer('dual', http(t.server.url), t.dir, 'dual_echo');
  });
  it('an HTTP server that speaks both eras is spoken to in 2026-07-28 (server/discover, never initialize)', async () => {
    await request(t.g.url)
      .post('/mcp')
      .send({ tool: 'dual_echo', arguments: { text: 'hi' } })
      .expect(200);
    expect(t.server.received.some((m) => m.method === 'server/discover' && m.era === 'modern')).toBe(true);
    expect(t.server.received.filter((m) => m.era === 'legacy')).toEqual([]);
    const services = await request(t.g.url).get('/services').expect(200);
    expect(JSON.stringify(services.body.services.find((s: { id: string }) => s.id === 'dual'))).toContain('2026-07-28');
  });
});

describe('the conformance suite through the gateway: what passes directly passes through it', () => {
  const tmp = tempDir('mcp-fleet-fidelity-');
  let server: DualEraServer;
  const direct = new Map<string, ScenarioCounts>();
  const through = new Map<string, ScenarioCounts>();
  const eras = new Map<string, string>();
  // every front, for clients of both eras (a stdio server left to find is asked server/discover first, as an HTTP one)
  const runs = dualEraFronts('').flatMap(({ name }) => ERAS.map((era) => ({ era, key: `${era} client, server over ${name}` })));

  beforeAll(async () => {
    server = await startDualEraServer();
    for (const era of ERAS) direct.set(era, await requiredScenarioCounts(server.url, era, tmp.dir));
    for (const { name, mcp } of dualEraFronts(server.url)) {
      const g = await startGatewayWithMcpServer('dual', mcp, path.join(tmp.dir, name.replace(/\W+/g, '-')), 'dual_echo');
      try {
        for (const era of ERAS) {
          const key = `${era} client, server over ${name}`;
          through.set(key, await requiredScenarioCounts(`${g.url}/mcp`, era, tmp.dir, direct.get(era)!.passed));
        }
        // the era each is spoken to in: 2026-07-28, declared or found
        eras.set(name, (g.gw.registry.get('dual')?.upstream as McpDownstream).protocolEra);
      } finally {
        await g.stop();
      }
    }
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
    tmp.cleanup();
  });

  it('each is spoken to in 2026-07-28, declared or found (over stdio too: server/discover first)', () => {
    expect(Object.fromEntries(eras)).toEqual({
      'HTTP, declared': '2026-07-28',
      'HTTP, found': '2026-07-28',
      'stdio, declared': '2026-07-28',
      'stdio, found': '2026-07-28',
    });
  });

  it('the server passes every required scenario directly (both revisions)', () => {
    for (const era of ERAS) expect([...direct.get(era)!.failed.keys()]).toEqual([]);
  });

  it.each(runs)('$key', ({ era, key }) => {
    expect(lostThroughGateway(direct.get(era)!, through.get(key)!)).toEqual({});
  });
});
