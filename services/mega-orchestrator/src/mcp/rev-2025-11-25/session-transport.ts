import { CallCancel } from '../../downstream/cancel';
import type { ClientRequester, LogListener, ProgressListener } from '../../downstream/http-client';
import { CALL_STREAM, LazyEventStream, progressNotification, replayEnded } from '../event-stream';
import { SessionEventStore } from './event-store';
import { randomUUID } from 'node:crypto';
import { InFlight, isPlainObject, JSONRPC_CODES, sendJson, STATELESS_VERSION, type HttpResponse } from '@mcp-fleet/kit';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@mcp-fleet/kit';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  isInitializeRequest,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { idOf, invalidMessage, isRequest, rpcError, withoutMcpErrorPrefix } from '../jsonrpc';
import { sendRpcError } from '../errors';
import { NO_TASKS_HERE, subscribedResources } from './sdk-server';
import { encodeFailure, type SessionCall } from './codec';
import { callerRequestId } from '../request-context';
import { awaitAnswer, cannotAnswer, clientCan } from '../client-requests';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { callerOwner, type Owner } from '../../auth/ownership';

interface LiveSession {
  id: string;
  /** The principal that initialized it (ownership.ts); only its requests reach the session. */
  owner: Owner;
  /** Whose share of the sessions it takes (MCP_MAX_SESSIONS_PER_OWNER): its owner, or without authorization its client's address. */
  share: string;
  server: Server;
  transport: StreamableHTTPServerTransport;
  createdAt: number;
  lastSeen: number;
  /** When it was last used, as a count of uses across sessions (the least recently used one is closed first). */
  usedAt: number;
  /** Request ids awaiting their answer: the SDK maps answers by id, so a reused id would never be answered. */
  inFlight: InFlight<string | number, true>;
  /** The fast path's running tools/call requests by id, for notifications/cancelled to abort. */
  running: InFlight<string | number, CallCancel>;
  /** Requests the gateway put to the client (an MCP server's elicitation, sampling, roots), awaiting its answer by id. */
  asking: Map<string, { resolve(result: Record<string, unknown>): void; reject(err: unknown): void }>;
  /** The session's SSE events, for a client that resumes a stream (GET with Last-Event-ID). */
  events: SessionEventStore;
  /** Event streams of the fast path's running calls, by stream id (a resuming client is attached to one). */
  callStreams: InFlight<string, LazyEventStream>;
}

/** The requests of a live session answered without the SDK transport (McpSessionTransportOptions.answer). */
export type DirectMethod = 'tools/call' | 'prompts/get' | 'resources/read';
const DIRECT_METHODS: ReadonlySet<unknown> = new Set<DirectMethod>(['tools/call', 'prompts/get', 'resources/read']);

/** A 2025-11-25 task-augmented tools/call (params.task): the SDK Server of a session serves it. */
function isTaskCall(m: unknown): boolean {
  return isPlainObject(m) && m.method === 'tools/call' && isPlainObject(m.params) && m.params.task !== undefined;
}

/** The first revision whose clients resume streams from a priming event (SEP-1699). */
const RESUMABLE_FROM = '2025-11-25';

/** True when the session's logging/setLevel is above this level (the SDK Server keeps the level per session). */
function sessionIgnores(live: LiveSession, level: string): boolean {
  const check = (live.server as unknown as { isMessageIgnored?: (level: string, sessionId: string) => boolean }).isMessageIgnored;
  return typeof check === 'function' ? check(level, live.id) : false;
}

/** A JSON-RPC response (an answer to a request the server sent). */
const isResponse = (m: Record<string, unknown>): boolean => !('method' in m) && 'id' in m && ('result' in m || 'error' in m);

/** The client's answers to the gateway's own requests: settled here; true when the message was one. */
function settleAnswer(live: LiveSession, m: Record<string, unknown>): boolean {
  const waiting = typeof m.id === 'string' ? live.asking.get(m.id) : undefined;
  if (!waiting) return false;
  live.asking.delete(m.id as string);
  const error = m.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  if (isPlainObject(m.result)) waiting.resolve(m.result);
  else
    waiting.reject(
      new McpError(
        typeof error?.code === 'number' ? error.code : JSONRPC_CODES.INTERNAL_ERROR,
        typeof error?.message === 'string' ? error.message : 'The client answered without a result.',
        error?.data,
      ),
    );
  return true;
}

export interface McpSessionTransportOptions {
  /** Builds the SDK Server for a session (`session` true) or for one sessionless request. */
  buildServer: (sessionId: () => string | undefined, session: boolean) => Server;
  /**
   * Answers one tools/call, prompts/get or resources/read of a live session without the SDK
   * transport: the result, or a thrown McpError for a JSON-RPC error. tools/call is the hot path;
   * all three may have an MCP server behind them that asks the client something, which goes on the
   * request's own event stream. Everything else goes through the SDK.
   */
  answer?: (method: DirectMethod, params: Record<string, unknown>, call: SessionCall) => unknown;
  idleMs: number;
  maxSessions: number;
  /** Live sessions one owner (without authorization: one client address) may hold; its least recently used one is closed beyond it. */
  maxSessionsPerOwner: number;
  /** The client's address as the gateway reads it (TRUST_PROXY), for the share of a session without authorization. */
  clientAddress?: (req: IncomingMessage) => string;
  /** The reconnection delay suggested to clients of resumable streams (SSE retry, ms). */
  sseRetryMs: number;
  /** Events kept per stream for clients that resume one. */
  sseEventsPerStream: number;
  /** Bytes of events kept per session for clients that resume a stream. */
  sseBytesPerSession: number;
  /** The 2026-07-28 subscriptions/listen streams, ended (gracefully) with the sessions on close. */
  listen?: { close(): void };
  logger: Logger;
}

/**
 * A request that invalidMessage() passed and whose `_meta` is absent or holds only a progressToken
 * is one the SDK's message schema accepts: the schema's parse (the costliest step of a tools/call)
 * is skipped for it.
 */
function plainRequest(m: Record<string, unknown>): boolean {
  if (typeof m.method !== 'string' || !('id' in m)) return false;
  const meta = (m.params as Record<string, unknown> | undefined)?._meta;
  if (meta === undefined) return true;
  if (!isPlainObject(meta)) return false;
  for (const key in meta) {
    if (key !== 'progressToken') return false;
    const t = meta.progressToken;
    if (typeof t !== 'string' && !(typeof t === 'number' && Number.isInteger(t))) return false;
  }
  return true;
}

/** notifications/cancelled of a fast-path tools/call: its downstream call is aborted (the client ignores the answer). */
function cancelRunning(live: LiveSession, params: unknown): void {
  const requestId = isPlainObject(params) ? params.requestId : undefined;
  if (typeof requestId === 'string' || typeof requestId === 'number') live.running.get(requestId)?.abort();
}

/** Replaces a request header in both views the SDK's Node adapter reads (headers and rawHeaders). */
function setHeader(req: IncomingMessage, name: string, value: string): void {
  req.headers[name] = value;
  const raw = req.rawHeaders;
  for (let i = raw.length - 2; i >= 0; i -= 2) if (raw[i].toLowerCase() === name) raw.splice(i, 2);
  raw.push(name, value);
}

/**
 * The Streamable HTTP transport contract is strict about headers; curl users are not. Requests are
 * normalised so that a bare `curl -d '{"jsonrpc":...}'` works: the Accept header is completed, the
 * body (already parsed, whatever its Content-Type) is declared JSON, and 2026-07-28, which the SDK
 * does not know, is read as the newest one it does (any other unknown version was refused: refusedVersion).
 */
export function normaliseRequest(req: IncomingMessage): void {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    setHeader(req, 'accept', 'application/json, text/event-stream');
  }
  if (req.method === 'POST' && !/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
    setHeader(req, 'content-type', 'application/json');
  const version = req.headers['mcp-protocol-version'];
  if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
    setHeader(req, 'mcp-protocol-version', LATEST_PROTOCOL_VERSION);
}

/**
 * A request after initialization whose MCP-Protocol-Version names no revision the gateway speaks
 * is answered 400 (the transport spec's MUST since 2025-06-18), -32022 with the versions it does
 * speak, as the 2026-07-28 revision answers one (initialize negotiates; its header is not read).
 */
function refusedVersion(req: IncomingMessage, res: HttpResponse): boolean {
  const version = req.headers['mcp-protocol-version'];
  if (typeof version !== 'string' || SUPPORTED_PROTOCOL_VERSIONS.includes(version) || version === STATELESS_VERSION) return false;
  const supported = [STATELESS_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];
  sendRpcError(
    res,
    null,
    JSONRPC_CODES.UNSUPPORTED_PROTOCOL_VERSION,
    `Unsupported MCP-Protocol-Version ${JSON.stringify(version.slice(0, 64))}: send one of ${supported.join(', ')} (the version initialize agreed on), or none for 2025-03-26.`,
    { supported, requested: version.slice(0, 64) },
  );
  return true;
}

/** Before the SDK server takes a request: its X-Request-Id is the gateway's id of it, the one its handlers read (codec.ts contextOfSdk). */
function withRequestId(req: IncomingMessage, res: { locals?: HttpResponse['locals'] }): IncomingMessage {
  const id = callerRequestId(req, res);
  if (req.headers['x-request-id'] !== id) setHeader(req, 'x-request-id', id);
  return req;
}

interface StreamEntry {
  resolveJson?: unknown;
}
interface TransportInternals {
  _webStandardTransport?: { _streamMapping?: Map<string, StreamEntry>; _requestToStreamMapping?: Map<unknown, string> };
}

/**
 * SDK 1.32.2 with enableJsonResponse keeps one stream entry per answered request in the transport
 * (typescript-sdk issue #2559): a session's heap grows with every call. Entries whose requests are
 * all answered are released here after each request. Reads the transport's private maps, so it is
 * tested (a session's entry count stays at zero) and does nothing if a later SDK renames them.
 */
export function releaseAnsweredStreams(transport: StreamableHTTPServerTransport): number {
  const inner = (transport as unknown as TransportInternals)._webStandardTransport;
  const streams = inner?._streamMapping;
  const pending = inner?._requestToStreamMapping;
  if (!streams || !pending) return 0;
  const waiting = new Set(pending.values());
  let released = 0;
  for (const [id, entry] of streams) {
    if (entry.resolveJson !== undefined && !waiting.has(id)) {
      streams.delete(id);
      released++;
    }
  }
  return released;
}

/** Size of the transport's stream map (for the leak regression test). */
export function streamEntries(transport: StreamableHTTPServerTransport): number {
  return (transport as unknown as TransportInternals)._webStandardTransport?._streamMapping?.size ?? -1;
}

/** MCP over Streamable HTTP: stateful sessions for clients that initialize, one-shot transports for the rest. */
/** URL-mode elicitations put to sessions, remembered this long for their completion notice. */
const URL_ELICITATION_MS = 3_600_000;
const URL_ELICITATIONS_MAX = 10_000;

export class McpSessionTransport {
  private readonly sessions = new Map<string, LiveSession>();
  private uses = 0;
  /** elicitationId -> the session that was asked to visit its URL (request or -32042 error), and until when. */
  private readonly urlElicitations = new Map<string, { sessionId: string; until: number }>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: McpSessionTransportOptions) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1000, Math.floor(options.idleMs / 2))));
    this.sweeper.unref();
  }

  get count(): number {
    return this.sessions.size;
  }

  /** Entries the SDK transport of a session holds (-1 when unknown): 0 once every request is answered. */
  streamEntries(sessionId: string): number {
    const live = this.sessions.get(sessionId);
    return live ? streamEntries(live.transport) : -1;
  }

  async handlePost(req: IncomingMessage, res: HttpResponse, body: unknown): Promise<void> {
    const invalid = invalidMessage(body);
    if (invalid) return sendRpcError(res, invalid.id, JSONRPC_CODES.INVALID_REQUEST, invalid.message);
    if (Array.isArray(body)) {
      // Batches were removed in 2025-06-18; a client without the header is 2025-03-26 (the transport spec's default).
      const version = req.headers['mcp-protocol-version'];
      if (typeof version === 'string' && version > BATCH_ERA_END) {
        return sendRpcError(
          res,
          null,
          JSONRPC_CODES.INVALID_REQUEST,
          `Invalid Request: JSON-RPC batches were removed in MCP 2025-06-18 and this request speaks ${version}; send one message per POST.`,
        );
      }
      // one request in the batch: the SDK transport answers it with a bare object
      if (body.filter(isRequest).length === 1) answerBatchAsArray(res);
    }
    const messages = (Array.isArray(body) ? body : [body]) as Record<string, unknown>[];
    // What the SDK transport would reject as a "parse error" is a JSON-RPC invalid request.
    const malformed = messages.find((m) => !plainRequest(m) && !JSONRPCMessageSchema.safeParse(m).success);
    if (malformed) {
      return sendRpcError(
        res,
        idOf(malformed),
        JSONRPC_CODES.INVALID_REQUEST,
        'Invalid Request: the message does not match JSON-RPC 2.0 as MCP uses it (check params._meta).',
      );
    }
    // The SDK would answer a malformed initialize with an internal error; it is invalid params.
    const badInit = messages.find((m) => m.method === 'initialize' && !isInitializeRequest(m));
    if (badInit) {
      sendJson(
        res,
        200,
        rpcError(
          idOf(badInit),
          JSONRPC_CODES.INVALID_PARAMS,
          'initialize needs params.protocolVersion (e.g. "2025-11-25"), params.capabilities ({}) and params.clientInfo ({name, version}).',
        ),
      );
      return;
    }
    if (!messages.some((m) => m.method === 'initialize') && refusedVersion(req, res)) return;
    // Whether the client itself accepts an event stream (normaliseRequest completes Accept for the SDK).
    const acceptsEvents = (req.headers.accept ?? '').includes('text/event-stream');
    normaliseRequest(req);
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string' && sid !== '') {
      const live = this.sessionOf(sid, res);
      if (!live) {
        return sendRpcError(
          res,
          null,
          JSONRPC_CODES.SESSION_NOT_FOUND,
          'Session not found: it expired or was closed. Initialize again, or send requests without Mcp-Session-Id.',
        );
      }
      this.touch(live);
      // Answers to what the gateway asked the client on behalf of an MCP server: delivered, 202.
      if (live.asking.size > 0 && messages.every(isResponse)) {
        const settled = messages.map((m) => settleAnswer(live, m));
        if (settled.every(Boolean)) {
          res.statusCode = 202;
          return void res.end();
        }
      }
      const ids = messages.map(idOf).filter((id): id is string | number => id !== null && id !== undefined);
      const reused = ids.find((id, i) => live.inFlight.has(id) || ids.indexOf(id) !== i);
      if (reused !== undefined) {
        return sendRpcError(
          res,
          reused,
          JSONRPC_CODES.INVALID_REQUEST,
          `Request id ${JSON.stringify(reused)} is already in flight in this session; give every request its own id.`,
        );
      }
      for (const id of ids) live.inFlight.set(id, true);
      const single = Array.isArray(body) ? undefined : (body as Record<string, unknown>);
      if (single && DIRECT_METHODS.has(single.method) && 'id' in single && !isTaskCall(single) && this.options.answer) {
        // in flight until the call ends, which may be after its connection closed (a resumable stream)
        try {
          await this.answerDirectly(live, single, req, res, acceptsEvents);
        } finally {
          for (const id of ids) live.inFlight.delete(id);
        }
        return;
      }
      res.on('close', () => {
        for (const id of ids) live.inFlight.delete(id);
      });
      // The SDK cancels its own requests; the fast path's calls are aborted here (the SDK still answers 202).
      for (const m of messages) if (m.method === 'notifications/cancelled') cancelRunning(live, m.params);
      try {
        await live.transport.handleRequest(withRequestId(req, res), res, body);
      } finally {
        releaseAnsweredStreams(live.transport);
      }
      return;
    }
    if (messages.some((m) => isInitializeRequest(m))) {
      await this.initialize(req, res, body);
      return;
    }
    await this.sessionless(req, res, body);
  }

  /**
   * tools/call in a live session, answered straight from the dispatcher: no Node/Web request
   * conversion and no second validation of the message (issue 14; about 0.4 ms per call). The
   * answer is what the SDK would send: the result, or a JSON-RPC error with status 200.
   * prompts/get and resources/read take the same way, so that the MCP server behind them can ask
   * the client something on the request's event stream (the SDK answers them as plain JSON).
   */
  private async answerDirectly(
    live: LiveSession,
    msg: Record<string, unknown>,
    req: IncomingMessage,
    res: HttpResponse,
    acceptsEvents: boolean,
  ): Promise<void> {
    const id = idOf(msg);
    // no AbortSignal unless something on the call's way needs one (downstream/cancel.ts)
    const cancel = new CallCancel();
    // A client that lost a resumable stream comes back for the rest (GET with Last-Event-ID): the call
    // goes on. Any other closed connection abandons it.
    res.on('close', () => {
      if (!res.writableFinished && !stream.resumable) cancel.abort();
    });
    if (id !== null) live.running.set(id, cancel);
    let payload: Record<string, unknown>;
    const params = (msg.params ?? {}) as Record<string, unknown>;
    // A progressToken (and a client that takes SSE) turns this answer into an event stream: the
    // downstream's progress as notifications/progress, then the result (Streamable HTTP allows either).
    // So does a log message or a request of the MCP server behind the call (elicitation, sampling, roots).
    const token = (params._meta as { progressToken?: unknown } | undefined)?.progressToken;
    const version = req.headers['mcp-protocol-version'];
    const resumption =
      typeof version === 'string' && version >= RESUMABLE_FROM
        ? { store: live.events, retryMs: this.options.sseRetryMs, onStart: (streamId: string) => live.callStreams.set(streamId, stream) }
        : undefined;
    const stream = new LazyEventStream(res, acceptsEvents, { 'mcp-session-id': live.id }, resumption);
    let onProgress: ProgressListener | undefined;
    if (msg.method === 'tools/call' && (typeof token === 'string' || typeof token === 'number') && stream.start())
      onProgress = (progress, total, message) => stream.send(progressNotification(token, progress, total, message));
    // The server's log messages, filtered by this session's logging/setLevel (the SDK keeps it).
    const onLog: LogListener = (log) => {
      if (!sessionIgnores(live, log.level)) stream.send({ jsonrpc: '2.0', method: 'notifications/message', params: log });
    };
    const onClientRequest = this.asker(live, stream, cancel);
    try {
      const result = await this.options.answer!(msg.method as DirectMethod, params, {
        sessionId: live.id,
        req,
        res,
        cancel,
        onProgress,
        onClientRequest,
        onLog,
      });
      payload = { jsonrpc: '2.0', id, result };
    } catch (err) {
      payload = encodeFailure(id, err, String(msg.method), this.options.logger);
    }
    if (id !== null) live.running.delete(id);
    // -32042 (URL elicitation required) passed from an MCP server: its completions come to this session.
    const error = payload.error as { code?: unknown; data?: { elicitations?: unknown } } | undefined;
    if (error?.code === -32042 && Array.isArray(error.data?.elicitations)) this.rememberUrlElicitations(live, error.data.elicitations);
    stream.finish(200, payload);
    if (stream.streamId !== undefined) live.callStreams.delete(stream.streamId);
  }

  /**
   * Puts an MCP server's request to this session's client on the call's event stream (2025-era
   * Streamable HTTP: a request related to the POST), and waits for the client's answer, which comes in
   * a POST of its own (settleAnswer). A client that did not declare the capability, or whose POST did
   * not accept an event stream, cannot be asked: the server is told so.
   */
  private asker(live: LiveSession, stream: LazyEventStream, call: CallCancel): ClientRequester {
    const capabilities = live.server.getClientCapabilities();
    const ask: ClientRequester = (method, params, signal) => {
      if (!clientCan(capabilities, method, params)) return Promise.reject(cannotAnswer(method, params));
      if (method === 'elicitation/create' && params.mode === 'url') this.rememberUrlElicitations(live, [params]);
      if (!stream.start())
        return Promise.reject(
          new McpError(
            JSONRPC_CODES.METHOD_NOT_FOUND,
            `The caller of this tool call cannot be asked ${method}: its POST did not accept text/event-stream.`,
          ),
        );
      const id = `mcp-fleet-${randomUUID()}`;
      const both = AbortSignal.any([signal, call.signal]);
      const { answer, settle } = awaitAnswer<Record<string, unknown>>(both, () => {
        live.asking.delete(id);
        stream.send({
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: id, reason: 'The MCP server no longer waits for it.' },
        });
      });
      if (!both.aborted) {
        live.asking.set(id, settle);
        stream.send({ jsonrpc: '2.0', id, method, params });
      }
      return answer;
    };
    ask.capabilities = capabilities;
    return ask;
  }

  /** The live session with this id when it is the caller's own; another principal's is as unknown as one that never was. */
  private sessionOf(id: string, res: HttpResponse): LiveSession | undefined {
    const live = this.sessions.get(id);
    return live && live.owner === callerOwner(res) ? live : undefined;
  }

  private async initialize(req: IncomingMessage, res: HttpResponse, body: unknown): Promise<void> {
    if (this.closed) return sendRpcError(res, null, JSONRPC_CODES.CONNECTION_CLOSED, 'The gateway is shutting down.');
    const events = new SessionEventStore({ perStream: this.options.sseEventsPerStream, bytes: this.options.sseBytesPerSession });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      // the GET stream's events, for a client that reconnects with Last-Event-ID
      eventStore: events,
      retryInterval: this.options.sseRetryMs,
      onsessioninitialized: (id) => {
        live.id = id;
        this.sessions.set(id, live);
        this.evictBeyondLimit(live);
      },
      onsessionclosed: (id) => {
        if (id) this.sessions.delete(id);
      },
    });
    withPlainErrorMessages(transport);
    const server = this.options.buildServer(() => transport.sessionId, true);
    const owner = callerOwner(res);
    const live: LiveSession = {
      id: '',
      owner,
      share: owner ?? `address:${this.options.clientAddress?.(req) ?? req.socket.remoteAddress ?? 'unknown'}`,
      server,
      transport,
      createdAt: Date.now(),
      lastSeen: Date.now(),
      usedAt: ++this.uses,
      inFlight: new InFlight(),
      running: new InFlight(),
      asking: new Map(),
      events,
      callStreams: new InFlight(),
    };
    transport.onclose = () => {
      if (live.id) this.sessions.delete(live.id);
    };
    await server.connect(transport);
    await transport.handleRequest(withRequestId(req, res), res, body);
    // An initialize that failed (e.g. batched with other requests) leaves nothing behind.
    if (!transport.sessionId) await server.close().catch(() => undefined);
  }

  private async sessionless(req: IncomingMessage, res: HttpResponse, body: unknown): Promise<void> {
    // (the SDK would answer -32603 "does not support task creation", which does not say why)
    const asTask = (Array.isArray(body) ? body : [body]).find(isTaskCall);
    if (asTask) return void sendJson(res, 200, rpcError(idOf(asTask), JSONRPC_CODES.INVALID_PARAMS, NO_TASKS_HERE));
    const transport = withPlainErrorMessages(
      new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true }),
    );
    const server = this.options.buildServer(() => undefined, false);
    res.on('close', () => {
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    await transport.handleRequest(withRequestId(req, res), res, body);
  }

  /** GET (the SSE stream for server notifications) and DELETE (end the session). */
  async handleSession(req: IncomingMessage, res: HttpResponse): Promise<void> {
    const sid = req.headers['mcp-session-id'];
    if (typeof sid !== 'string' || sid === '') {
      return sendRpcError(
        res,
        null,
        JSONRPC_CODES.SESSION_REQUIRED,
        `${req.method} /mcp needs an Mcp-Session-Id header; initialize first (POST /mcp). Sessionless clients only POST.`,
      );
    }
    if (refusedVersion(req, res)) return;
    const live = this.sessionOf(sid, res);
    if (!live)
      return sendRpcError(res, null, JSONRPC_CODES.SESSION_NOT_FOUND, 'Session not found: it expired or was closed. Initialize again.');
    this.touch(live);
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version))
      setHeader(req, 'mcp-protocol-version', LATEST_PROTOCOL_VERSION);
    // Resuming a tool call's event stream (the SDK keeps the GET stream's own events).
    const lastEventId = req.headers['last-event-id'];
    if (req.method === 'GET' && typeof lastEventId === 'string' && (req.headers.accept ?? '').includes('text/event-stream')) {
      const callStream = live.events.streamOf(lastEventId);
      if (callStream?.startsWith(CALL_STREAM)) {
        const running = live.callStreams.get(callStream);
        if (running) running.resume(res, lastEventId);
        else replayEnded(res, live.events, lastEventId, { 'mcp-session-id': live.id });
        return;
      }
    }
    await live.transport.handleRequest(req, res);
  }

  /**
   * One notification to every connected session, on its GET stream if open (`send` may skip a
   * session by answering undefined). A session that cannot take it is logged at debug, not failed.
   */
  private broadcast(what: string, send: (server: Server, sessionId: string) => Promise<void> | undefined): void {
    for (const live of this.sessions.values())
      send(live.server, live.id)?.catch((err: Error) => this.options.logger.debug(`${what} not delivered`, { err: err.message }));
  }

  /** Tell every connected session that the tool list changed. */
  notifyToolsChanged(): void {
    this.broadcast('list_changed', (server) => server.sendToolListChanged());
  }

  private rememberUrlElicitations(live: LiveSession, elicitations: unknown[]): void {
    for (const e of elicitations) {
      const id = isPlainObject(e) && typeof e.elicitationId === 'string' ? e.elicitationId.slice(0, 200) : undefined;
      if (!id) continue;
      this.urlElicitations.delete(id);
      this.urlElicitations.set(id, { sessionId: live.id, until: Date.now() + URL_ELICITATION_MS });
    }
    while (this.urlElicitations.size > URL_ELICITATIONS_MAX) this.urlElicitations.delete(this.urlElicitations.keys().next().value!);
  }

  /**
   * notifications/elicitation/complete of an MCP server: to the session that was asked to visit that
   * elicitation's URL (on its GET stream), once; unknown or expired ids are dropped.
   */
  notifyElicitationComplete(elicitationId: string): void {
    const asked = this.urlElicitations.get(elicitationId);
    this.urlElicitations.delete(elicitationId);
    const live = asked && asked.until > Date.now() ? this.sessions.get(asked.sessionId) : undefined;
    if (!live) return;
    live.server
      .notification({ method: 'notifications/elicitation/complete', params: { elicitationId } })
      .catch((err: Error) => this.options.logger.debug('elicitation/complete not delivered', { err: err.message }));
  }

  /** Tell every connected session that the resource list changed (an MCP server's resources came or went). */
  notifyResourcesListChanged(): void {
    this.broadcast('list_changed', (server) => server.sendResourceListChanged());
  }

  /** Tell every connected session that the prompt list changed. */
  notifyPromptsChanged(): void {
    this.broadcast('list_changed', (server) => server.sendPromptListChanged());
  }

  /** A notifications/message to every session; the SDK drops it for one whose logging/setLevel is above `level`. */
  notifyLog(level: LoggingLevel, data: Record<string, unknown>): void {
    this.broadcast('log message', (server, id) => server.sendLoggingMessage({ level, logger: 'mega-orchestrator', data }, id));
  }

  /** notifications/resources/updated to every session that subscribed to one of these URIs. */
  notifyResourcesUpdated(uris: readonly string[]): void {
    for (const uri of uris)
      this.broadcast('resources/updated', (server) =>
        subscribedResources(server).has(uri) ? server.sendResourceUpdated({ uri }) : undefined,
      );
  }

  /**
   * A session used now. Recency is a counter on the session, not the sessions' order in their Map
   * (a delete and set on every request churned the Map's tables; see InFlight in the kit).
   */
  private touch(live: LiveSession): void {
    live.lastSeen = Date.now();
    live.usedAt = ++this.uses;
  }

  /**
   * Fair share (issue 33, item 9): a new session first counts against its owner's share
   * (MCP_MAX_SESSIONS_PER_OWNER; without authorization, its client address's), whose least recently
   * used session is closed beyond it; then, beyond MCP_MAX_SESSIONS, the owner holding the most
   * sessions gives up its least recently used one. So no client opening sessions closes another's
   * while it holds more than that one. Both walk the sessions (at most MCP_MAX_SESSIONS) once per
   * session created, never per request.
   */
  private evictBeyondLimit(newcomer: LiveSession): void {
    const { maxSessions, maxSessionsPerOwner, logger } = this.options;
    for (;;) {
      let count = 0;
      let oldest: LiveSession | undefined;
      for (const live of this.sessions.values())
        if (live.share === newcomer.share) {
          count += 1;
          if (!oldest || live.usedAt < oldest.usedAt) oldest = live;
        }
      if (count <= maxSessionsPerOwner || !oldest || oldest === newcomer) break;
      logger.info("closing this owner's least recently used MCP session (MCP_MAX_SESSIONS_PER_OWNER reached)", { session: oldest.id });
      void this.end(oldest);
    }
    while (this.sessions.size > maxSessions) {
      const shares = new Map<string, { count: number; oldest: LiveSession }>();
      for (const live of this.sessions.values()) {
        const share = shares.get(live.share);
        if (!share) shares.set(live.share, { count: 1, oldest: live });
        else {
          share.count += 1;
          if (live.usedAt < share.oldest.usedAt) share.oldest = live;
        }
      }
      let heaviest: { count: number; oldest: LiveSession } | undefined;
      for (const share of shares.values())
        if (!heaviest || share.count > heaviest.count || (share.count === heaviest.count && share.oldest.usedAt < heaviest.oldest.usedAt))
          heaviest = share;
      if (!heaviest) break;
      logger.info('closing the least recently used MCP session of the owner holding the most (MCP_MAX_SESSIONS reached)', {
        session: heaviest.oldest.id,
      });
      void this.end(heaviest.oldest);
    }
  }

  private sweep(): void {
    const cutoff = Date.now() - this.options.idleMs;
    for (const live of [...this.sessions.values()]) if (live.lastSeen < cutoff) void this.end(live);
  }

  private async end(live: LiveSession): Promise<void> {
    this.sessions.delete(live.id);
    // its calls' answers can no longer reach anyone (a call whose connection dropped ran on for a resume)
    for (const controller of live.running.values()) controller.abort();
    await live.transport.close().catch(() => undefined);
    await live.server.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.options.listen?.close();
    await Promise.all([...this.sessions.values()].map((s) => this.end(s)));
  }
}

/** The last MCP revision with JSON-RPC batches. */
const BATCH_ERA_END = '2025-03-26';

/**
 * A batch is answered with an array (JSON-RPC 2.0), also when it holds a single request, which the
 * SDK transport answers with a bare object: a 200 JSON answer is held until it ends, wrapped in
 * [ ] and sent with its true length. Anything else (an event stream, an error status) passes as it is.
 */
function answerBatchAsArray(res: ServerResponse): void {
  const original = { writeHead: res.writeHead, write: res.write, end: res.end };
  const restore = () => Object.assign(res, original);
  let held: { status: number; headers: Record<string, unknown> } | undefined;
  const chunks: Buffer[] = [];
  const toBuffer = (chunk: unknown) => (typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array));
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const headers = (rest.find((r) => r !== null && typeof r === 'object' && !Array.isArray(r)) ?? {}) as Record<string, unknown>;
    const typeKey = Object.keys(headers).find((k) => k.toLowerCase() === 'content-type');
    const type = String((typeKey ? headers[typeKey] : res.getHeader('content-type')) ?? '');
    if (status !== 200 || !type.includes('application/json')) {
      restore();
      return res.writeHead(status, ...(rest as []));
    }
    held = { status, headers };
    return res;
  }) as ServerResponse['writeHead'];
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!held) return (original.write as (...a: unknown[]) => boolean).call(res, chunk, ...rest);
    chunks.push(toBuffer(chunk));
    return true;
  }) as ServerResponse['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    restore();
    if (!held) return (original.end as (...a: unknown[]) => ServerResponse).call(res, chunk, ...rest);
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(toBuffer(chunk));
    let text = Buffer.concat(chunks).toString('utf8');
    if (text.startsWith('{')) text = `[${text}]`;
    const headers = Object.fromEntries(Object.entries(held.headers).filter(([k]) => k.toLowerCase() !== 'content-length'));
    if (!res.headersSent) res.removeHeader('content-length');
    res.writeHead(held.status, { ...headers, 'content-length': Buffer.byteLength(text) });
    const done = [chunk, ...rest].find((a): a is () => void => typeof a === 'function');
    return done ? res.end(text, done) : res.end(text);
  }) as ServerResponse['end'];
}

/**
 * The SDK server answers an McpError thrown by a handler with its message as it is, "MCP error
 * <code>: " included, and the client's McpError puts the prefix on again: errors leave without it.
 */
function withPlainErrorMessages(transport: StreamableHTTPServerTransport): StreamableHTTPServerTransport {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const error = (message as { error?: { message?: unknown } }).error;
    if (error && typeof error.message === 'string') error.message = withoutMcpErrorPrefix(error.message);
    return send(message, options);
  };
  return transport;
}
