/**
 * DOWNSTREAM_CHANNEL: plain tool calls to a kit service over its persistent channel (one upgraded
 * connection of NDJSON frames) answer exactly what the HTTP path answers: results, the kit's error
 * envelopes and statuses, the request id, time limits (the kit's call aborted), and a service that
 * goes away and comes back. A service that offers no channel (its own middleware) is served over HTTP.
 */
import http from 'node:http';
import { createServiceApp, defineTool, listen, type RunningServer } from '@mcp-fleet/kit';
import { z } from 'zod';
import { abortSignalReads, serve, tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import request from 'supertest';
import {
  alphaTools,
  betaTools,
  initSession,
  post2026,
  startDownstream,
  startGateway,
  until,
  type Downstream,
  type RunningGateway,
} from './helpers';
import type { DownstreamClient } from '../src/downstream/http-client';

describe('the persistent channel to kit services (DOWNSTREAM_CHANNEL)', () => {
  const tmp = tempDir('mcp-fleet-channel-');
  const calls = new Map<string, number>();
  /** The tags of wait_abort calls that reached the service, and of those whose signal aborted there. */
  const started: string[] = [];
  const aborted: string[] = [];
  let alpha: RunningServer;
  let alphaPort = 0;
  let beta: Downstream;
  let withChannel: RunningGateway;
  let overHttp: RunningGateway;

  const startAlpha = async () => {
    // no `extend`: the kit offers its channel
    const big = defineTool({
      name: 'big_answer',
      description: 'Answers kb kilobytes of text.',
      input: z.object({ kb: z.number().int().min(1).max(512) }).strict(),
      annotations: { readOnlyHint: true },
      handler: ({ kb }) => ({ text: 'x'.repeat(kb * 1024) }),
    });
    const waitAbort = defineTool({
      name: 'wait_abort',
      description: 'Waits until its call is aborted (at most 5 s) and notes its tag.',
      input: z.object({ tag: z.string() }).strict(),
      annotations: { readOnlyHint: true },
      handler: async ({ tag }, ctx) => {
        started.push(tag);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 5000);
          ctx.signal.addEventListener(
            'abort',
            () => {
              clearTimeout(timer);
              aborted.push(tag);
              resolve();
            },
            { once: true },
          );
        });
        return { tag };
      },
    });
    const app = createServiceApp({
      service: 'alpha-mcp',
      config: testConfig,
      logger: testLogger('alpha'),
      tools: [...alphaTools(calls), big, waitAbort],
    });
    alpha = alphaPort ? await listen(app.app, { host: '127.0.0.1', port: alphaPort, shutdownTimeoutMs: 200 }) : await serve(app.app);
    alphaPort = alpha.port;
  };

  beforeAll(async () => {
    await startAlpha();
    beta = await startDownstream('beta-mcp', betaTools); // mounts middleware: no channel
    const services = [
      { id: 'alpha-mcp', url: alpha.url },
      { id: 'beta-mcp', url: beta.url },
    ];
    withChannel = await startGateway(services, tmp.dir, { DOWNSTREAM_CHANNEL: 'true', DOWNSTREAM_TIMEOUT_MS: '400' });
    overHttp = await startGateway(services, tmp.dir, { DOWNSTREAM_CHANNEL: 'false', DOWNSTREAM_TIMEOUT_MS: '400' });
  });
  afterAll(async () => {
    await withChannel.stop();
    await overHttp.stop();
    alpha.server.closeAllConnections();
    await alpha.stop();
    await beta.stop();
    tmp.cleanup();
  });

  const channelOf = (g: RunningGateway, id: string) => (g.gw.registry.get(id)!.upstream as DownstreamClient).channel;
  const call = (g: RunningGateway, tool: string, args: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    request(g.url).post('/mcp').set(headers).send({ tool, arguments: args });
  /** An answer without the parts that differ between two calls. */
  const comparable = (body: Record<string, unknown>) => ({ ...body, timestamp: undefined, requestId: undefined, durationMs: undefined });

  it('answers what HTTP answers, over one open channel: results, error envelopes and statuses', async () => {
    const cases: [string, Record<string, unknown>][] = [
      ['echo', { text: 'over the channel' }],
      ['scalar', {}],
      ['echo', { text: 7 }], // the kit's validation error
      ['echo', { text: 'x', extra: true }], // strict schema
      ['fail', {}], // the kit's internal error
    ];
    for (const [tool, args] of cases) {
      const viaChannel = await call(withChannel, tool, args);
      const viaHttp = await call(overHttp, tool, args);
      expect({ tool, status: viaChannel.status }).toEqual({ tool, status: viaHttp.status });
      expect(comparable(viaChannel.body)).toEqual(comparable(viaHttp.body));
    }
    expect(channelOf(withChannel, 'alpha-mcp')?.open).toBe(true);
    expect(channelOf(overHttp, 'alpha-mcp')).toBeUndefined();
  });

  it('answers MCP tools/call byte for byte as over HTTP, reusing the result text the channel brings', async () => {
    const [viaChannel, viaHttp] = [await initSession(withChannel.url), await initSession(overHttp.url)];
    const mcpCall = (g: RunningGateway, sid: string, id: number, name: string, args: Record<string, unknown>) =>
      request(g.url)
        .post('/mcp')
        .set({ accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' })
        .send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
        .buffer(true)
        .parse((res, done) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString('utf8')));
          res.on('end', () => done(null, text));
        });
    const cases: [string, Record<string, unknown>][] = [
      // quotes, control characters, U+2028, a surrogate pair, markup: the escapes JSON.stringify writes
      ['echo', { text: 'a "quoted" \\ back\nslash\t\u0001 \u2028 😀 </script>' }],
      ['scalar', {}], // not an object: structuredContent is {result: 42}
      ['echo', { text: 7 }], // an error result
    ];
    let id = 1;
    for (const [tool, args] of cases) {
      const a = await mcpCall(withChannel, viaChannel, id, tool, args);
      const b = await mcpCall(overHttp, viaHttp, id++, tool, args);
      expect(a.status).toBe(200);
      if (tool === 'echo' && typeof args.text === 'string') {
        expect(JSON.parse(a.body).result.structuredContent).toMatchObject({ text: args.text });
        expect(a.body).toBe(b.body); // byte for byte
      } else if (tool === 'scalar') {
        expect(JSON.parse(a.body).result).toEqual({
          content: [{ type: 'text', text: '42' }],
          structuredContent: { result: 42 },
          isError: false,
        });
        expect(a.body).toBe(b.body);
      } else {
        expect(JSON.parse(a.body).result.isError).toBe(true);
      }
    }
    // a 2026-07-28 answer (resultType first) too
    for (const [tool, args] of cases.slice(0, 2)) {
      const [a, b] = [
        await post2026(withChannel.url, 'tools/call', { name: tool, arguments: args }),
        await post2026(overHttp.url, 'tools/call', { name: tool, arguments: args }),
      ];
      const [ta, tb] = [await a.text(), await b.text()];
      expect(JSON.parse(ta).result).toMatchObject({ resultType: 'complete', isError: false });
      expect(ta).toBe(tb);
    }
  });

  it('carries the caller’s request id to the tool', async () => {
    const res = await call(withChannel, 'request_id', {}, { 'x-request-id': 'chan-req-1' });
    expect(res.body.result).toEqual({ requestId: 'chan-req-1' });
  });

  it('cancels a 2025 session’s call at the service when its client goes away or sends notifications/cancelled', async () => {
    // DOWNSTREAM_TIMEOUT_MS is 400 here: a longer one, so that only the caller can end these calls
    const g = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmp.dir, { DOWNSTREAM_CHANNEL: 'true' });
    try {
      const sid = await initSession(g.url);
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid };
      const body = (id: string, tag: string) =>
        JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'wait_abort', arguments: { tag } } });
      const echo = (id: string) =>
        request(g.url)
          .post('/mcp')
          .set(headers)
          .send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: { text: id } } });
      // the channel is open before the calls below: they go over it
      expect((await echo('e-0')).body.result.structuredContent).toEqual({ text: 'e-0' });
      expect(channelOf(g, 'alpha-mcp')?.open).toBe(true);
      // the client goes away: its connection closes mid-call
      const gone = http.request(`${g.url}/mcp`, { method: 'POST', headers });
      gone.on('error', () => undefined);
      gone.end(body('g-1', 'gone'));
      await until(() => started.includes('gone'));
      expect(aborted).not.toContain('gone');
      gone.destroy();
      await until(() => aborted.includes('gone'));
      // notifications/cancelled names the call
      const running = request(g.url)
        .post('/mcp')
        .set(headers)
        .send(body('c-1', 'cancelled'))
        .then((r) => r);
      await until(() => started.includes('cancelled'));
      await request(g.url)
        .post('/mcp')
        .set(headers)
        .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c-1', reason: 'user' } })
        .expect(202);
      await until(() => aborted.includes('cancelled'));
      expect((await running).body).toMatchObject({ id: 'c-1', result: { isError: true } });
      // the channel stays open, and a call that is not cancelled runs to its end
      expect(channelOf(g, 'alpha-mcp')?.open).toBe(true);
      expect((await echo('e-1')).body.result.structuredContent).toEqual({ text: 'e-1' });
      // and the gateway makes no AbortSignal on its way (Node 20 takes microseconds to make one; downstream/cancel.ts);
      // the service's kit is in this process too: only the gateway's reads count
      const reads = await abortSignalReads(
        async () => {
          for (let i = 2; i < 12; i++) expect((await echo(`e-${i}`)).body.result.structuredContent).toEqual({ text: `e-${i}` });
        },
        (stack) => /mega-orchestrator[\\/]src/.test(stack),
      );
      expect(reads).toBe(0);
    } finally {
      await g.stop();
    }
  });

  it('times a call out at the gateway’s limit (the service is told to cancel it) and keeps the channel', async () => {
    const before = calls.get('sleep') ?? 0;
    const res = await call(withChannel, 'sleep', { ms: 2000 });
    expect(res.status).toBe(504);
    expect(res.body.code).toBe('TIMEOUT');
    expect(calls.get('sleep')).toBe(before + 1);
    // the channel is still good for the next call
    expect((await call(withChannel, 'echo', { text: 'after' })).body.result).toEqual({ text: 'after' });
  });

  it('fails only the call whose answer is too large, as HTTP does, and goes on with the others on the same channel', async () => {
    const small = await startGateway([{ id: 'alpha-mcp', url: alpha.url }], tmp.dir, {
      DOWNSTREAM_CHANNEL: 'true',
      DOWNSTREAM_MAX_RESPONSE_BYTES: String(64 * 1024),
    });
    try {
      const [big, fine] = await Promise.all([
        call(small, 'big_answer', { kb: 100 }).then((r) => r),
        call(small, 'echo', { text: 'small' }).then((r) => r),
      ]);
      expect(big.body).toMatchObject({ code: 'UPSTREAM_ERROR' });
      expect(big.status).toBe(502);
      expect(big.body.error).toContain(`an answer larger than ${64 * 1024} bytes`);
      expect(fine.body.result).toEqual({ text: 'small' });
      expect((await call(small, 'echo', { text: 'after' })).body.result).toEqual({ text: 'after' });
      expect(channelOf(small, 'alpha-mcp')?.open).toBe(true);
    } finally {
      await small.stop();
    }
  });

  it('sends a call with large arguments over HTTP (a frame is all or nothing for the connection)', async () => {
    const res = await call(withChannel, 'write_note', { note: 'n'.repeat(70 * 1024) });
    expect(res.body.result).toEqual({ written: 70 * 1024 });
  });

  it('serves a service that offers no channel over HTTP', async () => {
    const res = await call(withChannel, 'ping_beta');
    expect(res.body.result).toEqual({ pong: true });
    expect(channelOf(withChannel, 'beta-mcp')?.open).toBe(false);
  });

  it('lets the call in flight finish when the service stops (drained), then opens a new channel once it is back', async () => {
    await call(withChannel, 'echo', { text: 'warm' });
    expect(channelOf(withChannel, 'alpha-mcp')?.open).toBe(true);
    const slow = call(withChannel, 'sleep', { ms: 300 }).then((r) => r); // sent now (supertest is lazy)
    await new Promise((r) => setTimeout(r, 50));
    alpha.server.closeAllConnections();
    await alpha.stop();
    const finished = await slow;
    expect(finished.body).toMatchObject({ result: { slept: 300 } });
    await until(() => channelOf(withChannel, 'alpha-mcp')?.open === false, 2000);
    // down: the call fails fast, as over HTTP
    const down = await call(withChannel, 'echo', { text: 'down' });
    expect(down.body.code).toBe('UPSTREAM_UNAVAILABLE');
    await startAlpha();
    await withChannel.gw.refresh();
    await new Promise((r) => setTimeout(r, 1100)); // the channel is opened again no sooner than a second after it closed
    const back = await call(withChannel, 'echo', { text: 'back' });
    expect(back.body.result).toEqual({ text: 'back' });
    expect(channelOf(withChannel, 'alpha-mcp')?.open).toBe(true);
  }, 15_000);
});
