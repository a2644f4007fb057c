/**
 * Class: arguments nested deep enough to overflow the stack of whatever walks them (zod, JSON.stringify,
 * a handler's recursion). Such input is refused at the edge with the caller's 400 / -32602 before
 * anything recursive touches it, on every route into a service and through the gateway in both MCP
 * eras; a stack overflow past the edge is the service's own fault (INTERNAL, cause logged), never
 * reported as the caller's (packages/kit/test/internal-faults.test.ts). Legitimate nesting still works.
 */
import http from 'node:http';
import request from 'supertest';
import type { ServiceApp } from '@mcp-fleet/kit';
import { tempDir, testLogger } from '@mcp-fleet/testing';
import { createApp as createCache } from '../../services/cache-mcp-wrapper/src/app';
import { suiteConfig } from '../../services/cache-mcp-wrapper/test/cache-behaviour';
import { initSession, post2026, startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';

const DEPTH = 100_000;
/** Spellings of hostile depth: arrays, objects, both mixed, and deep below an innocent-looking top. */
const spellings: Record<string, string> = {
  arrays: '['.repeat(DEPTH) + ']'.repeat(DEPTH),
  objects: '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH),
  mixed: '[{"a":'.repeat(DEPTH / 2) + 'null' + '}]'.repeat(DEPTH / 2),
  'wide then deep': `{"ok":[1,2,3],"deep":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`,
  'just past the limit': '['.repeat(257) + ']'.repeat(257),
};

let tmp: ReturnType<typeof tempDir>;
let cache: ServiceApp;
let cacheServer: http.Server;
let g: RunningGateway;

beforeAll(async () => {
  tmp = tempDir();
  cache = await createCache({ config: suiteConfig({ CACHE_MAX_VALUE_BYTES: '1048576' }), logger: testLogger('cache') });
  cacheServer = http.createServer(cache.app).listen(0, '127.0.0.1');
  await new Promise((r) => cacheServer.once('listening', r));
  const { port } = cacheServer.address() as { port: number };
  g = await startGateway([{ id: 'cache-mcp-wrapper', url: `http://127.0.0.1:${port}` }], tmp.dir);
});

afterAll(async () => {
  await g.stop();
  cacheServer.closeAllConnections();
  await new Promise((r) => cacheServer.close(r));
  await cache.close();
  tmp.cleanup();
});

const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('hostile nesting is the caller’s 400, on every route', () => {
  it.each(Object.entries(spellings))('a service refuses %s at the edge (REST and /tools/call)', async (_label, value) => {
    for (const [route, body] of [
      ['/tools/cache', `{"action":"set","key":"k","value":${value}}`],
      ['/tools/call', `{"name":"cache","arguments":{"action":"set","key":"k","value":${value}}}`],
    ]) {
      const res = await request(cache.app).post(route).set('content-type', 'application/json').send(body);
      expect([route, res.status, res.body.code]).toEqual([route, 400, 'VALIDATION_ERROR']);
    }
  });

  it.each(Object.entries(spellings))('the gateway refuses %s in tools/call, 2025 session and 2026 stateless', async (_label, value) => {
    const session = await initSession(g.url);
    const old = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { ...mcpHeaders, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"cache","arguments":{"action":"set","key":"k","value":${value}}}}`,
    });
    const oldBody = JSON.parse((await old.text()).replace(/^event: message\ndata: /, '')) as { error?: { code: number; message: string } };
    expect(oldBody.error).toMatchObject({ code: -32602, message: expect.stringMatching(/nests deeper than 256 levels/) });

    const meta = '{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
    const modern = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { ...mcpHeaders, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'cache' },
      body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":${meta},"name":"cache","arguments":{"action":"set","key":"k","value":${value}}}}`,
    });
    const modernBody = (await modern.json()) as { error?: { code: number } };
    expect(modernBody.error).toMatchObject({ code: -32602 });

    // the gateway's native envelope on the same POST /mcp
    const native = await request(g.url)
      .post('/mcp')
      .set('content-type', 'application/json')
      .send(`{"tool":"cache","arguments":{"action":"set","key":"k","value":${value}}}`);
    expect([native.status, native.body.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('still stores and reads back legitimately nested values, directly and through the gateway', async () => {
    const value = JSON.parse('['.repeat(60) + '"deep"' + ']'.repeat(60));
    await request(cache.app).post('/tools/cache').send({ action: 'set', key: 'nested', value }).expect(200);
    const read = await request(cache.app).post('/tools/cache').send({ action: 'get', key: 'nested' }).expect(200);
    expect(read.body.result.value).toEqual(value);
    const through = await post2026(g.url, 'tools/call', { name: 'cache', arguments: { action: 'get', key: 'nested' } });
    const body = (await through.json()) as { result: { isError: boolean; structuredContent: { value: unknown } } };
    expect(body.result.isError).toBe(false);
    expect(body.result.structuredContent.value).toEqual(value);
  });
});
