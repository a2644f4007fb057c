/**
 * What an MCP server behind the gateway sends is counted as it arrives, and every stream of a call
 * ends with the call (issue 33, items 2 and 3). One budget per McpDownstream connection, for either
 * SDK client (v1 for 2025-era servers, v2 for 2026-07-28 ones):
 *
 * - Streamable HTTP: the SDK transport is given a fetch whose response bodies are counted chunk by
 *   chunk. A call's answer (its JSON, or its event stream with progress and log messages, resumed
 *   streams included) may hold DOWNSTREAM_MAX_RESPONSE_BYTES in all; past it the connection is cut
 *   and that call alone fails (a JSON-RPC error put in for it, recognised by ANSWER_TOO_LARGE). A
 *   notification stream (the session's GET stream, a 2026-07-28 subscriptions/listen stream) may
 *   hold that much per event; past it the stream is cut, and not opened again on this connection
 *   (a GET is answered 405, a listen -32601, here: the server's lists are still polled). Any other
 *   body is cut at the budget too.
 * - A call's streams are closed when its answer has been read, when the client cancels it (its time
 *   limit, its caller gone: the SDK's notifications/cancelled, or the per-request abort of a
 *   2026-07-28 client) or when it is cut. A closed event stream ends with a result for the call's
 *   id, so that the v1 transport does not reconnect to it; a reconnection with the Last-Event-ID of
 *   a call that ended is answered 405 here, without asking the server.
 * - stdio: a line (one JSON-RPC message) over the budget is dropped as it arrives instead of being
 *   buffered, and the call it answers fails alone; complete lines reach the SDK in one piece.
 *
 * The SDKs' own transports are used; the HTTP one through its `fetch` option and two wrapped
 * methods (send, close) plus its onmessage, the stdio one through its child's stdout listeners.
 */
import type { Readable } from 'node:stream';
import { InFlight, type Logger } from '@mcp-fleet/kit';
import { answerId, LineMender, mendedLines } from './mcp/tolerant';

/**
 * The data of the JSON-RPC error put in for a call whose answer went over the budget. Compared by
 * identity (the SDKs hand an error's data on as it is), so no server can send it.
 */
export const ANSWER_TOO_LARGE: Readonly<Record<string, never>> = Object.freeze({});

/** Whether an error (an SDK error of either client, or the gateway's McpError copy of one) is the budget's. */
export function isAnswerTooLarge(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { data?: unknown }).data === ANSWER_TOO_LARGE;
}

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;
type RpcId = string | number;
type Message = Record<string, unknown>;

/** What both SDKs' client transports have. */
export interface RpcTransport {
  onmessage?: (message: never, extra?: never) => void;
  send(message: never, options?: never): Promise<void>;
  close(): Promise<void>;
}

export interface StreamBudgetOptions {
  /** DOWNSTREAM_MAX_RESPONSE_BYTES. */
  maxBytes: number;
  /** The server's id, for the log. */
  server: string;
  logger: Logger;
}

export interface StreamBudget {
  /** A Streamable HTTP client transport made with the budget's fetch; its streams are counted and closed with their calls. */
  http<T extends RpcTransport>(make: (fetch: FetchLike) => T): T;
  /** A stdio client transport (not started yet): lines over the budget are dropped and their call failed. */
  stdio<T extends RpcTransport & { start(): Promise<void> }>(transport: T): T;
  /** The SDK's stdio read buffer size to give with it: one line within the budget and a chunk. */
  readonly stdioBufferSize: number;
}

export function streamBudget(options: StreamBudgetOptions): StreamBudget {
  return {
    http: (make) => {
      const streams = new HttpStreams(options);
      const transport = make(streams.fetch);
      streams.attach(transport);
      return transport;
    },
    stdio: (transport) => guardStdio(transport, options),
    stdioBufferSize: options.maxBytes + 1024 * 1024,
  };
}

const isRpcId = (id: unknown): id is RpcId => typeof id === 'string' || typeof id === 'number';

/** What watchCalls reports of one connection's calls. */
interface CallWatcher {
  /** A request went out; what it returns are its send options (the watcher's own added). */
  sent(id: RpcId, options: Record<string, unknown> | undefined): Record<string, unknown> | undefined;
  /** The client cancelled a request (notifications/cancelled): its answer is no longer awaited. */
  cancelled(id: RpcId): void;
  /** An answer (a result or an error) was read, before the SDK reads it. */
  answered(id: RpcId): void;
}

/**
 * Wraps a transport's send and its onmessage, whichever handler the SDK (or the gateway) sets, now
 * or later, so that a watcher sees every request sent, cancelled and answered on the connection.
 */
function watchCalls(transport: RpcTransport, watcher: CallWatcher): void {
  const t = transport as unknown as {
    send(message: Message, options?: Record<string, unknown>): Promise<void>;
    onmessage?: (message: Message, extra?: unknown) => void;
  };
  const send = t.send.bind(t);
  t.send = (message, options) => {
    if (typeof message.method === 'string') {
      if (isRpcId(message.id)) options = watcher.sent(message.id, options);
      else if (message.method === 'notifications/cancelled') {
        const requestId = (message.params as Message | undefined)?.requestId;
        if (isRpcId(requestId)) watcher.cancelled(requestId);
      }
    }
    return send(message, options);
  };
  let current = t.onmessage;
  Object.defineProperty(t, 'onmessage', {
    configurable: true,
    enumerable: true,
    get: () => current,
    set: (handler?: (message: Message, extra?: unknown) => void) => {
      current = handler
        ? (message, extra) => {
            if (!('method' in message) && ('result' in message || 'error' in message)) {
              // (read before the tolerant layer, which matches a string of digits to its numbered request as the SDK then does)
              const id = answerId(message.id);
              if (isRpcId(id)) watcher.answered(id);
            }
            handler(message, extra);
          }
        : undefined;
    },
  });
}

const LISTEN = 'subscriptions/listen';
/** Statuses whose Response has no body (the constructor refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** Event ids of ended calls remembered, to refuse their reconnection. */
const ENDED_EVENTS_MAX = 10_000;
/** A request as both SDKs serialize it: method first, then params, jsonrpc and id last. */
const REQUEST_HEAD = /^\{"method":"([^"\\]{1,200})"/;
const REQUEST_TAIL = /"jsonrpc":"2\.0","id":(\d{1,15})\}$/;

/** The id and method of a JSON-RPC request body (undefined for a notification, an answer, a batch). */
function requestOf(body: string): { id: RpcId; method: string } | undefined {
  const head = REQUEST_HEAD.exec(body);
  const tail = head ? REQUEST_TAIL.exec(body.slice(-40)) : null;
  if (head && tail) return { id: Number(tail[1]), method: head[1] };
  // another layout (a request without params gets them appended after its id): read it whole
  try {
    const m = JSON.parse(body) as unknown;
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return undefined;
    const { id, method } = m as Message;
    return typeof method === 'string' && (typeof id === 'number' || typeof id === 'string') ? { id, method } : undefined;
  } catch {
    return undefined;
  }
}

function headerOf(headers: RequestInit['headers'], name: string): string | undefined {
  if (!headers) return undefined;
  return (headers instanceof Headers ? headers : new Headers(headers)).get(name) ?? undefined;
}

const encoder = new TextEncoder();

/** The last event of a call's stream closed by the gateway: a result for its id, so the v1 transport does not reconnect. */
function terminator(id: RpcId): Uint8Array {
  return encoder.encode(`\n\nevent: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{}}\n\n`);
}

/** One call's streams: its POST answer, and any stream that resumes it. */
interface CallStreams {
  id: RpcId;
  bytes: number;
  bodies: CountedBody[];
  lastEventId?: string;
  /** Answered, cancelled or cut: a stream of it that arrives after that is closed at once. */
  ended?: boolean;
  /** Aborts its requests still waiting for their answer's headers (a server that never answers keeps no socket). */
  requests: AbortController;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** A response body read through a count; closed from outside when its call ends. */
class CountedBody {
  readonly stream: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private done = false;
  /** What the server sent, mended where the SDK's transport would drop a message (mcp/tolerant.ts). */
  private readonly mender: LineMender;

  constructor(
    source: ReadableStream<Uint8Array>,
    /** Counts a chunk; false when it went over (the caller has closed or cut this body then). */
    private readonly count: (chunk: Uint8Array, body: CountedBody) => boolean,
    /** An event stream (closing it sends the call's terminator). */
    readonly events: boolean,
    private readonly onEnd: (body: CountedBody) => void,
    /** Its content is an event stream (text/event-stream), else read as one JSON answer. */
    sse: boolean,
    /** The call it answers (an answer in it without a usable id is this call's). */
    callId?: RpcId,
  ) {
    this.mender = new LineMender(sse, callId);
    this.reader = source.getReader();
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
      },
      pull: async (controller) => {
        // read on until something is passed on (the mender may hold a chunk, waiting for a line's end):
        // a pull that enqueues nothing is not called again
        for (;;) {
          let chunk: Awaited<ReturnType<typeof this.reader.read>>;
          try {
            chunk = await this.reader.read();
          } catch (err) {
            this.finish();
            throw err;
          }
          if (this.done) return;
          if (chunk.done) {
            this.finish();
            const rest = this.mender.flush();
            if (rest) controller.enqueue(rest);
            controller.close();
            return;
          }
          if (!this.count(chunk.value, this) || this.done) return;
          const passed = this.mender.push(chunk.value);
          if (passed) return controller.enqueue(passed);
        }
      },
      cancel: (reason) => {
        this.finish();
        return this.reader.cancel(reason);
      },
    });
  }

  /** Ends the body here (what was read stays readable), with a last chunk if given; the server's connection is closed. */
  close(last?: Uint8Array): void {
    if (this.done) return;
    this.finish();
    try {
      // (what was read of an answer cut short goes on as it came)
      const rest = this.mender.flush(true);
      if (rest) this.controller.enqueue(rest);
      if (last) this.controller.enqueue(last);
      this.controller.close();
    } catch {
      // already closed or errored by its reader
    }
    this.reader.cancel().catch(() => undefined);
  }

  /** Ends the body with an error (nothing of it is parsed: its reader drops what it buffered); the server's connection is closed. */
  fail(reason: Error): void {
    if (this.done) return;
    this.finish();
    try {
      this.controller.error(reason);
    } catch {
      // already closed or errored
    }
    this.reader.cancel(reason).catch(() => undefined);
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.onEnd(this);
  }
}

/**
 * Where the events of a server-sent event stream end (a blank line), carried across chunks: the
 * size of the event in progress. Line ends are LF or CRLF; a stream that ends its lines with CR
 * alone has no boundary found here, so its events count as one (it is cut sooner, never later).
 */
export class EventSizer {
  /** Bytes of the event in progress. */
  private size = 0;
  /** Bytes of the line in progress. */
  private line = 0;
  /** Whether the line in progress so far is a lone CR. */
  private lineIsCr = false;

  /** Adds a chunk; the largest event size reached in it (completed or in progress). */
  add(chunk: Uint8Array): number {
    let largest = 0;
    let from = 0;
    let lf = chunk.indexOf(10);
    while (lf !== -1) {
      const lineBytes = this.line + (lf - from);
      const blank = lineBytes === 0 || (lineBytes === 1 && (lf > from ? chunk[lf - 1] === 13 : this.lineIsCr));
      this.size += lf - from + 1;
      if (blank) {
        largest = Math.max(largest, this.size);
        this.size = 0;
      }
      this.line = 0;
      this.lineIsCr = false;
      from = lf + 1;
      lf = chunk.indexOf(10, from);
    }
    const rest = chunk.length - from;
    if (rest > 0) {
      this.lineIsCr = this.line === 0 && rest === 1 && chunk[from] === 13;
      this.line += rest;
      this.size += rest;
    }
    return Math.max(largest, this.size);
  }
}

/** The Streamable HTTP streams of one transport (one connection to one server). */
class HttpStreams {
  private readonly calls = new InFlight<RpcId, CallStreams>();
  /** Last event ids of calls that ended (oldest first), whose reconnection is refused. */
  private readonly endedEvents = new Set<string>();
  private transport?: RpcTransport;
  /** A GET notification stream went over its budget: none is opened again on this connection. */
  private getStreamRefused = false;
  /** A subscriptions/listen stream went over its budget: none is asked for again on this connection. */
  private listenRefused = false;

  constructor(private readonly options: StreamBudgetOptions) {}

  readonly fetch: FetchLike = async (url, init = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    let call: CallStreams | undefined;
    let events = false;
    if (method === 'POST' && typeof init.body === 'string') {
      const request = requestOf(init.body);
      if (request?.method === LISTEN) {
        if (this.listenRefused) return this.refusedListen(request.id);
        events = true;
      } else if (request) call = this.open(request.id, init.signal ?? undefined);
    } else if (method === 'GET') {
      const last = headerOf(init.headers, 'last-event-id');
      call = last === undefined ? undefined : this.calls.values().find((c) => c.lastEventId === last);
      // a stream of a call that ended, or a GET stream cut before: not asked for again
      if (!call && ((last !== undefined && this.endedEvents.has(last)) || this.getStreamRefused))
        return new Response(null, { status: 405, statusText: 'Not opened again by the gateway' });
      events = !call;
    }
    let res: Response;
    try {
      res = await fetch(
        url,
        call ? { ...init, signal: init.signal ? AbortSignal.any([init.signal, call.requests.signal]) : call.requests.signal } : init,
      );
    } catch (err) {
      if (call && call.bodies.length === 0) this.forget(call);
      throw err;
    }
    if (!res.body || NULL_BODY.has(res.status)) {
      if (call && call.bodies.length === 0) this.forget(call);
      return res;
    }
    const sse = (res.headers.get('content-type') ?? '').toLowerCase().includes('text/event-stream');
    // an error status is the transport's failure, not the call's answer
    if (call && !res.ok && call.bodies.length === 0) this.forget(call);
    const answer = call && res.ok ? call : undefined;
    const body = answer ? this.callBody(answer, res.body, sse) : this.otherBody(res.body, events && sse, method, sse);
    // an answer announced over the budget is not read at all
    if (Number(res.headers.get('content-length')) > this.options.maxBytes) {
      if (answer) this.cut(answer);
      else body.fail(new Error(`announced more than ${this.options.maxBytes} bytes (DOWNSTREAM_MAX_RESPONSE_BYTES)`));
    }
    return new Response(body.stream, { status: res.status, statusText: res.statusText, headers: res.headers });
  };

  /** The answer to a listen request after a listen stream was cut: method not found (the client then relies on polling). */
  private refusedListen(id: RpcId): Response {
    const message = `${this.options.server} sent an event over DOWNSTREAM_MAX_RESPONSE_BYTES on its listen stream; the gateway does not listen there again (its lists are polled).`;
    return new Response(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message } }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
  }

  /** Wraps the transport's send (cancellations, event ids of call streams), close and onmessage (answers). */
  attach(transport: RpcTransport): void {
    this.transport = transport;
    watchCalls(transport, {
      // the event ids of its stream, to know a reconnection to it
      sent: (id, options) => {
        const given = options?.onresumptiontoken as ((token: string) => void) | undefined;
        return {
          ...options,
          onresumptiontoken: (token: string) => {
            this.sawEvent(id, token);
            given?.(token);
          },
        };
      },
      cancelled: (id) => this.end(id),
      answered: (id) => this.end(id),
    });
    const t = transport as unknown as { close(): Promise<void> };
    const close = t.close.bind(t);
    t.close = () => {
      for (const call of this.calls.values()) this.end(call.id);
      return close();
    };
  }

  private open(id: RpcId, signal: AbortSignal | undefined): CallStreams {
    const call: CallStreams = { id, bytes: 0, bodies: [], requests: new AbortController() };
    this.calls.set(id, call);
    // a 2026-07-28 client cancels a request by aborting its own fetch (the transport's own signal ends every call on close)
    const own = (this.transport as { _abortController?: AbortController } | undefined)?._abortController?.signal;
    if (signal && signal !== own && !signal.aborted) {
      call.signal = signal;
      call.onAbort = () => this.end(id);
      signal.addEventListener('abort', call.onAbort, { once: true });
    }
    return call;
  }

  /** A call's answer: its JSON (nothing follows it), or an event stream of it, counted against the call's budget. */
  private callBody(call: CallStreams, source: ReadableStream<Uint8Array>, sse: boolean): CountedBody {
    const body = new CountedBody(
      source,
      (chunk) => {
        call.bytes += chunk.length;
        if (call.bytes <= this.options.maxBytes) return true;
        this.cut(call);
        return false;
      },
      sse,
      (b) => {
        const i = call.bodies.indexOf(b);
        if (i >= 0) call.bodies.splice(i, 1);
        // a JSON answer read to its end: the call has no stream left (its answer, if any, is on its way)
        if (!sse) this.forget(call);
      },
      sse,
      call.id,
    );
    call.bodies.push(body);
    // the call ended while its answer's headers were on their way
    if (call.ended) body.fail(new Error('the call ended before its answer arrived'));
    return body;
  }

  /** A body of no call: a notification stream (per event) or anything else (in all). */
  private otherBody(source: ReadableStream<Uint8Array>, events: boolean, method: string, sse: boolean): CountedBody {
    const { maxBytes, logger, server } = this.options;
    const sizer = events ? new EventSizer() : undefined;
    let total = 0;
    return new CountedBody(
      source,
      (chunk, body) => {
        const size = sizer ? sizer.add(chunk) : (total += chunk.length);
        if (size <= maxBytes) return true;
        if (events) {
          if (method === 'GET') this.getStreamRefused = true;
          else this.listenRefused = true;
          logger.warn(
            `${server} sent an event larger than ${maxBytes} bytes (DOWNSTREAM_MAX_RESPONSE_BYTES): its notification stream was cut`,
            {
              server,
              stream: method === 'GET' ? 'GET' : LISTEN,
            },
          );
        }
        body.fail(new Error(`more than ${maxBytes} bytes (DOWNSTREAM_MAX_RESPONSE_BYTES)`));
        return false;
      },
      false,
      () => undefined,
      sse,
    );
  }

  private sawEvent(id: RpcId, eventId: string): void {
    const call = this.calls.get(id);
    if (call) call.lastEventId = eventId;
  }

  /** An answer from the server (both eras): its call's streams have nothing more to say. */
  /** The call went over its budget: it fails alone, with an error the gateway knows as its own. */
  private cut(call: CallStreams): void {
    this.options.logger.warn(
      `${this.options.server} answered a call with more than ${this.options.maxBytes} bytes (DOWNSTREAM_MAX_RESPONSE_BYTES): the call fails, its stream was cut`,
      { server: this.options.server },
    );
    this.failCall(call.id);
    this.end(call.id, new Error(`more than ${this.options.maxBytes} bytes (DOWNSTREAM_MAX_RESPONSE_BYTES)`));
  }

  private failCall(id: RpcId): void {
    const onmessage = this.transport?.onmessage as ((message: Message) => void) | undefined;
    onmessage?.({
      jsonrpc: '2.0',
      id,
      error: {
        code: -32603,
        message: `${this.options.server} answered more than ${this.options.maxBytes} bytes (DOWNSTREAM_MAX_RESPONSE_BYTES); the answer was cut off.`,
        data: ANSWER_TOO_LARGE,
      },
    });
  }

  /**
   * The call is over: its streams are closed (an event stream with a terminator) and its
   * reconnection refused; a call that was cut has its streams failed instead (what they buffered is
   * dropped unparsed; a reconnection the v1 transport then tries is refused here).
   */
  private end(id: RpcId, cut?: Error): void {
    const call = this.calls.get(id);
    if (!call) return;
    call.ended = true;
    this.forget(call);
    if (call.lastEventId !== undefined) {
      this.endedEvents.add(call.lastEventId);
      if (this.endedEvents.size > ENDED_EVENTS_MAX) this.endedEvents.delete(this.endedEvents.values().next().value!);
    }
    for (const body of [...call.bodies]) {
      if (cut) body.fail(cut);
      else body.close(body.events ? terminator(id) : undefined);
    }
    // a request of it still waiting for its headers is given up (one answered already is not affected)
    call.requests.abort();
  }

  private forget(call: CallStreams): void {
    if (this.calls.get(call.id) === call) this.calls.delete(call.id);
    if (call.onAbort) call.signal?.removeEventListener('abort', call.onAbort);
    call.onAbort = undefined;
  }
}

/**
 * One line (a JSON-RPC message) at a time from a stdio child: complete lines pass on, in one piece;
 * a line over the budget is dropped as it arrives, and its head and tail (where its id is) reported.
 */
export class LineBudget {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private discarding = false;
  private head = '';
  private tail: Buffer = Buffer.alloc(0);

  constructor(
    private readonly maxBytes: number,
    private readonly onDropped: (head: string, tail: string, bytes: number) => void,
  ) {}

  private droppedBytes = 0;

  /** The bytes to pass on (whole lines), or undefined. */
  push(chunk: Buffer): Buffer | undefined {
    const lastLf = chunk.lastIndexOf(10);
    // the usual case: no line in progress, every line of the chunk within the budget
    if (!this.discarding && this.pendingBytes === 0 && chunk.length <= this.maxBytes) {
      if (lastLf === chunk.length - 1) return chunk;
      if (lastLf >= 0) this.keep(chunk.subarray(lastLf + 1));
      else this.keep(chunk);
      return lastLf >= 0 ? chunk.subarray(0, lastLf + 1) : undefined;
    }
    const out: Buffer[] = [];
    let from = 0;
    let lf = chunk.indexOf(10);
    while (lf !== -1) {
      const piece = chunk.subarray(from, lf + 1);
      if (this.discarding) this.drop(piece, true);
      else if (this.pendingBytes + piece.length - 1 > this.maxBytes) {
        this.startDropping();
        this.drop(piece, true);
      } else {
        out.push(...this.pending, piece);
        this.pending = [];
        this.pendingBytes = 0;
      }
      from = lf + 1;
      lf = chunk.indexOf(10, from);
    }
    if (from < chunk.length) {
      const rest = chunk.subarray(from);
      if (this.discarding) this.drop(rest, false);
      else if (this.pendingBytes + rest.length > this.maxBytes) {
        this.startDropping();
        this.drop(rest, false);
      } else this.keep(rest);
    }
    if (out.length === 0) return undefined;
    return out.length === 1 ? out[0] : Buffer.concat(out);
  }

  private keep(piece: Buffer): void {
    this.pending.push(piece);
    this.pendingBytes += piece.length;
  }

  private startDropping(): void {
    const held = Buffer.concat(this.pending);
    this.discarding = true;
    this.head = held.subarray(0, 200).toString('utf8');
    this.tail = held.subarray(-200);
    this.droppedBytes = held.length;
    this.pending = [];
    this.pendingBytes = 0;
  }

  private drop(piece: Buffer, lineEnds: boolean): void {
    if (this.head === '' && this.droppedBytes === 0) this.head = piece.subarray(0, 200).toString('utf8');
    this.droppedBytes += piece.length;
    this.tail = piece.length >= 200 ? piece.subarray(-200) : Buffer.concat([this.tail, piece]).subarray(-200);
    if (!lineEnds) return;
    this.tail = Buffer.from(this.tail);
    this.onDropped(this.head, this.tail.toString('utf8'), this.droppedBytes);
    this.discarding = false;
    this.head = '';
    this.tail = Buffer.alloc(0);
    this.droppedBytes = 0;
  }
}

/** The id of a JSON-RPC answer from its first and last bytes (SDK servers put it last, others first). */
export function idOfLine(head: string, tail: string): number | undefined {
  const last = /"id"\s*:\s*(\d{1,15})\s*\}\s*$/.exec(tail);
  if (last) return Number(last[1]);
  const first = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(\d{1,15})\s*,/.exec(head);
  return first ? Number(first[1]) : undefined;
}

function guardStdio<T extends RpcTransport & { start(): Promise<void> }>(transport: T, options: StreamBudgetOptions): T {
  const { maxBytes, server, logger } = options;
  // The requests sent and not answered yet: while there is one, an answer without a usable id is its
  // answer (mendedLines), as over HTTP, where the POST says which call an answer is for.
  const unanswered = new Set<RpcId>();
  watchCalls(transport, {
    sent: (id, sendOptions) => {
      unanswered.add(id);
      return sendOptions;
    },
    // a cancelled request's answer is no longer awaited
    cancelled: (id) => unanswered.delete(id),
    answered: (id) => unanswered.delete(id),
  });
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    const out = (transport as unknown as { _process?: { stdout?: Readable | null } })._process?.stdout;
    if (!out) {
      logger.warn(`${server}: its stdout could not be guarded (an SDK change?); its answers are limited by the SDK only`);
      return;
    }
    const sdk = out.listeners('data') as ((chunk: Buffer) => void)[];
    out.removeAllListeners('data');
    const lines = new LineBudget(maxBytes, (head, tail, bytes) => {
      const id = idOfLine(head, tail);
      logger.warn(`${server} wrote a message larger than ${maxBytes} bytes (DOWNSTREAM_MAX_RESPONSE_BYTES): it was dropped`, {
        server,
        bytes,
        ...(id !== undefined ? { call: id } : {}),
      });
      if (id === undefined) return;
      const onmessage = transport.onmessage as ((message: Message) => void) | undefined;
      onmessage?.({
        jsonrpc: '2.0',
        id,
        error: {
          code: -32603,
          message: `${server} answered more than ${maxBytes} bytes (DOWNSTREAM_MAX_RESPONSE_BYTES); the answer was dropped.`,
          data: ANSWER_TOO_LARGE,
        },
      });
    });
    out.on('data', (chunk: Buffer) => {
      const pass = lines.push(chunk);
      if (!pass) return;
      // (a sloppy server's line its transport would drop, mended: mcp/tolerant.ts)
      const mended = mendedLines(pass, unanswered.size === 1 ? unanswered.values().next().value : undefined);
      for (const listener of sdk) listener(mended);
    });
  };
  return transport;
}
