/**
 * A stand-in for the gateway on 127.0.0.1, port 0, scripted per test: it records what the coordinator
 * sends and answers what the test says (an envelope, an error, garbage, silence). The real gateway and
 * services are in test/integration/coordinator.test.ts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

export interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export type Reply = { status: number; body: unknown; headers?: Record<string, string> } | { raw: string; status: number } | 'hang';

export interface FakeGateway {
  url: string;
  seen: Seen[];
  /** The answer to the next POST /mcp/{service} calls (default: a success envelope echoing the call). */
  reply: (seen: Seen) => Reply;
  close(): Promise<void>;
}

export const echo = (seen: Seen): Reply => ({
  status: 200,
  body: {
    success: true,
    result: { echoed: seen.body, service: seen.url.split('/')[2] },
    timestamp: new Date().toISOString(),
    service: seen.url.split('/')[2],
    tool: seen.body?.tool,
    durationMs: 1,
  },
});

export async function startFakeGateway(): Promise<FakeGateway> {
  const fake: FakeGateway = { url: '', seen: [], reply: echo, close: async () => undefined };
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const seen: Seen = { method: req.method!, url: req.url!, headers: req.headers, body: text ? JSON.parse(text) : undefined };
      fake.seen.push(seen);
      let reply: Reply;
      if (req.url === '/health') reply = { status: 200, body: { status: 'healthy' } };
      else if (req.url === '/services')
        reply = {
          status: 200,
          body: {
            services: [
              { id: 'filesystem-mcp', status: 'healthy', routable: true },
              { id: 'git-mcp', status: 'unhealthy', routable: false, reason: 'connection refused' },
            ],
          },
        };
      else reply = fake.reply(seen);
      if (reply === 'hang') return;
      if ('raw' in reply) {
        res.writeHead(reply.status, { 'content-type': 'text/html' }).end(reply.raw);
        return;
      }
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers }).end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/** A coordinator app in-process, talking to `gatewayUrl`, with test settings over the defaults. */
export function coordinator(gatewayUrl: string, env: Record<string, string> = {}) {
  const config = configSchema.parse({ ...testConfig, DATA_DIR: '/tmp', COORDINATOR_GATEWAY_URL: gatewayUrl, ...env });
  return createApp({ config, logger: testLogger('coordinator'), defaultMetrics: false });
}
