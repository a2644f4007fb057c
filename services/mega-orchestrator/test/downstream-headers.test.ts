import type http from 'node:http';
import { getService, SERVICES } from '@mcp-fleet/inventory';
import { serve } from '@mcp-fleet/testing';
import type { RunningServer } from '@mcp-fleet/kit';
import { defaultDownstreams } from '../src/core/config';
import { DownstreamClient } from '../src/downstream/http-client';

describe('per-service downstream headers', () => {
  it('gives only the marketplace a bearer header, from MARKETPLACE_JWT_TOKEN', () => {
    const entries = SERVICES.filter((s) => s.id === 'marketplace-mcp' || s.id === 'memory-mcp');
    const withToken = defaultDownstreams({ MARKETPLACE_JWT_TOKEN: ' tok.en.value ' }, entries);
    expect(withToken.find((s) => s.id === 'marketplace-mcp')?.headers).toEqual({ authorization: 'Bearer tok.en.value' });
    expect(withToken.find((s) => s.id === 'memory-mcp')?.headers).toBeUndefined();
    expect(defaultDownstreams({ MARKETPLACE_JWT_TOKEN: '' }, [getService('marketplace-mcp')!])[0].headers).toBeUndefined();
  });

  it('sends the configured headers on every request, over the URL credentials', async () => {
    const seen: http.IncomingHttpHeaders[] = [];
    const server: RunningServer = await serve((req, res) => {
      seen.push(req.headers);
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    try {
      const u = new URL(server.url);
      const client = new DownstreamClient(`http://user:pw@127.0.0.1:${u.port}`, {
        connections: 1,
        maxResponseBytes: 1024,
        connectTimeoutMs: 1000,
        headers: { authorization: 'Bearer abc' },
      });
      const answer = await client.request({ method: 'GET', path: '/tools/list', timeoutMs: 2000 });
      expect(answer.json).toEqual({ ok: true });
      expect(seen[0].authorization).toBe('Bearer abc');
      await client.close();
    } finally {
      await server.stop();
    }
  });
});
