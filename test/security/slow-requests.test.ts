/**
 * Class 8b (issue 27): a client that sends its request slowly (a body trickled a byte at a time, or
 * headers that never end) holds a connection, and with enough of them every connection the server
 * has. The kit's server (every service, the gateway too) gives a request REQUEST_TIMEOUT_MS to
 * arrive whole: then Node answers 408 and closes the connection, and the handler never runs. What
 * the server sends back is not limited: a long tool call, a progress stream and an SSE stream
 * outlive the limit, and an idle keep-alive connection is not cut by it. Real servers on port 0,
 * raw sockets, a short limit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { createServiceApp, defineTool, listen, type RunningServer, type ServiceApp } from '@mcp-fleet/kit';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp as createGateway, type Gateway } from '../../services/mega-orchestrator/src/http/app';
import { alphaTools, gatewayConfig, startDownstream, TEST_INVENTORY, type Downstream } from '../../services/mega-orchestrator/test/helpers';

const LIMIT_MS = 400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A bound on a wait that should end sooner (unref'd: it keeps nothing alive). */
const atMost = (ms: number) => new Promise((r) => setTimeout(r, ms).unref());

const ran: string[] = [];
const tools = [
  defineTool({
    name: 'record',
    description: 'Records that it ran.',
    input: z.object({ text: z.string().max(1000) }).strict(),
    handler: ({ text }) => {
      ran.push(text);
      return { text };
    },
  }),
  defineTool({
    name: 'slow',
    description: 'Reports progress every 100 ms for ms milliseconds, then answers.',
    input: z.object({ ms: z.number().int().max(5000) }).strict(),
    handler: async ({ ms }, ctx) => {
      for (let t = 0; t < ms; t += 100) {
        ctx.progress(t, ms);
        await sleep(100);
      }
      return { slept: ms };
    },
  }),
];

/** A socket to the server, with what it has received and when it closed. */
function connect(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  const state = { received: '', closedAfterMs: -1 };
  const started = Date.now();
  socket.on('data', (c) => (state.received += c.toString('utf8')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      state.closedAfterMs = Date.now() - started;
      resolve();
    }),
  );
  return { socket, state, closed };
}

/** Sends `head` then trickles `body` one byte every `everyMs` until the socket closes (or the body is done). */
async function trickle(port: number, head: string, body: string, everyMs = 100) {
  const c = connect(port);
  c.socket.write(head);
  let sent = 0;
  let open = true;
  void c.closed.then(() => (open = false));
  while (open && sent < body.length) {
    await sleep(everyMs);
    if (open && !c.socket.destroyed) c.socket.write(body[sent++]);
  }
  await Promise.race([c.closed, atMost(10_000)]);
  return { ...c.state, sent };
}

let kit: ServiceApp;
let kitServer: RunningServer;
let downstream: Downstream;
let gateway: Gateway;
let gatewayServer: RunningServer;
const tmp = tempDir('sec-slow-');

beforeAll(async () => {
  kit = createServiceApp({
    service: 'slow-test',
    config: testConfig,
    logger: testLogger(),
    tools,
    defaultMetrics: false,
    // an SSE stream as the gateway's GET /mcp and /events serve them: events for 1.5 s, then the end
    extend: (app) =>
      app.get('/events', async (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' });
        for (let i = 0; i < 15; i++) {
          res.write(`data: ${i}\n\n`);
          await sleep(100);
        }
        res.end('data: end\n\n');
      }),
  });
  kitServer = await listen(kit.app, { host: '127.0.0.1', port: 0, requestTimeoutMs: LIMIT_MS, shutdownTimeoutMs: 200 });
  downstream = await startDownstream('alpha-mcp', alphaTools);
  gateway = createGateway({
    config: gatewayConfig(path.join(tmp.dir, 'gw')),
    logger: testLogger('gateway'),
    services: [{ id: 'alpha-mcp', url: downstream.url }],
    inventory: TEST_INVENTORY,
    autoStart: false,
  });
  await gateway.refresh();
  gatewayServer = await listen(gateway.app, { host: '127.0.0.1', port: 0, requestTimeoutMs: LIMIT_MS, shutdownTimeoutMs: 200 });
});

afterAll(async () => {
  await gateway.mcp.close();
  for (const s of [kitServer, gatewayServer]) {
    s.server.closeAllConnections();
    await s.stop();
  }
  await gateway.close();
  await kit.close();
  await downstream.stop();
  tmp.cleanup();
});

const post = (port: number, target: string, length: number, extra = '') =>
  `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

describe('a request that arrives slowly', () => {
  const body = JSON.stringify({ text: 'trickled' });

  it('is cut with 408 at the limit when its body trickles, on the hot route, an Express route and the gateway, and nothing runs', async () => {
    for (const [port, target, what] of [
      [kitServer.port, '/tools/record', 'kit hot route'],
      [kitServer.port, '/tools/call', 'kit /tools/call'],
      [gatewayServer.port, '/mcp', 'gateway POST /mcp'],
    ] as const) {
      const payload = target === '/tools/call' ? JSON.stringify({ name: 'record', arguments: { text: 'trickled' } }) : body;
      const gatewayPayload = JSON.stringify({ tool: 'echo', arguments: { text: 'trickled' } });
      const sent = target === '/mcp' ? gatewayPayload : payload;
      const r = await trickle(port, post(port, target, sent.length), sent);
      expect([what, r.received.split('\r\n')[0]]).toEqual([what, 'HTTP/1.1 408 Request Timeout']);
      // cut at the limit (Node checks every quarter of it), long before the body would have arrived
      expect(r.closedAfterMs).toBeGreaterThanOrEqual(LIMIT_MS - 50);
      expect(r.closedAfterMs).toBeLessThan(LIMIT_MS * 3);
      expect(r.sent).toBeLessThan(sent.length);
    }
    expect(ran).toEqual([]);
  });

  it('is cut with 408 when its headers never end (slowloris), on both servers', async () => {
    for (const port of [kitServer.port, gatewayServer.port]) {
      const r = await trickle(port, `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`, 'X-Slow: ' + 'a'.repeat(100));
      expect(r.received.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
      expect(r.closedAfterMs).toBeLessThan(LIMIT_MS * 3);
    }
  });

  it('is served when its body arrives whole within the limit, even sent in pieces', async () => {
    const r = await trickle(kitServer.port, post(kitServer.port, '/tools/record', body.length, 'Connection: close\r\n'), body, 10);
    expect(r.received).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(ran).toEqual(['trickled']);
  });
});

describe('answers that take longer than the limit', () => {
  it('are not cut: a long tool call, directly and through the gateway', async () => {
    for (const [port, target, payload] of [
      [kitServer.port, '/tools/slow', JSON.stringify({ ms: LIMIT_MS * 3 })],
      [gatewayServer.port, '/mcp', JSON.stringify({ tool: 'sleep', arguments: { ms: LIMIT_MS * 3 } })],
    ] as const) {
      const c = connect(port);
      c.socket.write(post(port, target, payload.length, 'Connection: close\r\n') + payload);
      await Promise.race([c.closed, atMost(10_000)]);
      expect([target, c.state.received.split('\r\n')[0]]).toEqual([target, 'HTTP/1.1 200 OK']);
      expect(c.state.received).toContain(`"slept":${LIMIT_MS * 3}`);
      expect(c.state.closedAfterMs).toBeGreaterThanOrEqual(LIMIT_MS * 3);
    }
  });

  it('are not cut: a progress stream and an SSE stream that run for several limits', async () => {
    const payload = JSON.stringify({ ms: 1500 });
    const progress = connect(kitServer.port);
    progress.socket.write(post(kitServer.port, '/tools/slow', payload.length, 'X-Progress: ndjson\r\nConnection: close\r\n') + payload);
    const sse = connect(kitServer.port);
    sse.socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${kitServer.port}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n`);
    await Promise.race([Promise.all([progress.closed, sse.closed]), atMost(10_000)]);
    expect(progress.state.received).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(progress.state.received.match(/"progress":/g)?.length).toBe(15);
    expect(progress.state.received).toContain('"slept":1500');
    expect(sse.state.received).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(sse.state.received.match(/^data: /gm)?.length).toBe(16);
    expect(sse.state.received).toContain('data: end');
    expect(sse.state.closedAfterMs).toBeGreaterThanOrEqual(1400);
  });

  it('an idle keep-alive connection outlives the limit and serves its next request', async () => {
    const c = connect(kitServer.port);
    const get = `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${kitServer.port}\r\n\r\n`;
    c.socket.write(get);
    await sleep(LIMIT_MS * 3);
    expect(c.state.closedAfterMs).toBe(-1);
    c.socket.write(get);
    await sleep(300);
    expect(c.state.received.match(/HTTP\/1\.1 200 OK/g)?.length).toBe(2);
    c.socket.destroy();
  });
});

describe('the real processes (bootService, the gateway) read REQUEST_TIMEOUT_MS', () => {
  const repo = path.resolve(__dirname, '../..');
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  const freePort = () =>
    new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });

  async function start(id: string): Promise<number> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repo, 'services', id, 'src', 'server.ts')], {
      cwd: repo,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: path.join(tmp.dir, id),
        REQUEST_TIMEOUT_MS: '1000',
        FLEET_SERVICES: 'system-mcp',
        LOG_LEVEL: 'error',
      },
      stdio: 'ignore',
    });
    children.push(child);
    const end = Date.now() + 20_000;
    while (Date.now() < end) {
      const up = await fetch(`http://127.0.0.1:${port}/health`).then(
        () => true,
        () => false,
      );
      if (up) return port;
      await sleep(100);
    }
    throw new Error(`${id} did not start on ${port}`);
  }

  it('a kit service and the gateway cut a trickled body after 1 s with 408', async () => {
    for (const id of ['system-mcp', 'mega-orchestrator']) {
      const port = await start(id);
      const payload = JSON.stringify({ name: 'system_info', arguments: {} });
      const r = await trickle(port, post(port, id === 'mega-orchestrator' ? '/mcp' : '/tools/call', payload.length), payload, 200);
      expect([id, r.received.split('\r\n')[0]]).toEqual([id, 'HTTP/1.1 408 Request Timeout']);
      expect(r.closedAfterMs).toBeGreaterThanOrEqual(950);
      expect(r.closedAfterMs).toBeLessThan(2500);
    }
  }, 60_000);
});
