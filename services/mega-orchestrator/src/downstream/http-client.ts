import http from 'node:http';
import https from 'node:https';
import { BUDGET_HEADER, channelSocketPath, InFlight, isLoopbackInterface } from '@mcp-fleet/kit';
import { signalOf } from './cancel';
import { DownstreamChannel } from './channel';
import {
  answerTooLarge,
  budgetText,
  displayUrl,
  DownstreamFailure,
  listRoute,
  type CallOptions,
  type CompleteParams,
  type Downstream,
  type DownstreamAnswer,
  type DownstreamRequest,
  type CompleteAnswer,
  type DoneAnswer,
  type HealthAnswer,
  type ListAnswer,
  type ListName,
  type ProgressListener,
  type PromptAnswer,
  type ReadAnswer,
  type ToolAnswer,
  type ToolCallOptions,
} from './downstream';
import { completeAnswer, doneAnswer, healthAnswer, listAnswer, promptAnswer, readAnswer, toolAnswer } from './kit-answers';

// The downstream's contract lives in downstream.ts; re-exported for the files that import it from here.
export * from './downstream';

function parseAnswer(status: number, text: string): DownstreamAnswer {
  try {
    return { status, json: JSON.parse(text) };
  } catch {
    return { status, json: undefined, problem: `a non-JSON answer (${JSON.stringify(text.slice(0, 80))})` };
  }
}

const NOT_DELIVERED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNECT_TIMEOUT']);

/** One call's stop state: why it was stopped (timeout or the caller's abort) and the request to destroy. */
interface Stop {
  reason: 'timeout' | 'aborted' | undefined;
  out: http.ClientRequest | undefined;
}

/**
 * A kit service's progress stream: NDJSON lines {"progress", "total"?, "message"?} as the work goes,
 * then {"status", "envelope"}; the answer is that last line's status and envelope.
 */
async function readProgressStream(
  body: AsyncIterable<Buffer | Uint8Array> & { destroy(): void },
  onProgress: ProgressListener,
  maxBytes: number,
): Promise<DownstreamAnswer> {
  let buffered = '';
  let size = 0;
  let final: { status?: unknown; envelope?: unknown } | undefined;
  const take = (text: string) => {
    if (!text.trim()) return;
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof v.progress === 'number') {
      onProgress(v.progress, typeof v.total === 'number' ? v.total : undefined, typeof v.message === 'string' ? v.message : undefined);
    } else if ('envelope' in v) final = v;
  };
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      return answerTooLarge(maxBytes);
    }
    buffered += Buffer.from(chunk).toString('utf8');
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      take(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
    }
  }
  take(buffered);
  if (!final || typeof final.status !== 'number')
    return { status: 502, json: undefined, problem: 'a progress stream without its final answer' };
  return { status: final.status, json: final.envelope };
}

/** A socket that never connected within the connect timeout (the request was never sent). */
const CONNECT_TIMEOUT = 'ECONNECT_TIMEOUT';

/**
 * One downstream: node:http with a keep-alive Agent, plus the base path and credentials of its URL.
 * (undici's Pool was the first choice: in a two-hop bare node:http front and back on the fleet's
 * 2-core machines, a front forwarding with it reached 0.4-0.75 of the calls/s of the same front on
 * an http.Agent at 4 and 32 connections; issue 14.)
 */
export class DownstreamClient implements Downstream {
  readonly url: string;
  readonly port: number;
  private readonly basePath: string;
  private readonly authorization?: string;
  private readonly agent: http.Agent;
  private readonly target: { protocol: string; hostname: string; port: number; request: typeof http.request };
  private readonly active = new InFlight<number, Promise<unknown>>();

  constructor(
    rawUrl: string,
    private readonly options: {
      connections: number;
      maxResponseBytes: number;
      connectTimeoutMs: number;
      headers?: Record<string, string>;
      /** Plain tool calls over the service's persistent channel when it offers one (DOWNSTREAM_CHANNEL). */
      channel?: boolean;
      /** CHANNEL_SOCKET_DIR: where a loopback service offers its channel on a Unix socket too. */
      channelSocketDir?: string;
    },
  ) {
    const u = new URL(rawUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`downstream URL must be http(s), got ${u.protocol}`);
    this.url = displayUrl(rawUrl);
    this.port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    this.basePath = u.pathname.replace(/\/+$/, '');
    if (u.username || u.password) {
      this.authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
    }
    const secure = u.protocol === 'https:';
    // Idle sockets are closed after 30 s, before the kit's servers drop them (65 s): a reused socket
    // is never one the other side is closing.
    const agentOptions = { keepAlive: true, maxSockets: options.connections, maxFreeSockets: options.connections, timeout: 30_000 };
    this.agent = secure ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
    this.target = {
      protocol: u.protocol,
      hostname: u.hostname.replace(/^\[|\]$/g, ''),
      port: this.port,
      request: secure ? https.request : http.request,
    };
    // Loopback-style plain HTTP without credentials or extra headers only: the channel carries none.
    if (options.channel && !secure && !this.authorization && !Object.keys(options.headers ?? {}).length)
      this.channel = new DownstreamChannel(
        {
          hostname: this.target.hostname,
          port: this.port,
          basePath: this.basePath,
          // a socket stands for the server behind a port of this machine only
          ...(options.channelSocketDir && isLoopbackInterface(this.target.hostname)
            ? { socketPath: channelSocketPath(options.channelSocketDir, this.port) }
            : {}),
        },
        { maxResponseBytes: options.maxResponseBytes, connectTimeoutMs: options.connectTimeoutMs },
      );
  }

  /** The service's persistent channel, when DOWNSTREAM_CHANNEL asks for one. */
  readonly channel?: DownstreamChannel;

  request(req: DownstreamRequest): Promise<DownstreamAnswer> {
    const pending =
      this.channel && req.method === 'POST' && req.path === '/tools/call' && !req.onProgress ? this.viaChannel(req) : this.send(req);
    const key = this.active.add(pending);
    const settled = () => this.active.delete(key);
    void pending.then(settled, settled);
    return pending;
  }

  health(options: CallOptions): Promise<HealthAnswer> {
    return this.route('GET', '/health', options).then(healthAnswer);
  }

  list(kind: ListName, options: CallOptions): Promise<ListAnswer> {
    return this.route('GET', listRoute(kind), options).then(listAnswer(kind));
  }

  /** POST /tools/call, its envelope read as MCP's result (kit-answers.ts); the arguments' JSON text as the caller has it (argsJson), else serialized here. */
  callTool(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<ToolAnswer> {
    return this.route(
      'POST',
      '/tools/call',
      options,
      `{"name":${JSON.stringify(name)},"arguments":${options.argsJson ?? JSON.stringify(args)}}`,
    ).then(toolAnswer);
  }

  getPrompt(name: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<PromptAnswer> {
    return this.route('POST', '/prompts/get', options, JSON.stringify({ name, arguments: args ?? {} })).then(promptAnswer);
  }

  readResource(uri: string, options: CallOptions): Promise<ReadAnswer> {
    return this.route('POST', '/resources/read', options, JSON.stringify({ uri })).then(readAnswer);
  }

  complete(params: CompleteParams, options: CallOptions): Promise<CompleteAnswer> {
    return this.route('POST', '/completion/complete', options, JSON.stringify(params)).then(completeAnswer);
  }

  subscribe(uri: string, options: CallOptions): Promise<DoneAnswer> {
    return this.route('POST', '/resources/subscribe', options, JSON.stringify({ uri })).then(doneAnswer);
  }

  unsubscribe(uri: string, options: CallOptions): Promise<DoneAnswer> {
    return this.route('POST', '/resources/unsubscribe', options, JSON.stringify({ uri })).then(doneAnswer);
  }

  /** One operation as its REST route (the same shape of request every time: one hidden class on the hot path). */
  private route(method: 'GET' | 'POST', path: string, o: CallOptions, body?: string): Promise<DownstreamAnswer> {
    return this.request({
      method,
      path,
      body,
      requestId: o.requestId,
      traceparent: o.traceparent,
      timeoutMs: o.timeoutMs,
      signal: o.signal,
      cancel: o.cancel,
      onProgress: o.onProgress,
      onClientRequest: o.onClientRequest,
      onLog: o.onLog,
    });
  }

  /** A plain tool call over the channel, or over HTTP when there is none. */
  private async viaChannel(req: DownstreamRequest): Promise<DownstreamAnswer> {
    return (await this.channel!.call(req)) ?? this.send(req);
  }

  private async send(req: DownstreamRequest): Promise<DownstreamAnswer> {
    // Why the request was stopped, if it was: no AbortController per call (on the hot path, its
    // signal and listeners cost more than the timer and a destroy; issue 14).
    const stop: Stop = { reason: undefined, out: undefined };
    const halt = (reason: 'timeout' | 'aborted') => {
      if (stop.reason) return;
      stop.reason = reason;
      stop.out?.destroy(Object.assign(new Error(reason === 'timeout' ? 'timed out' : 'aborted'), { code: 'ABORT_ERR' }));
    };
    const timer = setTimeout(halt, req.timeoutMs, 'timeout');
    const onAbort = () => halt('aborted');
    const signal = signalOf(req);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const headers: Record<string, string> = { accept: 'application/json' };
    if (req.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(req.body));
    }
    if (req.requestId) headers['x-request-id'] = req.requestId;
    if (req.traceparent) headers.traceparent = req.traceparent;
    headers[BUDGET_HEADER] = budgetText(req.timeoutMs);
    if (this.authorization) headers.authorization = this.authorization;
    if (req.onProgress) headers['x-progress'] = 'ndjson';
    if (this.options.headers) Object.assign(headers, this.options.headers);
    try {
      const res = await this.exchange(req, headers, stop);
      const type = String(res.headers['content-type'] ?? '');
      if (req.onProgress && type.startsWith('application/x-ndjson'))
        return await readProgressStream(res, req.onProgress, this.options.maxResponseBytes);
      return await this.readAnswer(res, stop);
    } catch (err) {
      throw this.classify(err, stop, req.timeoutMs);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Sends the request (headers and body in one write) and resolves with the response head. */
  private exchange(req: DownstreamRequest, headers: Record<string, string>, stop: Stop): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      if (stop.reason) return reject(new Error(stop.reason));
      const out = this.target.request({
        protocol: this.target.protocol,
        hostname: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: this.basePath + req.path,
        headers,
        agent: this.agent,
      });
      stop.out = out;
      out.once('response', resolve);
      out.on('error', reject);
      out.once('socket', (socket) => {
        if (!socket.connecting) return;
        const timer = setTimeout(
          () => out.destroy(Object.assign(new Error('connect timed out'), { code: CONNECT_TIMEOUT })),
          this.options.connectTimeoutMs,
        );
        socket.once('connect', () => clearTimeout(timer));
        socket.once('close', () => clearTimeout(timer));
      });
      out.end(req.body);
    });
  }

  /** The whole answer as JSON, cut off at maxResponseBytes. */
  private readAnswer(res: http.IncomingMessage, stop: Stop): Promise<DownstreamAnswer> {
    const status = res.statusCode ?? 502;
    const max = this.options.maxResponseBytes;
    if (Number(res.headers['content-length']) > max) {
      res.destroy();
      return Promise.resolve(answerTooLarge(max, status));
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > max) {
          res.destroy();
          resolve(answerTooLarge(max, status));
          return;
        }
        chunks.push(chunk);
      });
      res.once('end', () => resolve(parseAnswer(status, (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8'))));
      res.on('error', reject);
      // A response cut off by the caller's abort or the timeout ends in 'aborted'/'close' without 'end'.
      res.once('close', () => {
        if (!res.complete)
          reject(stop.reason ? new Error(stop.reason) : Object.assign(new Error('the answer was cut off'), { code: 'ECONNRESET' }));
      });
    });
  }

  private classify(err: unknown, stop: Stop, timeoutMs: number): DownstreamFailure {
    if (stop.reason === 'timeout') return new DownstreamFailure('timeout', `timed out after ${timeoutMs} ms`, true, { cause: err });
    if (stop.reason === 'aborted') return new DownstreamFailure('aborted', 'the caller went away', true, { cause: err });
    const code = (err as { code?: string }).code ?? '';
    if (NOT_DELIVERED.has(code)) {
      const what = code === 'ECONNREFUSED' ? 'connection refused' : code === CONNECT_TIMEOUT ? 'connect timed out' : code;
      return new DownstreamFailure('refused', `${what} at ${this.url}`, false, { cause: err });
    }
    return new DownstreamFailure('connection', `connection failed at ${this.url} (${code || (err as Error).message})`, true, {
      cause: err,
    });
  }

  /** Lets the requests in flight finish, then closes the sockets. */
  async close(): Promise<void> {
    await Promise.allSettled(this.active.values());
    this.channel?.close();
    this.agent.destroy();
  }

  async destroy(): Promise<void> {
    this.channel?.close();
    this.agent.destroy();
  }
}
