/**
 * Class 6 (issue 27): a web page in the user's browser reaches a fleet service on 127.0.0.1 by DNS
 * rebinding (its own name, then resolved to 127.0.0.1: the browser sends that name as Host and its
 * own Origin) or by a cross-site request (a foreign Origin). Every route of every service refuses
 * both with 403 FORBIDDEN before anything runs: terminal-mcp (its REST route, the hot /tools route,
 * /tools/call and the gateway's channel), filesystem-mcp, secrets-ui and the gateway. Each request is
 * written on a raw socket, so the Host and Origin are exactly the spellings under test.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { CHANNEL_PATH, CHANNEL_PROTOCOL, type RunningServer, type ServiceApp } from '@mcp-fleet/kit';
import { SERVICES } from '@mcp-fleet/inventory';
import { serve, tempDir } from '@mcp-fleet/testing';
import { makeFixture, type Fixture } from '../../services/filesystem-mcp/test/helpers';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';
import { ADMIN, makeApp as makeSecretsUi } from '../../services/secrets-ui/test/support';
import { buildApp as buildTerminal } from '../../services/terminal-mcp/test/helpers';

interface RawAnswer {
  status: number;
  head: string;
  body: string;
}

/** One request on its own connection, headers exactly as given (no Host unless given), read to the end. */
function raw(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string>,
  body = '',
  version = '1.1',
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${method} ${target}`)));
    socket.on('data', (c) => {
      chunks.push(c);
      // an upgraded connection stays open: its answer is the head
      if (/^HTTP\/1\.1 101 [^]*\r\n\r\n/.test(Buffer.concat(chunks).toString('latin1'))) socket.destroy();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0), head, body: split < 0 ? '' : text.slice(split + 4) });
    });
    const lines = [`${method} ${target} HTTP/${version}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
    if (!('Connection' in headers)) lines.push('Connection: close');
    if (body) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    // not end(): Node's server drops a request whose client half-closes before the answer
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`);
  });
}

/** The JSON envelope of a chunked or plain answer body. */
function envelope(answer: RawAnswer): { code?: string; error?: string } {
  const text = /transfer-encoding: chunked/i.test(answer.head)
    ? answer.body.replace(/(?:^|\r\n)[0-9a-f]+\r\n/gi, '').replace(/\r\n$/, '')
    : answer.body;
  return JSON.parse(text);
}

const ws = tempDir('sec-rebind-');
const marker = path.join(ws.dir, 'pwned');
const viaGateway = path.join(ws.dir, 'pwned-through-gateway');

let terminal: ServiceApp;
let terminalServer: RunningServer;
let files: Fixture;
let filesServer: RunningServer;
let secrets: ReturnType<typeof makeSecretsUi>;
let secretsServer: RunningServer;
let gateway: RunningGateway;
let gatewayPort: number;

beforeAll(async () => {
  terminal = await buildTerminal(ws.dir, { TERMINAL_ALLOWED_COMMANDS: 'touch,echo' });
  terminalServer = await serve(terminal.app);
  files = await makeFixture();
  filesServer = await serve(files.service.app);
  secrets = makeSecretsUi({ LOGIN_MAX_FAILURES: '3' });
  secretsServer = await serve(secrets.app);
  gateway = await startGateway([{ id: 'terminal-mcp', url: terminalServer.url }], path.join(ws.dir, '.gateway'));
  gatewayPort = Number(new URL(gateway.url).port);
});

afterAll(async () => {
  await gateway.stop();
  for (const s of [terminalServer, filesServer, secretsServer]) await s.stop();
  await terminal.close();
  await files.cleanup();
  await secrets.cleanup();
  ws.cleanup();
});

const json = { 'Content-Type': 'application/json' };
const touch = (file: string) => JSON.stringify({ command: 'touch', args: [file] });

/** The requests that would change something, per service: [name, port, method, path, headers, body]. */
type Attack = [string, () => number, string, string, Record<string, string>, string];
const attacks = (): Attack[] => [
  ['terminal POST /command', () => terminalServer.port, 'POST', '/command', json, touch(marker)],
  ['terminal POST /tools/execute_command (hot route)', () => terminalServer.port, 'POST', '/tools/execute_command', json, touch(marker)],
  [
    'terminal POST /tools/call',
    () => terminalServer.port,
    'POST',
    '/tools/call',
    json,
    JSON.stringify({ name: 'execute_command', arguments: { command: 'touch', args: [marker] } }),
  ],
  ['terminal GET /directory', () => terminalServer.port, 'GET', `/directory?path=${encodeURIComponent(ws.dir)}`, {}, ''],
  [
    'filesystem POST /file/write',
    () => filesServer.port,
    'POST',
    '/file/write',
    json,
    JSON.stringify({ path: path.join(files.rootA, 'pwned.txt'), content: 'x' }),
  ],
  ['filesystem GET /tools/list', () => filesServer.port, 'GET', '/tools/list', {}, ''],
  [
    'secrets-ui POST /login',
    () => secretsServer.port,
    'POST',
    '/login',
    { 'Content-Type': 'application/x-www-form-urlencoded' },
    'actor=mallory&token=wrong-guess',
  ],
  [
    'secrets-ui PUT /api/secrets (even with the admin token)',
    () => secretsServer.port,
    'PUT',
    '/api/secrets/security-mcp',
    { ...json, Authorization: `Bearer ${ADMIN}` },
    JSON.stringify({ values: { ENCRYPTION_KEY: 'a'.repeat(64) } }),
  ],
  ['secrets-ui GET /', () => secretsServer.port, 'GET', '/', {}, ''],
  [
    'gateway POST /mcp',
    () => gatewayPort,
    'POST',
    '/mcp',
    json,
    JSON.stringify({ tool: 'execute_command', arguments: { command: 'touch', args: [viaGateway] } }),
  ],
  [
    'gateway POST /mcp JSON-RPC',
    () => gatewayPort,
    'POST',
    '/mcp',
    { ...json, Accept: 'application/json, text/event-stream' },
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'execute_command', arguments: { command: 'touch', args: [viaGateway] } },
    }),
  ],
  ['gateway passthrough POST /mcp/terminal-mcp/command', () => gatewayPort, 'POST', '/mcp/terminal-mcp/command', json, touch(viaGateway)],
  ['gateway GET /mcp (SSE)', () => gatewayPort, 'GET', '/mcp', { Accept: 'text/event-stream' }, ''],
  ['gateway GET /services', () => gatewayPort, 'GET', '/services', {}, ''],
];

/** No refused request had an effect: nothing touched, written or exported, no login counted. */
function expectNothingHappened() {
  expect(fs.existsSync(marker)).toBe(false);
  expect(fs.existsSync(viaGateway)).toBe(false);
  expect(fs.existsSync(path.join(files.rootA, 'pwned.txt'))).toBe(false);
  expect(fs.existsSync(secrets.exportFile('security-mcp'))).toBe(false);
}

async function expectRefused(headersOf: (port: number) => Record<string, string>, variable: string) {
  for (const [name, portOf, method, target, headers, body] of attacks()) {
    const port = portOf();
    const sent = headersOf(port);
    const answer = await raw(port, method, target, { ...sent, ...headers }, body);
    expect([name, sent, answer.status]).toEqual([name, sent, 403]);
    const env = envelope(answer);
    expect([name, env.code]).toEqual([name, 'FORBIDDEN']);
    expect(env.error).toContain(variable);
  }
}

describe('DNS rebinding: a Host that is not this machine', () => {
  const hosts = (port: number) => [
    'evil.example',
    'evil.example:7003',
    `evil.example:${port}`,
    `127.0.0.1.nip.io:${port}`,
    `localhost.evil.example:${port}`,
    `LOCALHOST.EVIL.EXAMPLE:${port}`,
    `localhost.:${port}`,
    `localhost:${port}@evil.example`,
    `[::1].evil.example:${port}`,
    `127.0.0.1:${port}.evil.example`,
    `0.0.0.0:${port}`,
  ];

  it('is refused with 403 FORBIDDEN naming ALLOWED_HOSTS on every route of every service, and nothing runs', async () => {
    for (let i = 0; i < hosts(0).length; i++) await expectRefused((port) => ({ Host: hosts(port)[i] }), 'ALLOWED_HOSTS');
    // the same page's own Origin with it changes nothing
    await expectRefused((port) => ({ Host: `evil.example:${port}`, Origin: `http://evil.example:${port}` }), 'ALLOWED_HOSTS');
    expectNothingHappened();
  });

  it("cannot open the gateway's channel to a service", async () => {
    for (const host of ['evil.example', `127.0.0.1.nip.io:${terminalServer.port}`]) {
      const answer = await raw(terminalServer.port, 'GET', CHANNEL_PATH, { Host: host, Upgrade: CHANNEL_PROTOCOL, Connection: 'Upgrade' });
      expect([host, answer.status]).toEqual([host, 0]);
    }
    const local = await raw(terminalServer.port, 'GET', CHANNEL_PATH, {
      Host: `127.0.0.1:${terminalServer.port}`,
      Upgrade: CHANNEL_PROTOCOL,
      Connection: 'Upgrade',
    });
    expect(local.status).toBe(101);
  });
});

describe('cross-site pages: an Origin that is not local nor allowed', () => {
  const origins = (port: number) => [
    'http://evil.example',
    'null',
    'http://localhost.evil.example',
    `http://localhost.:${port}`,
    'http://evil.example.',
    `http://127.0.0.1.nip.io:${port}`,
    'https://evil.example:443',
    'http://localhost@evil.example',
    `http://127.0.0.1:${port}.evil.example`,
    'file://',
  ];

  it('is refused with 403 FORBIDDEN naming ALLOWED_ORIGINS on every route, with a local Host, and nothing runs', async () => {
    for (let i = 0; i < origins(0).length; i++)
      await expectRefused((port) => ({ Host: `127.0.0.1:${port}`, Origin: origins(port)[i] }), 'ALLOWED_ORIGINS');
    expectNothingHappened();
  });

  it('never reached the login: the brake counted none of the refused guesses', async () => {
    const login = await raw(
      secretsServer.port,
      'POST',
      '/login',
      { Host: `localhost:${secretsServer.port}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      `actor=alice&token=${ADMIN}`,
    );
    expect(login.status).toBe(303);
  });
});

describe('the legitimate local caller', () => {
  it('is answered under every loopback spelling of Host, and without Host over HTTP/1.0', async () => {
    const port = terminalServer.port;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `LOCALHOST:${port}`,
      `[::1]:${port}`,
      `app.localhost:${port}`,
      'localhost',
    ]) {
      const answer = await raw(port, 'GET', '/health', { Host: host });
      expect([host, answer.status]).toEqual([host, 200]);
    }
    expect((await raw(port, 'GET', '/health', {}, '', '1.0')).status).toBe(200);
  });

  it('runs the same requests from curl (no Origin) and from a local page, through the gateway too', async () => {
    const port = terminalServer.port;
    const direct = await raw(port, 'POST', '/command', { Host: `localhost:${port}`, ...json }, touch(marker));
    expect(direct.status).toBe(200);
    expect(fs.existsSync(marker)).toBe(true);
    fs.rmSync(marker);
    const page = await raw(
      port,
      'POST',
      '/tools/execute_command',
      { Host: `127.0.0.1:${port}`, Origin: 'http://localhost:5173', ...json },
      touch(marker),
    );
    expect(page.status).toBe(200);
    expect(fs.existsSync(marker)).toBe(true);
    const through = await raw(
      gatewayPort,
      'POST',
      '/mcp',
      { Host: `localhost:${gatewayPort}`, Origin: `http://[::1]:${gatewayPort}`, ...json },
      JSON.stringify({ tool: 'execute_command', arguments: { command: 'touch', args: [viaGateway] } }),
    );
    expect(through.status).toBe(200);
    expect(fs.existsSync(viaGateway)).toBe(true);
    const write = await raw(
      filesServer.port,
      'POST',
      '/file/write',
      { Host: `localhost:${filesServer.port}`, ...json },
      JSON.stringify({ path: path.join(files.rootA, 'ok.txt'), content: 'x' }),
    );
    expect(write.status).toBe(200);
  });
});

describe('a service listening on every interface (compose: HOST=0.0.0.0, ALLOWED_HOSTS=<its name>)', () => {
  let exposed: Fixture;
  let server: RunningServer;
  beforeAll(async () => {
    exposed = await makeFixture({ HOST: '0.0.0.0', ALLOWED_HOSTS: 'filesystem-mcp' });
    server = await serve(exposed.service.app);
  });
  afterAll(async () => {
    await server.stop();
    await exposed.cleanup();
  });

  it('answers its compose name and the loopback names, and refuses other names and a missing Host', async () => {
    const write = (headers: Record<string, string>, version = '1.1') =>
      raw(
        server.port,
        'POST',
        '/file/write',
        { ...headers, ...json },
        JSON.stringify({ path: path.join(exposed.rootA, 'exposed.txt'), content: 'x' }),
        version,
      );
    for (const host of ['evil.example:7001', 'filesystem-mcp.evil.example:7001', 'other-mcp:7001', '0.0.0.0:7001']) {
      const answer = await write({ Host: host });
      expect([host, answer.status, envelope(answer).error]).toEqual([host, 403, expect.stringContaining('ALLOWED_HOSTS')]);
    }
    expect((await write({}, '1.0')).status).toBe(403);
    expect(fs.existsSync(path.join(exposed.rootA, 'exposed.txt'))).toBe(false);
    for (const host of ['filesystem-mcp:7001', 'FILESYSTEM-MCP', `127.0.0.1:${server.port}`, `localhost:${server.port}`]) {
      const answer = await write({ Host: host });
      expect([host, answer.status]).toEqual([host, 200]);
    }
  });
});

describe('every HTTP service is built on the kit app (or is the gateway), so the rule is on every route', () => {
  it('has no Express app or HTTP server of its own', () => {
    const root = path.resolve(__dirname, '../..');
    for (const s of SERVICES.filter((x) => x.status === 'available' && x.http)) {
      // the gateway's app is its composition root, src/http/app.ts (the folders of issue 29)
      const app = fs.readFileSync(path.join(root, 'services', s.id, 'src', s.pattern === 'gateway' ? 'http/app.ts' : 'app.ts'), 'utf8');
      const builtOnKit = app.includes('createServiceApp(');
      const gatewayWithRule = s.pattern === 'gateway' && app.includes('hostOriginRule(');
      expect([s.id, builtOnKit || gatewayWithRule]).toEqual([s.id, true]);
      expect([
        s.id,
        /http\.createServer|\.listen\(/.test(fs.readFileSync(path.join(root, 'services', s.id, 'src', 'server.ts'), 'utf8')),
      ]).toEqual([s.id, false]);
    }
  });
});
