/**
 * Resumable event streams for 2025-11-25 sessions (Streamable HTTP "Resumability and Redelivery",
 * SEP-1699): a tool call's event stream starts with a priming event (an id, a retry delay), its
 * events carry ids, and a client that loses the connection gets the rest (the answer included) with
 * GET and Last-Event-ID, while the call goes on; the same for the session's GET stream. The MCP
 * server is a real child process (the conformance fixture over stdio); the last test is the official
 * SDK client, whose connection a TCP proxy cuts in the middle of a call.
 */
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDir } from '@mcp-fleet/testing';
import { initSession, startGatewayWithStdioServer, until, type RunningGateway } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'conformance-fixture-server.ts');

interface SseEvent {
  id?: string;
  retry?: number;
  data: string;
}

/** The events of an event-stream response, as they come. */
async function* events(res: Response): AsyncGenerator<SseEvent> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const e: SseEvent = { data: '' };
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        const field = line.slice(0, colon);
        const value = line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') e.id = value;
        else if (field === 'retry') e.retry = Number(value);
        else if (field === 'data') e.data += value;
      }
      if (block.startsWith(':')) continue; // a comment (keep-alive)
      yield e;
    }
  }
}

const message = (e: SseEvent) =>
  e.data ? (JSON.parse(e.data) as { id?: unknown; method?: string; params?: any; result?: any }) : undefined;

describe('resumable event streams (2025-11-25 sessions, SEP-1699)', () => {
  const tmp = tempDir('mcp-fleet-resume-');
  let g: RunningGateway;

  beforeAll(async () => {
    g = await startGatewayWithStdioServer('conformance-fixture', FIXTURE, tmp.dir, 'test_slow_progress', { MCP_SSE_RETRY_MS: '100' });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  const headers = (sid: string, version = '2025-11-25') => ({
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-session-id': sid,
    'mcp-protocol-version': version,
  });
  const slowCall = (sid: string, id: number, signal: AbortSignal, version?: string) =>
    fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: headers(sid, version),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'test_slow_progress', arguments: {}, _meta: { progressToken: `p${id}` } },
      }),
      signal,
    });
  const resume = (sid: string, lastEventId: string) =>
    fetch(`${g.url}/mcp`, { headers: { ...headers(sid), 'last-event-id': lastEventId } });

  /** Reads a call's stream up to its first progress event, then drops the connection: the events seen. */
  async function dropAfterFirstProgress(sid: string, id: number): Promise<SseEvent[]> {
    const cut = new AbortController();
    const res = await slowCall(sid, id, cut.signal);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const seen: SseEvent[] = [];
    for await (const e of events(res)) {
      seen.push(e);
      if (message(e)?.method === 'notifications/progress') break;
    }
    cut.abort();
    return seen;
  }

  it('starts a call’s stream with a priming event and gives every event an id; after a lost connection, GET with Last-Event-ID brings the rest and the answer', async () => {
    const sid = await initSession(g.url);
    const seen = await dropAfterFirstProgress(sid, 1);
    // the priming event: an id, the retry delay, no data
    expect(seen[0]).toEqual({ id: expect.any(String), retry: 100, data: '' });
    expect(message(seen[1])).toMatchObject({ method: 'notifications/progress', params: { progressToken: 'p1', progress: 1 } });
    expect(seen[1].id).toEqual(expect.any(String));

    const res = await resume(sid, seen[1].id!);
    expect(res.status).toBe(200);
    const rest: SseEvent[] = [];
    for await (const e of events(res)) rest.push(e); // the stream ends after the answer
    const messages = rest.map(message);
    // the call went on: progress 2 to 5, once each and in order, then its answer
    expect(messages.filter((m) => m?.method === 'notifications/progress').map((m) => m!.params.progress)).toEqual([2, 3, 4, 5]);
    expect(messages.at(-1)).toMatchObject({
      id: 1,
      result: { content: [{ type: 'text', text: 'Slow progress tool finished.' }] },
    });
    expect(rest.every((e) => typeof e.id === 'string')).toBe(true);
    expect(new Set([...seen, ...rest].map((e) => e.id)).size).toBe(seen.length + rest.length);
  });

  it('replays the rest of a call that ended while the client was away, answer included', async () => {
    const sid = await initSession(g.url);
    const seen = await dropAfterFirstProgress(sid, 2);
    await new Promise((r) => setTimeout(r, 1500)); // the call ends meanwhile
    const res = await resume(sid, seen.at(-1)!.id!);
    const rest: SseEvent[] = [];
    for await (const e of events(res)) rest.push(e);
    expect(rest.map(message).at(-1)).toMatchObject({
      id: 2,
      result: { content: [{ type: 'text', text: 'Slow progress tool finished.' }] },
    });
    // the request id was in flight until the call ended, and is free again now
    const again = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: headers(sid),
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }),
    });
    expect(((await again.json()) as { result?: unknown }).result).toBeDefined();
  });

  it('forgets a stream whose answer reached its client on the same connection (nothing to resume)', async () => {
    const sid = await initSession(g.url);
    const res = await slowCall(sid, 5, new AbortController().signal);
    const all: SseEvent[] = [];
    for await (const e of events(res)) all.push(e);
    expect(message(all.at(-1)!)).toMatchObject({ id: 5, result: { content: [{ type: 'text', text: 'Slow progress tool finished.' }] } });
    expect((await resume(sid, all[1].id!)).status).toBe(400);
  });

  it('gives a 2025-06-18 client no ids and no priming event (its streams cannot be resumed)', async () => {
    const sid = await initSession(g.url);
    const res = await slowCall(sid, 3, new AbortController().signal, '2025-06-18');
    const all: SseEvent[] = [];
    for await (const e of events(res)) all.push(e);
    expect(all.every((e) => e.id === undefined && e.retry === undefined && e.data !== '')).toBe(true);
    expect(message(all.at(-1)!)).toMatchObject({ id: 3, result: { content: [{ type: 'text', text: 'Slow progress tool finished.' }] } });
  });

  it('resumes the session’s GET stream: notifications sent while the client was away come on reconnecting', async () => {
    const sid = await initSession(g.url);
    const cut = new AbortController();
    const stream = await fetch(`${g.url}/mcp`, { headers: headers(sid), signal: cut.signal });
    expect(stream.status).toBe(200);
    const it = events(stream);
    // the GET stream is open once a broadcast reaches it
    let first: SseEvent | undefined;
    const reading = (async () => {
      for await (const e of it) if (message(e)?.method === 'notifications/tools/list_changed') return (first = e);
    })();
    await until(() => {
      g.gw.mcp.notifyToolsChanged();
      return first !== undefined;
    }, 5000);
    await reading;
    cut.abort();
    await new Promise((r) => setTimeout(r, 100));
    g.gw.mcp.notifyPromptsChanged(); // sent while the client is away
    const back = await fetch(`${g.url}/mcp`, { headers: { ...headers(sid), 'last-event-id': first!.id! } });
    expect(back.status).toBe(200);
    const missed: SseEvent[] = [];
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 1500);
    try {
      for await (const e of events(back)) {
        missed.push(e);
        if (message(e)?.method === 'notifications/prompts/list_changed') break;
      }
    } catch {
      // timed out: the expectation below says what was missing
    }
    expect(missed.map((e) => message(e)?.method)).toContain('notifications/prompts/list_changed');
  });

  it('refuses an event id it did not give, or one of another session (HTTP 400)', async () => {
    const a = await initSession(g.url);
    const b = await initSession(g.url);
    const seen = await dropAfterFirstProgress(a, 4);
    expect((await resume(a, 'nonsense#1')).status).toBe(400);
    expect((await resume(b, seen[1].id!)).status).toBe(400);
  });

  it('lets the official SDK client finish a call whose connection was cut in the middle', async () => {
    // a TCP proxy in front of the gateway whose connections can be cut
    const target = new URL(g.url);
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port), target.hostname);
      client.pipe(upstream).pipe(client);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sockets.delete(s));
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const port = (proxy.address() as net.AddressInfo).port;
    const client = new Client({ name: 'resume-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
      reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1, maxRetries: 5 },
    });
    try {
      await client.connect(transport);
      const progress: number[] = [];
      const call = client.callTool({ name: 'test_slow_progress', arguments: {} }, undefined, {
        onprogress: (p) => {
          progress.push(p.progress);
          if (p.progress === 1) for (const s of sockets) s.destroy(); // the connection is lost here
        },
        timeout: 10_000,
      });
      const result = await call;
      expect(result).toMatchObject({ content: [{ type: 'text', text: 'Slow progress tool finished.' }] });
      expect(progress).toEqual([1, 2, 3, 4, 5]);
    } finally {
      await client.close().catch(() => undefined);
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });
});
