/**
 * Class: a malicious (or compromised) stdio MCP server the gateway starts. Declared in MCP_SERVERS
 * like any user's server, it runs inside the OS sandbox by default (stdio-sandbox.ts): reached over
 * the gateway with the official SDK client, its tool tries to read a file in DATA_DIR, the gateway's
 * environment (/proc/<gateway pid>/environ and its parent's), the gateway user's home and ~/.ssh, to
 * write outside its mounts, and to leave a background process that outlives it. Every attempt fails,
 * and its legitimate tool (a file in the directory its declaration makes writable) works. The same
 * server declared with "sandbox": false gets through each time (so the test can fail).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDir, testLogger } from '@mcp-fleet/testing';
import { configuredMcpServers } from '../../services/mega-orchestrator/src/downstream/mcp-servers-config';
import { McpDownstream } from '../../services/mega-orchestrator/src/downstream/mcp';
import { stdioLauncher } from '../../services/mega-orchestrator/src/downstream/stdio-sandbox';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';

const REPO = path.resolve(__dirname, '../..');
const FIXTURE = path.join(__dirname, 'fixtures', 'malicious-stdio-server.ts');

type Outcome = { ok: true; value: string } | { ok: false; error: string };
type Attack = Record<'dataDir' | 'homeVariable' | 'gatewayEnviron' | 'parentEnviron' | 'home' | 'ssh' | 'write' | 'background', Outcome>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('stdio MCP servers run inside the OS sandbox', () => {
  const tmp = tempDir('mcp-fleet-stdio-sandbox-');
  const dataDir = path.join(tmp.dir, 'data');
  const dir = (name: string) => path.join(tmp.dir, name);
  let gateway: RunningGateway;
  let client: Client;
  const gatewayEnviron = createHash('sha256')
    .update(fs.readFileSync(`/proc/${process.pid}/environ`))
    .digest('hex');

  beforeAll(async () => {
    for (const d of ['data', 'shut', 'open', 'outside', 'markers']) fs.mkdirSync(dir(d), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'secret.txt'), 'TOPSECRET-in-DATA_DIR');
    const declared = (extra: Record<string, unknown>) => ({
      command: process.execPath,
      args: ['--import', 'tsx', FIXTURE],
      cwd: REPO,
      ...extra,
    });
    const specs = configuredMcpServers(
      {
        MCP_SERVERS: JSON.stringify({
          mcpServers: {
            // the default: sandboxed; the markers directory is writable so a marker not written is the sandbox's doing
            evil: declared({ sandbox: { writable: [dir('shut'), dir('markers')] } }),
            // the explicit opt-out
            'evil-open': declared({ sandbox: false }),
          },
        }),
      },
      [],
    );
    gateway = await startGateway(specs, dataDir, { HEALTH_POLL_MS: '600000', HEALTH_TIMEOUT_MS: '10000', MCP_RESTART_BACKOFF_MS: '100' });
    client = new Client({ name: 'attacker', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gateway?.stop();
    tmp.cleanup();
  });

  const attack = async (server: string, marker: string): Promise<Attack> => {
    const res = await client.callTool({
      name: `${server}__attack`,
      arguments: {
        secretFile: path.join(dataDir, 'secret.txt'),
        gatewayPid: process.pid,
        home: os.homedir(),
        outsideFile: path.join(dir('outside'), `${server}.txt`),
        marker: path.join(dir('markers'), marker),
      },
    });
    expect(res.isError).toBeFalsy();
    return res.structuredContent as Attack;
  };

  /** The server exits; a background process it started writes its marker 1.5 s later if it outlived it. */
  const outlived = async (server: string, marker: string) => {
    await client.callTool({ name: `${server}__quit`, arguments: {} });
    await sleep(2500);
    return fs.existsSync(path.join(dir('markers'), marker));
  };

  it('sandboxed: every attempt to leave fails, and the legitimate tool works', async () => {
    const got = await attack('evil', 'evil-marker');
    expect(got.dataDir).toMatchObject({ ok: false });
    expect(JSON.stringify(got)).not.toContain('TOPSECRET');
    // the gateway's process is not visible in the server's own PID namespace; its parent is the sandbox's init
    expect(got.gatewayEnviron).toMatchObject({ ok: false });
    expect(got.parentEnviron).not.toEqual({ ok: true, value: gatewayEnviron });
    expect(got.home).toMatchObject({ ok: false });
    expect(got.ssh).toMatchObject({ ok: false });
    // its HOME is its own directory under DATA_DIR (npm's cache lands there), not the gateway user's
    expect(got.homeVariable).toEqual({ ok: true, value: path.join(dataDir, 'mcp-servers', 'evil', 'home') });
    expect(got.write).toMatchObject({ ok: false });
    expect(fs.existsSync(path.join(dir('outside'), 'evil.txt'))).toBe(false);
    expect(got.background).toMatchObject({ ok: true }); // it may start one: it ends with the server
    expect(await outlived('evil', 'evil-marker')).toBe(false);

    // the legitimate use: a file in the directory its declaration makes writable (after the gateway restarted it)
    const end = Date.now() + 15_000;
    let note: Awaited<ReturnType<Client['callTool']>> | undefined;
    while (Date.now() < end) {
      note = await client.callTool({ name: 'evil__legit', arguments: { dir: dir('shut'), text: 'hello' } }).catch(() => undefined);
      if (note && !note.isError) break;
      await sleep(200);
    }
    expect(note?.isError).toBeFalsy();
    expect(note?.content).toEqual([{ type: 'text', text: 'hello' }]);
    expect(fs.readFileSync(path.join(dir('shut'), 'note.txt'), 'utf8')).toBe('hello');
  }, 40_000);

  it('writes outside the declared directories fail in several spellings (.., symlink, /tmp)', async () => {
    fs.symlinkSync(dir('outside'), path.join(dir('shut'), 'link'));
    for (const target of [path.join(dir('shut'), '..', 'outside'), path.join(dir('shut'), 'link'), dir('outside')]) {
      const res = await client.callTool({ name: 'evil__legit', arguments: { dir: target, text: 'escaped' } });
      expect(res.isError).toBe(true);
    }
    expect(fs.readdirSync(dir('outside'))).not.toContain('note.txt');
    // its own /tmp is private: a file written there is not the host's
    const inTmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-fleet-probe-'));
    const res = await client.callTool({ name: 'evil__legit', arguments: { dir: inTmp, text: 'x' } });
    expect(res.isError).toBe(true);
    expect(fs.existsSync(path.join(inTmp, 'note.txt'))).toBe(false);
    fs.rmSync(inTmp, { recursive: true, force: true });
  });

  it('with "sandbox": false the same server gets through (the test can fail)', async () => {
    const got = await attack('evil-open', 'open-marker');
    expect(got.dataDir).toEqual({ ok: true, value: 'TOPSECRET-in-DATA_DIR' });
    expect(got.gatewayEnviron).toEqual({ ok: true, value: gatewayEnviron });
    expect(got.parentEnviron).toEqual({ ok: true, value: gatewayEnviron });
    expect(got.home).toMatchObject({ ok: true });
    expect(got.write).toEqual({ ok: true, value: 'written' });
    expect(fs.existsSync(path.join(dir('outside'), 'evil-open.txt'))).toBe(true);
    expect(await outlived('evil-open', 'open-marker')).toBe(true);
  }, 20_000);

  it('the server gets its own 0700 home under DATA_DIR (its HOME)', () => {
    const home = path.join(dataDir, 'mcp-servers', 'evil', 'home');
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
  });

  it('with no sandbox to be made the server is not started, and its status says what to do', async () => {
    const launch = stdioLauncher({ mode: 'on', dataDir, bwrap: path.join(tmp.dir, 'no-such-bwrap') });
    expect(() => launch('evil', { transport: 'stdio', command: process.execPath, args: [FIXTURE], env: {} })).toThrow(
      /bubblewrap .* is not installed.*"sandbox": false.*MCP_STDIO_SANDBOX=off/,
    );
    const down = new McpDownstream(
      { transport: 'stdio', command: process.execPath, args: ['--import', 'tsx', FIXTURE], cwd: REPO, env: {} },
      { id: 'evil', logger: testLogger('evil'), maxResponseBytes: 1 << 20, launch },
    );
    try {
      const health = await down.request({ method: 'GET', path: '/health', timeoutMs: 5000 }).catch((err: Error) => err);
      expect(String((health as Error).message)).toMatch(/evil was not started: .*Install bubblewrap/);
      expect(down.pid).toBeUndefined();
    } finally {
      await down.close();
    }
  });
});
