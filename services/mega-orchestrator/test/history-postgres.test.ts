/**
 * Several gateway instances behind a load balancer share one call history: with
 * SESSION_DATABASE_URL two instances on the machine's PostgreSQL see each other's sessions and
 * contexts. (2026-07-28 requests need no shared state at all; 2025-era sessions stay sticky.)
 */
import request from 'supertest';
import { describeWithBackend, pgScratchSchema, tempDir, type PgScratchSchema } from '@mcp-fleet/testing';
import { alphaTools, startDownstream, startGateway, type Downstream, type RunningGateway } from './helpers';

describeWithBackend('postgres', 'call history shared by two gateway instances', () => {
  let pg: PgScratchSchema;
  let alpha: Downstream;
  let a: RunningGateway;
  let b: RunningGateway;
  const tmpA = tempDir();
  const tmpB = tempDir();

  beforeAll(async () => {
    pg = await pgScratchSchema('gw_history');
    alpha = await startDownstream('alpha-mcp', alphaTools);
    const env = { SESSION_DATABASE_URL: pg.url, SESSION_FLUSH_MS: '20' };
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
});
