/**
 * What a downstream is to the gateway: the interface the registry and the dispatcher talk to, one
 * request, its answer, and why a request got none. DownstreamClient (downstream/http-client.ts, with its
 * channel in downstream/channel.ts) and McpDownstream implement it; this file imports none of them,
 * so each imports it without an import cycle (issue 29).
 */
import type { CallToolResult, CompleteResult, GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { CallCancel } from './cancel';

/** URL without credentials or query string, safe to show in /services and errors. */
export function displayUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return '(invalid url)';
  }
}

/** Why a request to a downstream got no HTTP answer. */
export type FailureKind = 'refused' | 'connection' | 'timeout' | 'aborted';

export class DownstreamFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    /** False when the request certainly never reached the downstream (safe to send elsewhere). */
    readonly delivered: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DownstreamFailure';
  }
}

export interface DownstreamAnswer {
  status: number;
  /** Parsed JSON, or undefined when the answer was not JSON. */
  json: unknown;
  /** Set when the answer could not be read as JSON (short excerpt, for the error message). */
  problem?: string;
  /** The JSON text of the envelope's result as the service wrote it (channel answers), to pass on without serializing it again. */
  resultText?: string;
  /** Cut at DOWNSTREAM_MAX_RESPONSE_BYTES: the downstream answered, too much (its breaker does not count it). */
  tooLarge?: true;
  /** The JSON-RPC error an MCP server answered in place of a result (its caller over MCP gets it as it was). */
  rpcError?: RpcError;
}

/** A JSON-RPC error as an MCP server sent it. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * An operation's answer, typed: `value` is its result, its shape checked where the answer came in
 * (an MCP server's by the SDK's schema, a kit service's in kit-answers.ts); absent when the operation
 * failed, and then `status`, the envelope in `json`, `problem` and `rpcError` say why. (`json` is the
 * answer as a kit service's REST route has it, for the routes passed on as they are.)
 */
export interface Answer<T> extends DownstreamAnswer {
  value?: T;
}

/** A list as the gateway reads it: its items (each checked by the registry, which bounds them), and whether pages were left unread (`more`). */
export interface ListPage {
  items: unknown[];
  more: boolean;
}

/** health's result: the downstream answered; its own word for its state, when it gave one. */
export interface Health {
  status?: string;
}

export type HealthAnswer = Answer<Health>;
export type ListAnswer = Answer<ListPage>;
export type PromptAnswer = Answer<GetPromptResult>;
export type ReadAnswer = Answer<ReadResourceResult>;
export type CompleteAnswer = Answer<CompleteResult>;
/** subscribe's and unsubscribe's: `value` true when the downstream agreed. */
export type DoneAnswer = Answer<true>;

/**
 * What a tool call answered: the fleet's envelope for REST callers and the call history (`json`), and
 * the tool's result in MCP's terms (`result`), read where the answer came in: an MCP server's own
 * result as it sent it (its isError results too; mcp/answers.ts), a kit service's envelope read as
 * one (kit-answers.ts). Without `result`, the call got no tool result: its error is the envelope's,
 * or the server's JSON-RPC error (`rpcError`).
 */
export interface ToolAnswer extends DownstreamAnswer {
  result?: CallToolResult;
}

/** The answer of a call whose answer went over DOWNSTREAM_MAX_RESPONSE_BYTES (that call alone fails, UPSTREAM_ERROR); its HTTP status when it had one. */
export function answerTooLarge(maxBytes: number, status = 502): DownstreamAnswer {
  return { status, json: undefined, problem: `an answer larger than ${maxBytes} bytes`, tooLarge: true };
}

/** A request to a kit service's REST route (DownstreamClient), by method and path. */
export interface DownstreamRequest extends CallOptions {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

export type LogListener = (message: { level: string; logger?: string; data: unknown }) => void;

export type ProgressListener = (progress: number, total?: number, message?: string) => void;

/** What an MCP server may ask its client (MCP's client features): a person, a model, the client's roots. */
export const CLIENT_REQUEST_METHODS = ['elicitation/create', 'sampling/createMessage', 'roots/list'] as const;
export type ClientRequestMethod = (typeof CLIENT_REQUEST_METHODS)[number];

/**
 * The caller's side of a call, as an MCP server behind the gateway may use it: a function that
 * answers one such request on behalf of the call's caller (the caller's result, or a thrown McpError
 * the server receives as the JSON-RPC error; the signal aborts when the server withdraws the
 * request), what the caller declared it can be asked, and the answers it sent up front (2026-07-28
 * inputResponses on a first request). The last two reach a 2026-07-28 server in the request itself
 * (downstream/mcp/client-2026-07-28.ts).
 */
export interface ClientRequester {
  (
    method: ClientRequestMethod,
    params: Record<string, unknown>,
    signal: AbortSignal,
    /** The server's own name for the request (a 2026-07-28 server's inputRequests key): kept where the caller sees keys. */
    key?: string,
  ): Promise<Record<string, unknown>>;
  capabilities?: unknown;
  inputResponses?: Record<string, unknown>;
  /**
   * Set for a caller of the 2026-07-28 revision: its declared capabilities are all it declared, so an
   * extension it did not declare (tasks) is not declared for it to the server either, which then
   * answers as it would answer that caller directly (-32021 for a tool that needs it).
   */
  revision?: '2026-07-28';
}

/**
 * The time budget a kit service is given for a call the gateway waits `timeoutMs` for (BUDGET_HEADER,
 * a channel frame's budgetMs): that limit less a margin for the answer's way back (a tenth of it,
 * 20 ms to 1 s), so the service ends the call with its own TIMEOUT (or a tool's own timed-out
 * result) before the gateway gives up on it. The text of the last one is kept: the limit is the
 * same for almost every call, so no string is made per call.
 */
export function budgetText(timeoutMs: number): string {
  if (timeoutMs !== lastBudget.timeoutMs)
    lastBudget = { timeoutMs, text: String(Math.max(1, timeoutMs - Math.min(1000, Math.max(20, Math.round(timeoutMs / 10))))) };
  return lastBudget.text;
}
let lastBudget = { timeoutMs: -1, text: '' };

/** The options of one operation on a downstream: its time limit, its cancellation, and its caller's side. */
export interface CallOptions {
  timeoutMs: number;
  /** Aborted when the caller goes away (the operation is cancelled at the downstream). */
  signal?: AbortSignal;
  /**
   * The same cancellation without an AbortSignal (a 2025 session's hot path; then `signal` is
   * undefined): the channel listens here, and what needs a real signal makes it with signalOf
   * (cancel.ts).
   */
  cancel?: CallCancel;
  requestId?: string;
  /** W3C traceparent of the gateway's span for this call. */
  traceparent?: string;
  /** Asks the downstream to stream its progress and receives each report. */
  onProgress?: ProgressListener;
  /** Puts what an MCP server asks its client during this operation to the gateway's caller. */
  onClientRequest?: ClientRequester;
  /** Receives the log messages (notifications/message params) an MCP server sends during this operation. */
  onLog?: LogListener;
  /** The caller's own `_meta` of the request, for an MCP server (callersMeta: the keys that are the caller's to send on). */
  meta?: Record<string, unknown>;
}

/** A `_meta` key's prefix (before its slash) that MCP reserves: one of its labels is `modelcontextprotocol` or `mcp` (io.modelcontextprotocol/, mcp.dev/). */
const RESERVED_PREFIX = /^(?:[^/]*\.)?(?:modelcontextprotocol|mcp)(?:\.[^/]*)?\//i;
/** The gateway's own keys of a request's `_meta` (routing, recording, progress): not the caller's to send on. */
const GATEWAY_META_KEYS: ReadonlySet<string> = new Set(['progressToken', 'mode', 'context_id', 'session_id']);

/**
 * What of a request's `_meta` goes on to the MCP server behind the gateway, as the caller sent it:
 * every key but the protocol's reserved ones (each hop writes its own: protocol version, client
 * capabilities, log level, related task) and the gateway's own (progressToken, which the gateway
 * replaces with its own, mode, context_id, session_id). Undefined when none is left.
 */
export function callersMeta(meta: unknown): Record<string, unknown> | undefined {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined;
  let out: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(meta)) {
    if (GATEWAY_META_KEYS.has(key) || RESERVED_PREFIX.test(key)) continue;
    (out ??= {})[key] = value;
  }
  return out;
}

/** A tool call's options: besides the call's, its arguments as JSON text when the caller has it (sent as they are, not serialized again). */
export interface ToolCallOptions extends CallOptions {
  argsJson?: string;
}

/** completion/complete's params (MCP's CompleteRequest params). */
export interface CompleteParams {
  ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}

/**
 * What the registry and the dispatcher talk to: an HTTP service of the kit (http-client.ts, which
 * maps each operation to its REST route) or an MCP server (mcp/mcp-downstream.ts, which speaks MCP).
 * Each operation answers its typed Answer: on success `value` (health: `{status?}`; a list: its
 * items and `more`; getPrompt, readResource, complete: MCP's result; subscribe, unsubscribe: true);
 * callTool a ToolAnswer, the tool's MCP result in `result`. Else no value: a status and the fleet's
 * error envelope (404: the downstream offers no such thing), with the MCP server's JSON-RPC error as
 * rpcError when it answered one. A downstream that could not be reached, timed out or whose caller
 * went away throws DownstreamFailure.
 */
export interface Downstream {
  /** Where it is, safe to show (no credentials). */
  readonly url: string;
  readonly port: number;
  health(options: CallOptions): Promise<HealthAnswer>;
  /** One of its lists (tools, prompts, resources, resourceTemplates): every page of it. */
  list(kind: ListName, options: CallOptions): Promise<ListAnswer>;
  callTool(name: string, args: Record<string, unknown>, options: ToolCallOptions): Promise<ToolAnswer>;
  getPrompt(name: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<PromptAnswer>;
  readResource(uri: string, options: CallOptions): Promise<ReadAnswer>;
  complete(params: CompleteParams, options: CallOptions): Promise<CompleteAnswer>;
  subscribe(uri: string, options: CallOptions): Promise<DoneAnswer>;
  unsubscribe(uri: string, options: CallOptions): Promise<DoneAnswer>;
  /**
   * A REST route of a kit service by path (its skills: GET /skills/list, POST /skills/get). An MCP
   * server answers the routes of the operations above (a compatibility path: routeRequest) and 404 to the rest.
   */
  request(req: DownstreamRequest): Promise<DownstreamAnswer>;
  close(): Promise<void>;
  destroy(): Promise<void>;
}

/** The kit's REST route of each list. */
const LIST_ROUTES = {
  tools: '/tools/list',
  prompts: '/prompts/list',
  resources: '/resources/list',
  resourceTemplates: '/resources/templates/list',
} as const;
export type ListName = keyof typeof LIST_ROUTES;

/**
 * A request by path answered through the downstream's operations (for a downstream that has no
 * REST routes of its own, an MCP server): the routes of the kit that have an MCP operation; any
 * other is 404 `unknown`.
 */
export function routeRequest(d: Downstream, req: DownstreamRequest, unknown: () => DownstreamAnswer): Promise<DownstreamAnswer> {
  const route = `${req.method} ${req.path}`;
  if (route === 'GET /health') return d.health(req);
  for (const [kind, path] of Object.entries(LIST_ROUTES)) if (route === `GET ${path}`) return d.list(kind as ListName, req);
  if (req.method !== 'POST') return Promise.resolve(unknown());
  const body = (() => {
    try {
      return JSON.parse(req.body ?? '{}') as Record<string, unknown>;
    } catch {
      return {};
    }
  })();
  switch (req.path) {
    case '/tools/call':
      return d.callTool(String(body.name), (body.arguments ?? {}) as Record<string, unknown>, req);
    case '/prompts/get':
      return d.getPrompt(String(body.name), body.arguments as Record<string, unknown> | undefined, req);
    case '/resources/read':
      return d.readResource(String(body.uri), req);
    case '/resources/subscribe':
      return d.subscribe(String(body.uri), req);
    case '/resources/unsubscribe':
      return d.unsubscribe(String(body.uri), req);
    case '/completion/complete':
      return d.complete(body as unknown as CompleteParams, req);
    default:
      return Promise.resolve(unknown());
  }
}

/** The kit's REST route of a list. */
export function listRoute(kind: ListName): string {
  return LIST_ROUTES[kind];
}
