/**
 * The channel's Unix socket (CHANNEL_SOCKET_DIR, src/server.ts): a service that offers the gateway's
 * channel also listens on <dir>/channel-<port>.sock, served by the same HTTP server, owner-only in an
 * owner-only directory; a stale socket of an earlier run is replaced, anything else at the path is
 * left alone; the socket is gone once the service stops; whatever goes wrong, the service still
 * starts and serves over TCP.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { captureLogger } from '@mcp-fleet/testing';
import {
  CHANNEL_PATH,
  CHANNEL_PROTOCOL,
  channelSocketDirOf,
  channelSocketPath,
  createServiceApp,
  defineTool,
  listen,
  type RunningServer,
} from '../src';
import { tempDir, testConfig, testLogger } from '../src/test-support';

const tmp = tempDir('kit-channel-socket-');
afterAll(() => tmp.cleanup());

const echo = defineTool({
  name: 'echo_text',
  description: 'Answers the text it is given.',
  input: z.object({ text: z.string() }).strict(),
  annotations: { readOnlyHint: true },
  handler: ({ text }) => ({ text }),
});

const withChannel = () => createServiceApp({ service: 'echo-mcp', config: testConfig, logger: testLogger('echo'), tools: [echo] }).app;

let n = 0;
const freshDir = () => path.join(tmp.dir, `run-${++n}`);

const start = async (dir: string, handler: http.RequestListener = withChannel()) => {
  const { logger, lines } = captureLogger('echo-mcp');
  const server = await listen(handler, { host: '127.0.0.1', port: 0, shutdownTimeoutMs: 200, channelSocketDir: dir, logger });
  return { server, lines };
};

/** One call over the channel at `socketPath`: the answer frame, parsed. */
function callOverSocket(socketPath: string, port: number): Promise<{ status: number; body: { result?: unknown } }> {
  return new Promise((resolve, reject) => {
    const out = http.request({
      socketPath,
      path: CHANNEL_PATH,
      headers: { Host: `127.0.0.1:${port}`, Connection: 'Upgrade', Upgrade: CHANNEL_PROTOCOL },
    });
    out.once('upgrade', (_res, socket: Socket, head: Buffer) => {
      let text = head.toString('utf8');
      const done = () => {
        const end = text.indexOf('\n');
        if (end < 0) return false;
        socket.destroy();
        resolve(JSON.parse(text.slice(0, end)) as { status: number; body: { result?: unknown } });
        return true;
      };
      if (done()) return;
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        done();
      });
      socket.write(`${JSON.stringify({ id: 1, call: { name: 'echo_text', arguments: { text: 'over the socket' } } })}\n`);
    });
    out.once('response', (res) => reject(new Error(`not upgraded: ${res.statusCode}`)));
    out.once('error', reject);
    out.end();
  });
}

const getOverSocket = (socketPath: string, port: number, route: string) =>
  new Promise<number>((resolve, reject) => {
    http
      .get({ socketPath, path: route, headers: { Host: `127.0.0.1:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .once('error', reject);
  });

describe("the channel's Unix socket", () => {
  let running: RunningServer | undefined;
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });

  it('answers a call over <dir>/channel-<port>.sock, owner-only, and is removed when the service stops', async () => {
    const dir = freshDir();
    const { server } = await start(dir);
    running = server;
    const file = channelSocketPath(dir, server.port)!;
    expect(file).toBe(path.join(dir, `channel-${server.port}.sock`));
    const st = fs.lstatSync(file);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const answer = await callOverSocket(file, server.port);
    expect(answer.status).toBe(200);
    expect(answer.body.result).toEqual({ text: 'over the socket' });
    // the same HTTP server: its routes answer there too, and TCP still serves
    expect(await getOverSocket(file, server.port, '/health')).toBe(200);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    await server.stop();
    running = undefined;
    expect(fs.existsSync(file)).toBe(false);
  });

  it('makes an existing directory owner-only and replaces a stale socket of an earlier run', async () => {
    const dir = freshDir();
    fs.mkdirSync(dir, { mode: 0o755 });
    fs.chmodSync(dir, 0o755);
    // a free port, then the socket an earlier run on it left when it was killed
    const probe = await start(freshDir());
    const port = probe.server.port;
    await probe.server.stop();
    const stale = channelSocketPath(dir, port)!;
    const killed = spawnSync(
      process.execPath,
      ['-e', `require('net').createServer().listen(${JSON.stringify(stale)}, () => process.kill(process.pid, 'SIGKILL'))`],
      { timeout: 10_000 },
    );
    expect(killed.signal).toBe('SIGKILL');
    expect(fs.lstatSync(stale).isSocket()).toBe(true);
    const server = await listen(withChannel(), { host: '127.0.0.1', port, shutdownTimeoutMs: 200, channelSocketDir: dir });
    running = server;
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect((await callOverSocket(stale, port)).body.result).toEqual({ text: 'over the socket' });
  });

  it('leaves anything but a socket at the path alone, warns, and serves over TCP', async () => {
    const dir = freshDir();
    const probe = await start(freshDir());
    const port = probe.server.port;
    await probe.server.stop();
    fs.mkdirSync(dir, { mode: 0o700 });
    const file = channelSocketPath(dir, port)!;
    fs.writeFileSync(file, 'not a socket');
    const { logger, lines } = captureLogger('echo-mcp');
    const server = await listen(withChannel(), { host: '127.0.0.1', port, shutdownTimeoutMs: 200, channelSocketDir: dir, logger });
    running = server;
    expect(fs.readFileSync(file, 'utf8')).toBe('not a socket');
    expect(lines.join('\n')).toMatch(/channel's Unix socket is not offered: .*exists and is not a socket/);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    await server.stop();
    running = undefined;
    expect(fs.readFileSync(file, 'utf8')).toBe('not a socket');
  });

  it('says which setting to change for a directory too long for a socket, and serves over TCP', async () => {
    const dir = path.join(tmp.dir, 'x'.repeat(100));
    expect(channelSocketPath(dir, 7001)).toBeUndefined();
    const { server, lines } = await start(dir);
    running = server;
    expect(lines.join('\n')).toMatch(/too long for a socket's path.*set a shorter CHANNEL_SOCKET_DIR/);
    expect(fs.existsSync(dir)).toBe(false);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  // only root can give a directory away
  (process.getuid?.() === 0 ? it : it.skip)("refuses a directory of another user's, and serves over TCP", async () => {
    const dir = freshDir();
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.chownSync(dir, 65534, 65534);
    const { server, lines } = await start(dir);
    running = server;
    expect(lines.join('\n')).toMatch(/belongs to another user/);
    expect(fs.readdirSync(dir)).toEqual([]);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it('is offered by a service only inside its DATA_DIR, which no sandboxed program sees (bootService)', () => {
    const { logger, lines } = captureLogger('echo-mcp');
    const data = path.join(tmp.dir, 'data');
    expect(channelSocketDirOf({ DATA_DIR: data, CHANNEL_SOCKET_DIR: path.join(data, 'run') }, logger)).toBe(path.join(data, 'run'));
    expect(channelSocketDirOf({ DATA_DIR: data, CHANNEL_SOCKET_DIR: `${data}/./run/../run2` }, logger)).toBe(`${data}/./run/../run2`);
    expect(channelSocketDirOf({ DATA_DIR: data }, logger)).toBeUndefined();
    expect(lines).toEqual([]);
    for (const outside of [path.join(tmp.dir, 'workspace', 'run'), tmp.dir, `${data}-run`, `${data}/../elsewhere`, '/tmp'])
      expect([outside, channelSocketDirOf({ DATA_DIR: data, CHANNEL_SOCKET_DIR: outside }, logger)]).toEqual([outside, undefined]);
    expect(channelSocketDirOf({ CHANNEL_SOCKET_DIR: path.join(data, 'run') }, logger)).toBeUndefined();
    expect(lines.length).toBe(6);
    expect(lines[0]).toMatch(/is not inside DATA_DIR .*set it inside DATA_DIR/);
  });

  it('is not opened by a listener that offers no channel', async () => {
    const dir = freshDir();
    const { server } = await start(dir, (_req, res) => res.end('plain'));
    running = server;
    expect(fs.existsSync(dir)).toBe(false);
  });
});
