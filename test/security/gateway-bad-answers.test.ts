/**
 * Class: one bad answer takes a server's other tools away (issue 29, fidelity). A tool whose answer
 * breaks the protocol's rules (whoever shaped it: the server, or data an attacker put into what the
 * tool returns) was read as the server being unreachable: UPSTREAM_UNAVAILABLE, the connection
 * dropped, a failure counted against the server's circuit breaker; a few such answers opened the
 * breaker and every other tool of that server failed with it. Now such an answer is that call's
 * UPSTREAM_ERROR only; a result without `resultType` is read as complete, as the revision reads an
 * older server's.
 *
 * A raw MCP server (no SDK: it answers exactly what it is told) in either era, behind a real
 * gateway with BREAKER_FAILURES=2, several spellings of a bad answer each; after them the server's
 * good tool still answers, its breaker is closed and the gateway never connected again.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tempDir } from '@mcp-fleet/testing';
import request from 'supertest';
import { startGatewayWithMcpServer, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';

type Era = '2025-11-25' | '2026-07-28';

/** What the `bad_<i>` tools answer as their JSON-RPC `result` (by era: the 2026 ones carry resultType where the spelling keeps it). */
const BAD: Record<Era, unknown[]> = {
  '2025-11-25': [
    { content: 'not a list' },
    null,
    'a string',
    [{ type: 'text', text: 'an array' }],
    { content: [{ type: 'text' }] },
    { content: [{ type: 'image', data: 42 }] },
  ],
  '2026-07-28': [
    { resultType: 'complete', content: 'not a list' },
    { resultType: 'pending', content: [] },
    { resultType: 42, content: [] },
    null,
    'a string',
    { resultType: 'complete', content: [{ type: 'text' }] },
    { resultType: 'input_required' },
  ],
};

interface RawServer {
  url: string;
  /** Methods received (initialize, server/discover, ...). */
  methods: string[];
  stop(): Promise<void>;
}

async function startRawServer(era: Era): Promise<RawServer> {
  const methods: string[] = [];
  const modern = era === '2026-07-28';
  const tools = [
    { name: 'good', description: 'Answers ok.', inputSchema: { type: 'object', properties: {} } },
    { name: 'no_result_type', description: 'Answers without resultType.', inputSchema: { type: 'object', properties: {} } },
    ...BAD[era].map((_, i) => ({ name: `bad_${i}`, description: 'Answers badly.', inputSchema: { type: 'object', properties: {} } })),
  ];
  const complete = modern ? { resultType: 'complete' } : {};
  const answer = (method: string, params: Record<string, any>): { result?: unknown; error?: unknown; status?: number } => {
    switch (method) {
      case 'initialize':
        if (modern) return { status: 404, error: { code: -32601, message: 'initialize is not served here' } };
        return { result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } } };
      case 'server/discover':
        if (!modern) return { status: 400, error: { code: -32600, message: 'initialize first' } };
        return { result: { ...complete, supportedVersions: [era], capabilities: { tools: {} }, ttlMs: 0, cacheScope: 'private' } };
      case 'ping':
        return { result: {} };
      case 'tools/list':
        return { result: { ...complete, tools, ...(modern ? { ttlMs: 0, cacheScope: 'private' } : {}) } };
      case 'tools/call': {
        if (params.name === 'good') return { result: { ...complete, content: [{ type: 'text', text: 'ok' }] } };
        if (params.name === 'no_result_type') return { result: { content: [{ type: 'text', text: 'bridged' }] } };
        const i = /^bad_(\d+)$/.exec(String(params.name))?.[1];
        if (i !== undefined) return { result: BAD[era][Number(i)] };
        return { error: { code: -32602, message: `Unknown tool: ${params.name}` } };
      }
    }
    return { status: 404, error: { code: -32601, message: `Method not found: ${method}` } };
  };
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString()) as { id?: unknown; method?: string; params?: Record<string, unknown> };
      if (msg.method) methods.push(msg.method);
      if (msg.id === undefined || !msg.method) return void res.writeHead(202).end();
      const { status = 200, ...body } = answer(msg.method, msg.params ?? {});
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...body }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    methods,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.each(['2025-11-25', '2026-07-28'] as const)('a %s server whose tools answer against the rules', (era) => {
  const tmp = tempDir('mcp-fleet-bad-answers-');
  let server: RawServer;
  let g: RunningGateway;
  const call = (tool: string) => request(g.url).post('/mcp').send({ tool, arguments: {} });

  beforeAll(async () => {
    server = await startRawServer(era);
    g = await startGatewayWithMcpServer('raw', { transport: 'streamable-http', url: server.url, headers: {} }, tmp.dir, 'good', {
      BREAKER_FAILURES: '2',
    });
  });
  afterAll(async () => {
    await g?.stop();
    await server?.stop();
    tmp.cleanup();
  });

  it('is spoken to in its era (found, not declared)', () => {
    expect(server.methods[0]).toBe('server/discover');
    expect(server.methods.includes('initialize')).toBe(era === '2025-11-25');
  });

  it('each bad answer is that call’s UPSTREAM_ERROR; the good tool still answers, the breaker stays closed, no reconnection', async () => {
    const connects = () => server.methods.filter((m) => m === 'initialize' || m === 'server/discover').length;
    const before = connects();
    for (let i = 0; i < BAD[era].length; i++) {
      const res = await call(`bad_${i}`);
      expect({ i, status: res.status, code: res.body.code }).toEqual({ i, status: 502, code: 'UPSTREAM_ERROR' });
      expect(res.body.error).toMatch(/does not allow/);
      await call('good').expect(200);
    }
    const services = await request(g.url).get('/services').expect(200);
    expect(services.body.services.find((s: { id: string }) => s.id === 'raw')).toMatchObject({
      status: 'healthy',
      breaker: { state: 'closed' },
      routable: true,
    });
    expect(connects()).toBe(before);
  });

  it('a result without resultType is read as complete', async () => {
    const res = await call('no_result_type').expect(200);
    expect(res.body).toMatchObject({ success: true, result: { text: 'bridged' } });
  });
});
