import request from 'supertest';
import { tempDir } from '@mcp-fleet/testing';
import { alphaTools, startDownstream, startGateway, type Downstream, type RunningGateway } from './helpers';

let tmp: ReturnType<typeof tempDir>;
let alpha: Downstream;
let g: RunningGateway;

beforeAll(async () => {
  tmp = tempDir();
  alpha = await startDownstream('alpha-mcp', alphaTools);
  g = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmp.dir, { SESSION_MAX_CALLS: '3', SESSION_FLUSH_MS: '1000' });
});

afterAll(async () => {
  await g.stop();
  await alpha.stop();
  tmp.cleanup();
});

const call = (body: object) => request(g.url).post('/mcp').send(body);

describe('session and context records', () => {
  it('records calls that carry session_id, with contexts, redacted arguments and outcomes', async () => {
    await call({ tool: 'echo', arguments: { text: 'one' }, session_id: 'alice', context_id: 'plan' }).expect(200);
    await call({ tool: 'write_note', arguments: { note: 'n', password: 'hunter2' }, session_id: 'alice', context_id: 'write' }).expect(200);
    await call({ tool: 'echo', arguments: { text: 3 }, session_id: 'alice', context_id: 'plan' }).expect(400);
    await call({ tool: 'echo', arguments: { text: 'no session' } }).expect(200);

    // Flushed on read even though SESSION_FLUSH_MS has not passed.
    const res = await request(g.url).get('/debug/contexts/alice').expect(200);
    expect(res.body).toMatchObject({ session_id: 'alice', transport: 'native', totalCalls: 3, totalErrors: 1, keptCalls: 3 });
    expect(res.body.contexts).toHaveLength(2);
    expect(res.body.contexts.find((c: { context_id: string }) => c.context_id === 'plan')).toMatchObject({ calls: 2, errors: 1 });
    const [latest, middle] = res.body.calls;
    expect(latest).toMatchObject({ tool: 'echo', success: false, code: 'VALIDATION_ERROR', service: 'alpha-mcp', mode: 'auto' });
    expect(middle).toMatchObject({ tool: 'write_note', success: true, arguments: { note: 'n', password: '[redacted]' } });
    expect(JSON.stringify(res.body)).not.toMatch(/hunter2/);
  });

  it('pages the calls and refuses a forged cursor', async () => {
    const first = await request(g.url).get('/debug/contexts/alice?limit=2').expect(200);
    expect(first.body.calls).toHaveLength(2);
    const second = await request(g.url).get(`/debug/contexts/alice?limit=2&cursor=${first.body.nextCursor}`).expect(200);
    expect(second.body.calls).toHaveLength(1);
    expect(second.body.nextCursor).toBeUndefined();
    await request(g.url).get('/debug/contexts/alice?cursor=forged').expect(400);
    await request(g.url).get('/debug/contexts/alice?limit=9999').expect(400);
  });

  it('keeps at most SESSION_MAX_CALLS calls per session', async () => {
    for (let i = 0; i < 5; i++) await call({ tool: 'echo', arguments: { text: `n${i}` }, session_id: 'bob' }).expect(200);
    const res = await request(g.url).get('/debug/contexts/bob').expect(200);
    expect(res.body).toMatchObject({ totalCalls: 5, keptCalls: 3 });
    expect(res.body.calls.map((c: { arguments: { text: string } }) => c.arguments.text)).toEqual(['n4', 'n3', 'n2']);
  });

  it('stores long arguments cut to about 1 KB, flagged truncated', async () => {
    await call({ tool: 'echo', arguments: { text: 'y'.repeat(900), more: 'z'.repeat(900) }, session_id: 'carol' }).expect(400);
    const res = await request(g.url).get('/debug/contexts/carol').expect(200);
    expect(res.body.calls[0].arguments).toMatchObject({ truncated: true, excerpt: expect.any(String) });
    expect(res.body.calls[0].arguments.excerpt.length).toBeLessThanOrEqual(1024);
  });

  it('answers NOT_FOUND for a session it never saw', async () => {
    const res = await request(g.url).get('/debug/contexts/nobody').expect(404);
    expect(res.body).toMatchObject({ success: false, code: 'NOT_FOUND', service: 'mega-orchestrator' });
  });

  it('writes queued records when the gateway closes', async () => {
    const other = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmp.dir.concat('/second'), { SESSION_FLUSH_MS: '60000' });
    await request(other.url)
      .post('/mcp')
      .send({ tool: 'echo', arguments: { text: 'late' }, session_id: 'dave' })
      .expect(200);
    expect(other.gw.history.queued).toBe(1);
    await other.stop();
    const reopened = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmp.dir.concat('/second'));
    try {
      const res = await request(reopened.url).get('/debug/contexts/dave').expect(200);
      expect(res.body.calls[0].arguments).toEqual({ text: 'late' });
    } finally {
      await reopened.stop();
    }
  });
});
