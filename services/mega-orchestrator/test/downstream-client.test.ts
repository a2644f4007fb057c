/**
 * The gateway's HTTP client for downstreams (node:http with a keep-alive Agent), over real sockets:
 * keep-alive reuse, answer size limits (declared and streamed), timeouts, a caller that goes away,
 * refused connections (not delivered, safe to fail over) and non-JSON answers.
 */
import net from 'node:net';
import type http from 'node:http';
import { serve } from '@mcp-fleet/testing';
import type { RunningServer } from '@mcp-fleet/kit';
import { DownstreamClient, DownstreamFailure } from '../src/downstream/http-client';

describe('DownstreamClient', () => {
  let server: RunningServer;
  let client: DownstreamClient;
  const sockets = new Set<unknown>();
  const handlers: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void> = {
    '/json': (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ got: body ? JSON.parse(body) : null, requestId: req.headers['x-request-id'] }));
      });
    },
    '/big-declared': (_req, res) => {
      res.setHeader('content-length', '5000');
      res.end('x'.repeat(5000));
    },
    '/big-streamed': (_req, res) => {
      res.write('['); // chunked: no length to refuse up front
      const timer = setInterval(() => res.write('"' + 'y'.repeat(200) + '",'), 1);
      res.on('close', () => clearInterval(timer));
    },
    '/slow': (_req, res) => {
      const timer = setTimeout(() => res.end('{}'), 2000);
      res.on('close', () => clearTimeout(timer));
    },
    '/text': (_req, res) => res.end('plain words'),
  };

  beforeAll(async () => {
    server = await serve((req, res) => {
      sockets.add(req.socket);
      (handlers[req.url ?? ''] ?? ((_q, r) => ((r.statusCode = 404), r.end('{}'))))(req, res);
    });
    client = new DownstreamClient(`${server.url}/`, { connections: 2, maxResponseBytes: 1024, connectTimeoutMs: 500 });
  });
  afterAll(async () => {
    await client.close();
    await server.stop();
  });

  it('sends the body and request id and reuses its keep-alive connections', async () => {
    sockets.clear();
    for (let i = 0; i < 10; i++) {
      const answer = await client.request({
        method: 'POST',
        path: '/json',
        body: JSON.stringify({ i }),
        requestId: `r-${i}`,
        timeoutMs: 2000,
      });
      expect(answer).toEqual({ status: 200, json: { got: { i }, requestId: `r-${i}` } });
    }
    expect(sockets.size).toBe(1);
  });

  it('refuses answers over maxResponseBytes, whether declared or streamed, and stays usable', async () => {
    const declared = await client.request({ method: 'GET', path: '/big-declared', timeoutMs: 2000 });
    expect(declared).toMatchObject({ status: 200, json: undefined, problem: 'an answer larger than 1024 bytes' });
    const streamed = await client.request({ method: 'GET', path: '/big-streamed', timeoutMs: 2000 });
    expect(streamed).toMatchObject({ status: 200, json: undefined, problem: 'an answer larger than 1024 bytes' });
    expect((await client.request({ method: 'GET', path: '/json', timeoutMs: 2000 })).status).toBe(200);
  });

  it('says when an answer is not JSON', async () => {
    expect(await client.request({ method: 'GET', path: '/text', timeoutMs: 2000 })).toMatchObject({
      json: undefined,
      problem: 'a non-JSON answer ("plain words")',
    });
  });

  it('fails a slow downstream with timeout, and a call whose caller went away with aborted', async () => {
    const started = Date.now();
    const slow = await client.request({ method: 'GET', path: '/slow', timeoutMs: 100 }).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(DownstreamFailure);
    expect(slow).toMatchObject({ kind: 'timeout', delivered: true });
    expect(Date.now() - started).toBeLessThan(1000);
    const caller = new AbortController();
    setTimeout(() => caller.abort(), 50);
    const gone = await client.request({ method: 'GET', path: '/slow', timeoutMs: 5000, signal: caller.signal }).catch((e: unknown) => e);
    expect(gone).toMatchObject({ kind: 'aborted', delivered: true });
  });

  it('marks a refused connection as not delivered, so the call may go to another owner', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const nowhere = new DownstreamClient(`http://127.0.0.1:${port}`, { connections: 1, maxResponseBytes: 1024, connectTimeoutMs: 500 });
    const failure = await nowhere.request({ method: 'GET', path: '/json', timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ kind: 'refused', delivered: false, message: `connection refused at http://127.0.0.1:${port}` });
    await nowhere.destroy();
  });
});
