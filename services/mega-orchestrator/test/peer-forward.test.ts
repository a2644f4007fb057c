/**
 * Behind a load balancer, a 2026-07-28 call whose MCP server asked the client something lives in
 * the instance that started it. With MCP_INSTANCE_URL and one MCP_STATE_SECRET on every instance, a
 * retry (requestState + inputResponses) or a tasks/update that reaches another instance is forwarded
 * to the one holding the call. Two real gateway instances, each with its own stdio MCP server (a
 * child process), on the machine's PostgreSQL (the shared task store).
 */
import path from 'node:path';
import { describeWithBackend, freePort, pgScratchSchema, tempDir, testLogger, type PgScratchSchema } from '@mcp-fleet/testing';
import { InputExchanges } from '../src/mcp/client-requests';
import { META_2026, post2026, sleep, startGatewayWithStdioServer, type RunningGateway } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'conformance-fixture-server.ts');
const SECRET = 'a-secret-shared-by-every-instance-0123456789';
const CAPS = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
const META = { ...META_2026, 'io.modelcontextprotocol/clientCapabilities': CAPS };

/** A gateway instance with its own stdio MCP server that asks its client, reachable by the others. */
async function startInstance(dir: string, env: Record<string, string>): Promise<RunningGateway> {
  const port = await freePort();
  return startGatewayWithStdioServer('asker', FIXTURE, dir, 'test_elicitation', {
    PORT: String(port),
    MCP_INSTANCE_URL: `http://127.0.0.1:${port}/mcp`,
    MCP_STATE_SECRET: SECRET,
    MCP_INPUT_TIMEOUT_MS: '20000',
    ...env,
  });
}

interface Rpc {
  status: number;
  result?: Record<string, any>;
  error?: { code: number; message: string };
}

describeWithBackend('postgres', 'a retry that reaches another gateway instance', () => {
  const tmpA = tempDir('mcp-fleet-peer-a-');
  const tmpB = tempDir('mcp-fleet-peer-b-');
  let pg: PgScratchSchema;
  let a: RunningGateway;
  let b: RunningGateway;

  beforeAll(async () => {
    pg = await pgScratchSchema('gw_peers');
    const start = (dir: string) => startInstance(dir, { SESSION_DATABASE_URL: pg.url });
    [a, b] = await Promise.all([start(tmpA.dir), start(tmpB.dir)]);
  }, 60_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await pg?.drop();
    tmpA.cleanup();
    tmpB.cleanup();
  });

  async function rpc(
    g: RunningGateway,
    method: string,
    params: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): Promise<Rpc> {
    const res = await post2026(g.url, method, params, {
      meta: META,
      headers: { 'mcp-name': String(params.name ?? params.taskId), ...headers },
    });
    return { status: res.status, ...((await res.json()) as { result?: Record<string, any>; error?: Rpc['error'] }) };
  }
  const text = (r: Rpc) => (r.result?.content as { text: string }[] | undefined)?.[0]?.text ?? '';

  it('forwards the retry to the instance holding the call, which finishes it', async () => {
    const first = await rpc(a, 'tools/call', { name: 'test_elicitation', arguments: { message: 'Who?' } });
    expect(first.result).toMatchObject({ resultType: 'input_required' });
    expect([a.gw.ctx.inputs.waiting, b.gw.ctx.inputs.waiting]).toEqual([1, 0]);

    const answer = { 'elicitation-1': { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } } };
    const done = await rpc(b, 'tools/call', {
      name: 'test_elicitation',
      arguments: { message: 'Who?' },
      inputResponses: answer,
      requestState: first.result!.requestState,
    });
    expect(done.status).toBe(200);
    expect(done.result).toMatchObject({ resultType: 'complete' });
    expect(done.result).not.toHaveProperty('isError');
    expect(text(done)).toBe('User response: action=accept, content={"username":"ada","email":"ada@example.com"}');
    expect([a.gw.ctx.inputs.waiting, b.gw.ctx.inputs.waiting]).toEqual([0, 0]);
  });

  it('carries a call through two rounds whose retries each land on the other instance', async () => {
    const r1 = await rpc(b, 'tools/call', { name: 'ask_twice', arguments: {} });
    expect(r1.result).toMatchObject({ resultType: 'input_required' });
    const r2 = await rpc(a, 'tools/call', {
      name: 'ask_twice',
      arguments: {},
      inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Ada' } } },
      requestState: r1.result!.requestState,
    });
    expect(r2.result).toMatchObject({ resultType: 'input_required', inputRequests: { 'elicitation-2': expect.any(Object) } });
    const done = await rpc(a, 'tools/call', {
      name: 'ask_twice',
      arguments: {},
      inputResponses: { 'elicitation-2': { action: 'accept', content: { colour: 'teal' } } },
      requestState: r2.result!.requestState,
    });
    expect(text(done)).toBe('Hello Ada, who likes teal.');
    expect(b.gw.ctx.inputs.waiting).toBe(0);
  });

  it('forwards nothing it cannot trust or reach: a tampered state, a forwarded request, an instance that is gone', async () => {
    const first = await rpc(a, 'tools/call', { name: 'test_elicitation', arguments: { message: 'm' } });
    const state = first.result!.requestState as string;
    const retry = (g: RunningGateway, requestState: string, headers?: Record<string, string>) =>
      rpc(
        g,
        'tools/call',
        {
          name: 'test_elicitation',
          arguments: { message: 'm' },
          inputResponses: { 'elicitation-1': { action: 'decline' } },
          requestState,
        },
        headers,
      );

    // One character changed (the instance's address, here): the signature no longer holds.
    const tampered = state.replace(/^v2\.(.)/, (_, c: string) => `v2.${c === 'a' ? 'b' : 'a'}`);
    expect((await retry(b, tampered)).error).toMatchObject({ code: -32602, message: expect.stringContaining('integrity check') });
    // A request another instance forwarded is never passed on again.
    expect((await retry(b, state, { 'mcp-fleet-forwarded-by': 'http://elsewhere/mcp' })).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('lives on another gateway instance'),
    });
    expect(a.gw.ctx.inputs.waiting).toBe(1);

    // A state signed by an instance that has stopped: refused at once, not hung.
    const gone = `http://127.0.0.1:${await freePort()}/mcp`;
    const elsewhere = new InputExchanges({ ttlMs: 5000, logger: testLogger('gone'), instanceUrl: gone, secret: SECRET, gatherMs: 0 });
    const parked = await elsewhere.call(
      (ask, signal) =>
        ask('elicitation/create', { message: 'm', requestedSchema: { type: 'object', properties: {} } }, signal).then(() => ({})),
      { owner: '', tool: 'test_elicitation', capabilities: CAPS },
      new AbortController().signal,
    );
    const t0 = Date.now();
    expect((await retry(b, parked.requestState as string)).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('lives on another gateway instance'),
    });
    expect(Date.now() - t0).toBeLessThan(4000);
    elsewhere.close();

    // The call on A is still there for its real retry.
    expect(text(await retry(b, state))).toBe('User response: action=decline, content={}');
    expect(a.gw.ctx.inputs.waiting).toBe(0);
  });

  it('forwards tasks/update to the instance running the task', async () => {
    const created = await rpc(a, 'tools/call', { name: 'confirm_delete', arguments: { filename: 'b.txt' } });
    expect(created.result).toMatchObject({ resultType: 'task' });
    const taskId = created.result!.taskId as string;
    const until = async (status: string) => {
      for (let i = 0; i < 100; i++) {
        const r = await rpc(b, 'tasks/get', { taskId });
        if (r.result?.status === status) return r.result;
        await sleep(50);
      }
      throw new Error(`task ${taskId} never became ${status}`);
    };
    await until('input_required');
    const ack = await rpc(b, 'tasks/update', {
      taskId,
      inputResponses: { 'elicitation-1': { action: 'accept', content: { confirm: true } } },
    });
    expect(ack.result).toEqual({ resultType: 'complete' });
    const done = await until('completed');
    expect(done.result.content).toEqual([{ type: 'text', text: 'Deleted b.txt.' }]);
  });
});

describe('a forwarded retry and rate limits', () => {
  const tmpC = tempDir('mcp-fleet-peer-c-');
  const tmpD = tempDir('mcp-fleet-peer-d-');
  let c: RunningGateway;
  let d: RunningGateway;

  beforeAll(async () => {
    const start = (dir: string) => startInstance(dir, { RATE_LIMIT_PER_MINUTE: '3' });
    [c, d] = await Promise.all([start(tmpC.dir), start(tmpD.dir)]);
  }, 60_000);

  afterAll(async () => {
    await c?.stop();
    await d?.stop();
    tmpC.cleanup();
    tmpD.cleanup();
  });

  const list = (g: RunningGateway, headers: Record<string, string> = {}) =>
    post2026(g.url, 'tools/list', {}, { meta: META, headers }).then(async (r) => ({ status: r.status, body: await r.text() }));

  it('is counted once, by the instance it reached; a forwarded mark without a valid proof is counted', async () => {
    // The counts are per clock minute: start early in one.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 15_000) await sleep(left + 100);

    const call = { name: 'test_elicitation', arguments: { message: 'Who?' } };
    const first = await post2026(c.url, 'tools/call', call, { meta: META }); // C: 1
    const state = ((await first.json()) as { result: { requestState: string } }).result.requestState;
    const done = await post2026(
      d.url,
      'tools/call',
      { ...call, inputResponses: { 'elicitation-1': { action: 'decline' } }, requestState: state },
      { meta: META },
    ); // D: 1, forwarded to C (not counted there)
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('action=decline');
    expect((await list(c)).status).toBe(200); // C: 2
    expect((await list(c)).status).toBe(200); // C: 3
    const refused = await list(c);
    expect(refused.status).toBe(429);
    expect(refused.body).toContain('"code":-32029');

    // A caller's own forwarded mark and proof, not made with the secret: counted like any request.
    const forged = { 'mcp-fleet-forwarded-by': `${c.url}/mcp`, 'mcp-fleet-forward-proof': `${Date.now()}.not-a-signature` };
    expect((await list(d, forged)).status).toBe(200); // D: 2
    expect((await list(d)).status).toBe(200); // D: 3
    expect((await list(d, forged)).status).toBe(429);
  }, 90_000);
});
