import type http from 'node:http';
import net from 'node:net';
import request from 'supertest';
import type { RunningServer } from '@mcp-fleet/kit';
import { serve, tempDir, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/http/app';
import {
  alphaTools,
  betaTools,
  gatewayConfig,
  startDownstream,
  startGateway,
  TEST_INVENTORY,
  type Downstream,
  type RunningGateway,
} from './helpers';

let tmp: ReturnType<typeof tempDir>;

beforeAll(() => {
  tmp = tempDir();
});

afterAll(() => tmp.cleanup());

const call = (g: RunningGateway, body: object) => request(g.url).post('/mcp').send(body);

describe('a downstream going away and coming back', () => {
  let alpha: Downstream;
  let beta: Downstream;
  let g: RunningGateway;

  beforeAll(async () => {
    alpha = await startDownstream('alpha-mcp', alphaTools);
    beta = await startDownstream('beta-mcp', betaTools);
    g = await startGateway(
      [
        { id: 'alpha-mcp', url: alpha.url },
        { id: 'beta-mcp', url: beta.url, primaryFor: ['system_info'] },
      ],
      `${tmp.dir}/a`,
    );
  });

  afterAll(async () => {
    await g.stop();
    await alpha.stop();
    await beta.stop();
  });

  it('drops its tools after the next poll, fails its calls fast, keeps the others working, and recovers on restart', async () => {
    await alpha.stop();
    await g.gw.refresh();
    const list = await request(g.url).get('/tools/list').expect(200);
    const names = list.body.tools.map((t: { name: string }) => t.name);
    expect(names).not.toContain('echo');
    expect(names).not.toContain('alpha-mcp__system_info');
    expect(names).toContain('ping_beta');

    const services = await request(g.url).get('/services').expect(200);
    const a = services.body.services.find((s: { id: string }) => s.id === 'alpha-mcp');
    expect(a).toMatchObject({ status: 'unhealthy', reason: `connection refused at ${alpha.url}`, tools: 0, routable: false });
    expect((await request(g.url).get('/health').expect(200)).body).toMatchObject({ status: 'degraded', downstream: { unhealthy: 1 } });
    const metrics = await request(g.url).get('/metrics').expect(200);
    expect(metrics.text).toMatch(/mcp_fleet_downstream_up\{downstream="alpha-mcp",service="mega-orchestrator"\} 0/);
    expect(metrics.text).toMatch(/mcp_fleet_downstream_up\{downstream="beta-mcp",service="mega-orchestrator"\} 1/);

    const down = await call(g, { tool: 'echo', arguments: { text: 'x' } }).expect(503);
    expect(down.body).toMatchObject({ success: false, code: 'UPSTREAM_UNAVAILABLE', service: 'mega-orchestrator', tool: 'echo' });
    expect(down.body.error).toMatch(/alpha-mcp/);
    expect(down.headers['retry-after']).toEqual(expect.any(String));
    await call(g, { tool: 'alpha-mcp__echo', arguments: { text: 'x' } }).expect(503);
    await request(g.url)
      .post('/mcp/alpha-mcp')
      .send({ tool: 'echo', arguments: { text: 'x' } })
      .expect(503);
    await request(g.url).get('/mcp/alpha-mcp/health').expect(503);
    await call(g, { tool: 'ping_beta', arguments: {} }).expect(200);

    await alpha.start(); // same port
    await g.gw.refresh();
    const back = await call(g, { tool: 'echo', arguments: { text: 'back' } }).expect(200);
    expect(back.body.result.text).toBe('back');
    expect((await request(g.url).get('/health').expect(200)).body.status).toBe('healthy');
  });

  it('records why a service is unhealthy when its /health fails', async () => {
    beta.failHealth = true;
    await g.gw.refresh();
    const services = await request(g.url).get('/services').expect(200);
    expect(services.body.services.find((s: { id: string }) => s.id === 'beta-mcp')).toMatchObject({
      status: 'unhealthy',
      reason: 'health answered 503',
    });
    beta.failHealth = false;
    await g.gw.refresh();
  });

  it('auto mode fails over to another owner when the primary is down; primary mode does not', async () => {
    await beta.stop();
    await g.gw.refresh();
    const auto = await call(g, { tool: 'system_info', arguments: {} }).expect(200);
    expect(auto.body).toMatchObject({ service: 'alpha-mcp', result: { from: 'alpha-mcp' } });
    const primary = await call(g, { tool: 'system_info', arguments: {}, mode: 'primary' }).expect(503);
    expect(primary.body.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(primary.body.error).toMatch(/beta-mcp/);
    await call(g, { tool: 'beta-mcp__system_info', arguments: {} }).expect(503);
    const list = await request(g.url).get('/tools/list').expect(200);
    const sys = list.body.tools.find((t: { name: string }) => t.name === 'system_info');
    expect(sys.service).toBe('alpha-mcp');
    const modes = await request(g.url).get('/modes').expect(200);
    expect(modes.body.routing[0]).toMatchObject({ tool: 'system_info', auto: 'alpha-mcp', primaryMode: null });
    await beta.start();
    await g.gw.refresh();
    expect((await call(g, { tool: 'system_info', arguments: {} }).expect(200)).body.service).toBe('beta-mcp');
  });

  it('fails over at call time when the primary refuses the connection before the next poll noticed', async () => {
    const before = (await request(g.url).get('/stats')).body.failovers;
    await beta.stop(); // no refresh: the catalog still says beta-mcp is healthy
    const res = await call(g, { tool: 'system_info', arguments: {} }).expect(200);
    expect(res.body.service).toBe('alpha-mcp');
    expect((await request(g.url).get('/stats')).body.failovers).toBe(before + 1);
    await beta.start();
    await g.gw.refresh();
  });

  it('retries an idempotent tool once after a dropped connection, never a non-idempotent one', async () => {
    const before = (await request(g.url).get('/stats')).body.retries;
    alpha.dropNext = 1;
    const ok = await call(g, { tool: 'echo', arguments: { text: 'again' } }).expect(200);
    expect(ok.body.result.text).toBe('again');
    expect((await request(g.url).get('/stats')).body.retries).toBe(before + 1);

    alpha.dropNext = 1;
    const writes = alpha.calls.get('write_note') ?? 0;
    const failed = await call(g, { tool: 'write_note', arguments: { note: 'once' } }).expect(503);
    expect(failed.body.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(alpha.calls.get('write_note') ?? 0).toBe(writes);
    expect((await request(g.url).get('/stats')).body.retries).toBe(before + 1);
    await call(g, { tool: 'write_note', arguments: { note: 'now' } }).expect(200);
  });
});

describe('time limits and the circuit breaker', () => {
  let alpha: Downstream;
  let g: RunningGateway;

  beforeAll(async () => {
    alpha = await startDownstream('alpha-mcp', alphaTools);
    g = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], `${tmp.dir}/b`, {
      DOWNSTREAM_TIMEOUT_MS: '300',
      BREAKER_FAILURES: '2',
      BREAKER_COOLDOWN_MS: '400',
    });
  });

  afterAll(async () => {
    await g.stop();
    await alpha.stop();
  });

  it('answers TIMEOUT 504 for a call slower than DOWNSTREAM_TIMEOUT_MS: the service’s own within its budget, else the gateway’s', async () => {
    // a kit service is told the time left (300 ms less 30) and ends the call itself
    const res = await call(g, { tool: 'sleep', arguments: { ms: 3000 } }).expect(504);
    expect(res.body).toMatchObject({ success: false, code: 'TIMEOUT', service: 'alpha-mcp', tool: 'sleep' });
    expect(res.body.error).toMatch(/within 270 ms/);
    // one that never answers is given up on at the gateway's limit
    alpha.hangNext = 1;
    const hung = await call(g, { tool: 'echo', arguments: { text: 'hang' } }).expect(504);
    expect(hung.body).toMatchObject({ success: false, code: 'TIMEOUT', service: 'mega-orchestrator', tool: 'echo' });
    expect(hung.body.error).toMatch(/300 ms/);
    await call(g, { tool: 'echo', arguments: { text: 'still fine' } }).expect(200); // resets the failure count
  });

  it('opens after consecutive dropped connections, answers UPSTREAM_UNAVAILABLE with Retry-After, then lets a trial through', async () => {
    // (fail is not idempotent: a dropped call is not tried again)
    alpha.dropNext = 2;
    await call(g, { tool: 'fail', arguments: {} }).expect(503);
    await call(g, { tool: 'fail', arguments: {} }).expect(503);
    const echoes = alpha.calls.get('echo') ?? 0;
    const open = await call(g, { tool: 'echo', arguments: { text: 'x' } }).expect(503);
    expect(open.body).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(open.body.error).toMatch(/circuit breaker/);
    expect(Number(open.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(alpha.calls.get('echo') ?? 0).toBe(echoes); // refused without calling the downstream
    const services = await request(g.url).get('/services').expect(200);
    expect(services.body.services[0]).toMatchObject({ id: 'alpha-mcp', status: 'healthy', breaker: { state: 'open' }, routable: false });

    await new Promise((r) => setTimeout(r, 450));
    await call(g, { tool: 'echo', arguments: { text: 'trial' } }).expect(200);
    const after = await request(g.url).get('/debug/cache').expect(200);
    expect(after.body.services['alpha-mcp'].breaker).toMatchObject({ state: 'closed', timesOpened: 1 });
  });

  it('a tool that fails with INTERNAL, however often, fails only its own calls: a caller cannot open the breaker for everyone', async () => {
    const before = (await request(g.url).get('/debug/cache').expect(200)).body.services['alpha-mcp'].breaker.timesOpened;
    for (let i = 0; i < 6; i++) {
      const res = await call(g, { tool: 'fail', arguments: {} }).expect(500);
      expect(res.body).toMatchObject({ success: false, code: 'INTERNAL', service: 'alpha-mcp' });
    }
    await call(g, { tool: 'echo', arguments: { text: 'still served' } }).expect(200);
    const after = await request(g.url).get('/debug/cache').expect(200);
    expect(after.body.services['alpha-mcp'].breaker).toMatchObject({ state: 'closed', consecutiveFailures: 0, timesOpened: before });
  });

  it('calls that run out of time while the service answers others do not open its breaker', async () => {
    const before = (await request(g.url).get('/debug/cache').expect(200)).body.services['alpha-mcp'].breaker.timesOpened;
    alpha.hangNext = 3;
    // (supertest sends when awaited: then() starts each now)
    const hung = [1, 2, 3].map((i) => call(g, { tool: 'echo', arguments: { text: `hang ${i}` } }).then((res) => res));
    await new Promise((r) => setTimeout(r, 100)); // the three are at the service, unanswered
    await call(g, { tool: 'echo', arguments: { text: 'answered meanwhile' } }).expect(200);
    for (const res of await Promise.all(hung)) expect(res.status).toBe(504);
    await call(g, { tool: 'echo', arguments: { text: 'not refused' } }).expect(200);
    const after = await request(g.url).get('/debug/cache').expect(200);
    expect(after.body.services['alpha-mcp'].breaker).toMatchObject({ state: 'closed', timesOpened: before });
  });

  it('does not count the downstream’s own validation errors against the breaker', async () => {
    for (let i = 0; i < 4; i++) await call(g, { tool: 'echo', arguments: { text: 1 } }).expect(400);
    await call(g, { tool: 'echo', arguments: { text: 'ok' } }).expect(200);
  });
});

describe('the circuit breaker and a service that falls silent', () => {
  let alpha: Downstream;
  let g: RunningGateway;

  beforeAll(async () => {
    alpha = await startDownstream('alpha-mcp', alphaTools);
    // polled once at start and not again during the test: nothing is heard from it but its calls
    g = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], `${tmp.dir}/silent`, {
      DOWNSTREAM_TIMEOUT_MS: '300',
      BREAKER_FAILURES: '2',
      BREAKER_COOLDOWN_MS: '400',
      HEALTH_POLL_MS: '600000',
    });
  });

  afterAll(async () => {
    await g.stop();
    await alpha.stop();
  });

  it('opens after consecutive calls that ran out of time with nothing heard from the service meanwhile', async () => {
    alpha.hangNext = 2;
    await call(g, { tool: 'echo', arguments: { text: 'hang 1' } }).expect(504);
    await call(g, { tool: 'echo', arguments: { text: 'hang 2' } }).expect(504);
    const open = await call(g, { tool: 'echo', arguments: { text: 'x' } }).expect(503);
    expect(open.body.error).toMatch(/circuit breaker/);
    await new Promise((r) => setTimeout(r, 450));
    await call(g, { tool: 'echo', arguments: { text: 'trial' } }).expect(200);
  });
});

describe('the poller on its own', () => {
  it('notices a downstream that stops, within a few poll intervals', async () => {
    const alpha = await startDownstream('alpha-mcp', alphaTools);
    const gw = createApp({
      config: gatewayConfig(`${tmp.dir}/c`, { HEALTH_POLL_MS: '100' }),
      logger: testLogger('gateway'),
      services: [{ id: 'alpha-mcp', url: alpha.url }],
      inventory: TEST_INVENTORY,
    });
    const has = async (name: string) =>
      (await request(gw.app).get('/tools/list')).body.tools.some((t: { name: string }) => t.name === name);
    const waitFor = async (want: boolean) => {
      const deadline = Date.now() + 3000;
      while ((await has('echo')) !== want) {
        if (Date.now() > deadline) throw new Error(`echo listed should be ${want}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      await waitFor(true);
      await alpha.stop();
      await waitFor(false);
      await alpha.start();
      await waitFor(true);
    } finally {
      await gw.close();
      await alpha.stop();
    }
  });
});

describe('a misbehaving downstream behind a path prefix and Basic auth', () => {
  let raw: RunningServer;
  let g: RunningGateway;
  let toolList = '';
  const seen: { path: string; auth?: string }[] = [];

  beforeAll(async () => {
    toolList = JSON.stringify({
      service: 'odd-mcp',
      tools: [
        { name: 'html', description: 'Answers HTML.', inputSchema: { type: 'object' }, annotations: {} },
        { name: 'bad name!', description: 'Not routable.', inputSchema: { type: 'object' } },
        { name: 'x'.repeat(65), description: 'Too long.' },
        { description: 'No name.' },
      ],
    });
    raw = await serve((req: http.IncomingMessage, res: http.ServerResponse) => {
      seen.push({ path: req.url ?? '', auth: req.headers.authorization });
      if (!req.url?.startsWith('/prefix/')) return res.writeHead(404).end();
      if (req.url === '/prefix/health') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"healthy"}');
      if (req.url === '/prefix/tools/list') return res.writeHead(200, { 'content-type': 'application/json' }).end(toolList);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>'));
    });
    g = await startGateway([{ id: 'odd-mcp', url: `http://user:s3cret@127.0.0.1:${raw.port}/prefix/` }], `${tmp.dir}/d`);
  });

  afterAll(async () => {
    await g.stop();
    await raw.stop();
  });

  it('sends the prefix and credentials, lists only valid names, and answers UPSTREAM_ERROR for a non-envelope', async () => {
    expect(seen.some((s) => s.path === '/prefix/health' && s.auth === `Basic ${Buffer.from('user:s3cret').toString('base64')}`)).toBe(true);
    const list = await request(g.url).get('/tools/list').expect(200);
    expect(list.body.tools.map((t: { name: string }) => t.name)).toEqual(['html']);
    const res = await call(g, { tool: 'html', arguments: {} }).expect(502);
    expect(res.body).toMatchObject({ code: 'UPSTREAM_ERROR', service: 'mega-orchestrator' });
    expect(res.body.error).toMatch(/non-JSON/);
    const services = await request(g.url).get('/services').expect(200);
    expect(services.body.services[0].url).toBe(`http://127.0.0.1:${raw.port}/prefix`);
    expect(JSON.stringify(services.body)).not.toMatch(/s3cret/);
  });

  it('marks a service unhealthy when its /tools/list is not a tool list', async () => {
    toolList = '{"nope": 1}';
    await g.gw.refresh();
    const services = await request(g.url).get('/services').expect(200);
    expect(services.body.services[0]).toMatchObject({ status: 'unhealthy', reason: expect.stringMatching(/tools\/list answered/) });
    await call(g, { tool: 'html', arguments: {} }).expect(503);
  });
});

describe('a downstream that hangs on its health probe', () => {
  it('does not keep the other services’ tools out of the catalog while its probe waits out HEALTH_TIMEOUT_MS', async () => {
    // accepts connections and never answers
    const held: net.Socket[] = [];
    const hung = net.createServer((socket) => held.push(socket));
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', () => r()));
    const alpha = await startDownstream('alpha-mcp', alphaTools);
    const gw = createApp({
      config: gatewayConfig(tmp.dir, { HEALTH_POLL_MS: '600000', HEALTH_TIMEOUT_MS: '3000' }),
      logger: testLogger('gateway'),
      services: [
        { id: 'hung-mcp', url: `http://127.0.0.1:${(hung.address() as net.AddressInfo).port}` },
        { id: 'alpha-mcp', url: alpha.url },
      ],
      inventory: TEST_INVENTORY,
      autoStart: false,
    });
    try {
      let roundOver = false;
      const round = gw.refresh().then(() => (roundOver = true));
      const started = Date.now();
      while (!gw.registry.catalog.byName.has('echo') && Date.now() - started < 2500) await new Promise((r) => setTimeout(r, 20));
      // alpha's tools are served while the round still waits for the hung probe
      expect(gw.registry.catalog.byName.get('echo')?.service).toBe('alpha-mcp');
      expect(roundOver).toBe(false);
      await round;
      expect(gw.registry.get('hung-mcp')?.healthy).toBe(false);
      expect(gw.registry.catalog.byName.has('echo')).toBe(true);
    } finally {
      await gw.close();
      await alpha.stop();
      for (const s of held) s.destroy();
      await new Promise((r) => hung.close(r));
    }
  }, 15_000);
});
