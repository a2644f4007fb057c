/**
 * CHANNEL_SOCKET_DIR: the gateway opens a loopback kit service's channel over the service's Unix
 * socket (<dir>/channel-<port>.sock, the same server as the port) and answers exactly what TCP
 * answers; where there is no socket, or only a stale one, it opens the channel over TCP as before.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { channelSocketPath, createServiceApp, listen, type RunningServer } from '@mcp-fleet/kit';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { alphaTools, startGateway, until, type RunningGateway } from './helpers';
import type { DownstreamClient } from '../src/downstream/http-client';

describe("the channel over the service's Unix socket (CHANNEL_SOCKET_DIR)", () => {
  const tmp = tempDir('mcp-fleet-channel-socket-');
  const dir = path.join(tmp.dir, 'run');
  const elsewhere = path.join(tmp.dir, 'run-elsewhere');
  let alpha: RunningServer;
  let overSocket: RunningGateway;
  let overTcp: RunningGateway;

  const startAlpha = async (port: number, socketDir: string | undefined) => {
    const app = createServiceApp({ service: 'alpha-mcp', config: testConfig, logger: testLogger('alpha'), tools: alphaTools(new Map()) });
    return listen(app.app, { host: '127.0.0.1', port, shutdownTimeoutMs: 200, channelSocketDir: socketDir });
  };

  beforeAll(async () => {
    alpha = await startAlpha(0, dir);
    const services = [{ id: 'alpha-mcp', url: alpha.url }];
    overSocket = await startGateway(services, tmp.dir, { DOWNSTREAM_CHANNEL: 'true', CHANNEL_SOCKET_DIR: dir });
    overTcp = await startGateway(services, tmp.dir, { DOWNSTREAM_CHANNEL: 'true', CHANNEL_SOCKET_DIR: elsewhere });
  });
  afterAll(async () => {
    await overSocket.stop();
    await overTcp.stop();
    alpha.server.closeAllConnections();
    await alpha.stop();
    tmp.cleanup();
  });

  const channelOf = (g: RunningGateway) => (g.gw.registry.get('alpha-mcp')!.upstream as DownstreamClient).channel!;
  const call = (g: RunningGateway, args: Record<string, unknown>) => request(g.url).post('/mcp').send({ tool: 'echo', arguments: args });
  const comparable = (body: Record<string, unknown>) => ({ ...body, timestamp: undefined, requestId: undefined, durationMs: undefined });

  it('opens the channel over the socket and answers what the channel over TCP answers', async () => {
    expect(fs.lstatSync(channelSocketPath(dir, alpha.port)!).isSocket()).toBe(true);
    for (const args of [{ text: 'über den Socket 😀' }, { text: 7 }, { text: 'x', extra: true }]) {
      const a = await call(overSocket, args);
      const b = await call(overTcp, args);
      expect(a.status).toBe(b.status);
      expect(comparable(a.body)).toEqual(comparable(b.body));
    }
    expect(channelOf(overSocket).transport).toBe('unix');
    // no socket in its directory: TCP, as without the setting
    expect(channelOf(overTcp).transport).toBe('tcp');
  });

  it('opens the channel over TCP again when the service comes back without its socket (the old one stale)', async () => {
    const port = alpha.port;
    const file = channelSocketPath(dir, port)!;
    await alpha.stop();
    await until(() => !channelOf(overSocket).open);
    // a socket file with no one behind it, as a killed service leaves it
    spawnSync(process.execPath, [
      '-e',
      `require('net').createServer().listen(${JSON.stringify(file)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    expect(fs.lstatSync(file).isSocket()).toBe(true);
    alpha = await startAlpha(port, undefined);
    // the gateway waits a moment before it opens a closed channel again (its calls go over HTTP meanwhile)
    let answer = await call(overSocket, { text: 'back' });
    for (const end = Date.now() + 5000; !channelOf(overSocket).open && Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 50));
      answer = await call(overSocket, { text: 'back' });
    }
    expect(answer.status).toBe(200);
    expect(answer.body.result).toEqual({ text: 'back' });
    expect(channelOf(overSocket).transport).toBe('tcp');
  });
});
