/**
 * Several gateway instances behind a load balancer serve one fleet: with SESSION_DATABASE_URL and
 * REDIS_URL, two instances on the machine's PostgreSQL and Redis see each other's sessions and
 * contexts, count one rate limit between them, and answer 2026-07-28 requests alike (no shared
 * state needed). 2025-era sessions stay sticky (docs/deployment.md).
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describeWithBackend, pgScratchSchema, tempDir, type PgScratchSchema } from '@mcp-fleet/testing';
import { alphaTools, startDownstream, startGateway, type Downstream, type RunningGateway } from './helpers';

describeWithBackend('postgres', 'two gateway instances on PostgreSQL', () =>
  describeWithBackend('redis', 'and Redis', () => {
    let pg: PgScratchSchema;
    let alpha: Downstream;
    let a: RunningGateway;
    let b: RunningGateway;
    // Generous enough for the history test's calls; the limit test spends the rest.
    const LIMIT = 40;
    const tmpA = tempDir();
    const tmpB = tempDir();

    beforeAll(async () => {
      pg = await pgScratchSchema('gw_history');
      alpha = await startDownstream('alpha-mcp', alphaTools);
      const env = {
        SESSION_DATABASE_URL: pg.url,
        SESSION_FLUSH_MS: '20',
        REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
        RATE_LIMIT_PER_MINUTE: String(LIMIT),
        RATE_LIMIT_PREFIX: `test-${randomUUID()}`,
      };
      a = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmpA.dir, env);
      b = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmpB.dir, env);
    });

    afterAll(async () => {
      await a?.stop();
      await b?.stop();
      await alpha?.stop();
      await pg?.drop();
      tmpA.cleanup();
      tmpB.cleanup();
    });

    it('records a session and its contexts through one instance and reads them through the other', async () => {
      await request(a.url)
        .post('/mcp')
        .send({ tool: 'echo', arguments: { text: 'one' }, session_id: 'shared-1', context_id: 'ctx-a' })
        .expect(200);
      await request(b.url)
        .post('/mcp')
        .send({ tool: 'echo', arguments: { text: 'two' }, session_id: 'shared-1', context_id: 'ctx-b' })
        .expect(200);
      await request(a.url)
        .post('/mcp')
        .send({ tool: 'echo', arguments: { text: 3 }, session_id: 'shared-1', context_id: 'ctx-a' })
        .expect(400);
      await a.gw.ctx.history.flush();
      await b.gw.ctx.history.flush();
      for (const gw of [a, b]) {
        const res = await request(gw.url).get('/debug/contexts/shared-1').expect(200);
        expect(res.body).toMatchObject({ session_id: 'shared-1', totalCalls: 3, totalErrors: 1, keptCalls: 3 });
        const contexts = Object.fromEntries(
          res.body.contexts.map((c: { context_id: string; calls: number; errors: number }) => [c.context_id, c]),
        );
        expect(contexts['ctx-a']).toMatchObject({ calls: 2, errors: 1 });
        expect(contexts['ctx-b']).toMatchObject({ calls: 1, errors: 0 });
        expect(res.body.calls.map((c: { arguments: { text: unknown } }) => c.arguments.text)).toEqual([3, 'two', 'one']);
      }
      // The rows really are in PostgreSQL.
      const rows = await pg.admin.query('SELECT count(*)::int AS n FROM calls WHERE session_id = $1', ['shared-1']);
      expect(rows.rows[0].n).toBe(3);
      await request(b.url).get('/debug/contexts/nobody').expect(404);
    });

    it('answers 503 UPSTREAM_UNAVAILABLE, not a 500, when PostgreSQL fails a history read', async () => {
      await request(a.url)
        .post('/mcp')
        .send({ tool: 'echo', arguments: { text: 'x' }, session_id: 'pg-away' })
        .expect(200);
      await a.gw.ctx.history.flush();
      await pg.admin.query('ALTER TABLE calls RENAME TO calls_away');
      try {
        const res = await request(a.url).get('/debug/contexts/pg-away');
        expect({ status: res.status, code: res.body.code }).toEqual({ status: 503, code: 'UPSTREAM_UNAVAILABLE' });
        expect(res.body.error).toMatch(/session store could not be read/);
      } finally {
        await pg.admin.query('ALTER TABLE calls_away RENAME TO calls');
      }
      await request(a.url).get('/debug/contexts/pg-away').expect(200);
    });

    it('answers a 2026-07-28 (stateless) tools/call alike through either instance', async () => {
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
      for (const gw of [a, b]) {
        const res = await request(gw.url)
          .post('/mcp')
          .set({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' })
          .send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'any' }, _meta: meta } })
          .expect(200);
        expect(res.body).toMatchObject({ id: 7, result: { resultType: 'complete', isError: false, structuredContent: { text: 'any' } } });
      }
    });

    it('counts one rate limit between the instances (Redis): the first request over it is 429 whichever instance gets it', async () => {
      const used = Number(
        (
          await request(a.url)
            .post('/mcp')
            .send({ tool: 'echo', arguments: { text: 'x' } })
        ).headers['ratelimit-remaining'],
      );
      expect(used).toBeGreaterThan(2);
      // Spend what is left, alternating instances; each answer reports the shared remainder.
      for (let left = used - 1, i = 0; left >= 0; left--, i++) {
        const res = await request(i % 2 ? a.url : b.url)
          .post('/mcp')
          .send({ tool: 'echo', arguments: { text: 'x' } })
          .expect(200);
        expect(Number(res.headers['ratelimit-remaining'])).toBe(left);
      }
      const over = await request(b.url)
        .post('/mcp')
        .send({ tool: 'echo', arguments: { text: 'x' } });
      expect(over.status).toBe(429);
      expect(over.body).toMatchObject({ success: false, code: 'RATE_LIMITED' });
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
      const rpc = await request(a.url)
        .post('/mcp')
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(rpc.status).toBe(429);
      expect(rpc.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32029 } });
      // Reads are not counted.
      await request(a.url).get('/tools/list').expect(200);
    });
  }),
);
