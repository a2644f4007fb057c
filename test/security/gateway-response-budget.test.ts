/**
 * Class: a server's answer far over DOWNSTREAM_MAX_RESPONSE_BYTES, read whole before it is judged
 * (issue 33, item 2: one 300 MB answer took the gateway from 140 MB to 1.4 GB). Malicious MCP servers
 * (test/security/fixtures/hostile-transport-server.ts) behind a real gateway process, over Streamable
 * HTTP in both eras and over stdio, send 300 MB per call in every shape: JSON without and with a
 * Content-Length, one huge event on the call's event stream, a flood of small notifications that
 * never ends in an answer, one huge stdio line answering the call and one of no call, and a session
 * GET stream and a subscriptions/listen stream with one huge event each. Callers: REST with an attacker's API key, the official v1 SDK
 * client (a 2025-11-25 session) and the v2 client (2026-07-28), twenty calls at once; a victim's
 * calls run beside them. Every flooding call fails alone with UPSTREAM_ERROR within the budget, the
 * servers could write only a little past it, the gateway's resident memory (VmRSS, sampled every
 * 20 ms) stays within 100 MB of its baseline, the stdio child is not restarted, the notification
 * streams are not opened again, and the victim's calls and every server's legitimate tool keep working.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { startHostileServer, type HostileServer } from './fixtures/hostile-transport-server';

const REPO = path.resolve(__dirname, '../..');
const FIXTURE = path.join(__dirname, 'fixtures', 'hostile-transport-server.ts');
const BUDGET = 2 * 1024 * 1024;
const MB = 1024 * 1024;

const tmp = tempDir('mcp-fleet-response-budget-');
const hostile: Record<'25' | '26', HostileServer> = {} as never;
const keys = { victim: '', attacker: '' };
let gateway: ChildProcess;
let url = '';

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/** The gateway's resident memory now (bytes; 0 once it is gone). */
const rss = () => {
  const line = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${gateway.pid}/status`, 'utf8'));
  return line ? Number(line[1]) * 1024 : 0;
};
let sampler: NodeJS.Timeout | undefined;

async function native(key: string, tool: string, args: Record<string, unknown> = {}) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ tool, arguments: args }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

beforeAll(async () => {
  hostile['25'] = await startHostileServer('2025');
  hostile['26'] = await startHostileServer('2026');
  // the notification streams flood: the 2025 server's session GET stream, the 2026 one's listen stream
  hostile['25'].getFloodMb = 300;
  hostile['26'].listenFloodMb = 300;
  const victim = newApiKey('victim', ['tools:all']);
  const attacker = newApiKey('attacker', ['tools:all']);
  keys.victim = victim.key;
  keys.attacker = attacker.key;
  fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([victim.entry, attacker.entry]));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const mcpServers = {
    'hostile-25': { url: hostile['25'].url },
    'hostile-26': { url: hostile['26'].url, protocolVersion: '2026-07-28' },
    'hostile-stdio': { command: process.execPath, args: ['--import', 'tsx', FIXTURE, 'stdio'], cwd: REPO },
  };
  gateway = spawn(process.execPath, ['--import', 'tsx', path.join(REPO, 'services', 'mega-orchestrator', 'src', 'server.ts')], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: path.join(tmp.dir, 'data'),
      LOG_LEVEL: 'error',
      FLEET_SERVICES: 'system-mcp',
      STDIO_SERVERS: 'false',
      MCP_SERVERS: JSON.stringify({ mcpServers }),
      DOWNSTREAM_MAX_RESPONSE_BYTES: String(BUDGET),
      API_KEYS_FILE: path.join(tmp.dir, 'keys.json'),
      AUDIT_LOG_FILE: 'off',
      HEALTH_POLL_MS: '1000',
    },
    stdio: 'ignore',
  });
  const wanted = ['hostile-25__flood_json', 'hostile-26__flood_json', 'hostile-stdio__flood_line'];
  const end = Date.now() + 40_000;
  for (;;) {
    const names = await fetch(`${url}/tools/list`, { headers: { authorization: `Bearer ${keys.victim}` } })
      .then(async (r) => ((await r.json()) as { tools: { qualifiedName: string }[] }).tools.map((t) => t.qualifiedName))
      .catch(() => [] as string[]);
    if (wanted.every((n) => names.includes(n))) break;
    if (Date.now() > end) throw new Error(`the gateway did not list ${wanted.join(', ')} within 40 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}, 60_000);

afterAll(async () => {
  clearInterval(sampler);
  gateway?.kill('SIGKILL');
  for (const h of Object.values(hostile)) await h?.stop();
  tmp.cleanup();
});

it('300 MB answers in every shape, twenty at once: each call fails alone within the budget, memory stays bounded', async () => {
  // warm up every path with answers within the budget (JIT, sockets, buffers), then take the baseline
  for (let i = 0; i < 3; i++)
    for (const [server, tool] of [
      ['hostile-25', 'flood_json'],
      ['hostile-26', 'flood_sse'],
      ['hostile-stdio', 'flood_line'],
    ])
      expect(await native(keys.victim, `${server}__${tool}`, { mb: 1 }).then((o) => [o.status, o.body.error])).toEqual([200, undefined]);
  const pidBefore = (await native(keys.victim, 'hostile-stdio__echo', { text: 'x' })).body.result.text;
  await new Promise((r) => setTimeout(r, 500));
  const baseline = Math.min(rss(), rss());
  let peak = baseline;
  sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);

  const larger = new RegExp(`larger than ${BUDGET} bytes`);
  const floods: Promise<void>[] = [];
  for (const era of ['25', '26'] as const)
    for (const tool of ['flood_json', 'flood_json_announced', 'flood_sse', 'flood_progress'])
      for (let i = 0; i < 2; i++)
        floods.push(
          native(keys.attacker, `hostile-${era}__${tool}`, { mb: 300 }).then((out) => {
            expect([tool, out.status, out.body.code]).toEqual([tool, 502, 'UPSTREAM_ERROR']);
            expect(out.body.error).toMatch(larger);
          }),
        );
  for (let i = 0; i < 2; i++)
    floods.push(
      native(keys.attacker, 'hostile-stdio__flood_line', { mb: 300 }).then((out) => {
        expect([out.status, out.body.code]).toEqual([502, 'UPSTREAM_ERROR']);
        expect(out.body.error).toMatch(larger);
      }),
    );
  // a stray 300 MB line of no call is dropped; the call it preceded is answered
  floods.push(
    native(keys.attacker, 'hostile-stdio__flood_stray', { mb: 300 }).then((out) => {
      expect(out.status).toBe(200);
      expect(out.body.result).toEqual({ text: expect.stringMatching(/^after the stray line/) });
    }),
  );
  // the official clients as attackers
  const v1 = new Client({ name: 'attacker-v1', version: '1.0.0' });
  await v1.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${keys.attacker}` } } }),
  );
  floods.push(
    v1.callTool({ name: 'hostile-25__flood_sse', arguments: { mb: 300 } }).then((r) => {
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.content)).toMatch(larger);
    }),
  );
  const withKey: typeof fetch = (u, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${keys.attacker}`);
    return fetch(u, { ...init, headers });
  };
  const v2 = new V2Client({ name: 'attacker-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } } as never);
  await v2.connect(new V2Transport(new URL(`${url}/mcp`), { fetch: withKey }));
  floods.push(
    v2.callTool({ name: 'hostile-26__flood_json', arguments: { mb: 300 } }).then((r) => {
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.content)).toMatch(larger);
    }),
  );
  // the victim, meanwhile
  const victim = (async () => {
    const answers: unknown[] = [];
    for (let i = 0; i < 5; i++) answers.push((await native(keys.victim, 'hostile-26__echo', { text: `v${i}` })).body.result);
    return answers;
  })();
  await Promise.all(floods);
  expect(await victim).toEqual([0, 1, 2, 3, 4].map((i) => ({ text: `v${i}` })));
  await new Promise((r) => setTimeout(r, 300));
  clearInterval(sampler);
  await v1.close();
  await v2.close();

  // twenty-two calls of 300 MB at once: at most the budget each, not 6.6 GB (measured: 56-66 MB over a baseline of 180-200 MB)
  expect(peak - baseline).toBeLessThan(100 * MB);
  // the servers could not pour their 300 MB: each was cut a little past the budget
  for (const h of Object.values(hostile))
    for (const [tool, written] of Object.entries(h.stats.written))
      for (const n of written.filter((w) => w > MB)) expect([tool, n < 64 * MB]).toEqual([tool, true]);
  // the notification streams that flooded were cut once and not opened again (the gateway would listen again after 1 s)
  expect(hostile['25'].stats.getStreams).toBe(1);
  expect(hostile['25'].stats.getOpen).toBe(0);
  expect(hostile['26'].stats.listens).toBe(1);
  // every server still serves; the stdio child is the same process
  expect((await native(keys.victim, 'hostile-25__echo', { text: 'after' })).body.result).toEqual({ text: 'after' });
  expect((await native(keys.victim, 'hostile-26__echo', { text: 'after' })).body.result).toEqual({ text: 'after' });
  expect((await native(keys.victim, 'hostile-stdio__echo', { text: 'x' })).body.result.text).toBe(pidBefore);
}, 120_000);
