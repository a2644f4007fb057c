/**
 * What a downstream is to the gateway: the interface the registry and the dispatcher talk to, one
 * request, its answer, and why a request got none. DownstreamClient (downstream/http-client.ts, with its
 * channel in downstream/channel.ts) and McpDownstream implement it; this file imports none of them,
 * so each imports it without an import cycle (issue 29).
 */

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
}

/** The answer of a call whose answer went over DOWNSTREAM_MAX_RESPONSE_BYTES (that call alone fails, UPSTREAM_ERROR); its HTTP status when it had one. */
export function answerTooLarge(maxBytes: number, status = 502): DownstreamAnswer {
  return { status, json: undefined, problem: `an answer larger than ${maxBytes} bytes`, tooLarge: true };
}

export interface DownstreamRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  requestId?: string;
  /** W3C traceparent of the gateway's span for this call. */
  traceparent?: string;
  timeoutMs: number;
  /** Aborted when the caller goes away. */
  signal?: AbortSignal;
  /** Asks the downstream to stream its progress (NDJSON) and receives each report. */
  onProgress?: ProgressListener;
  /** Puts what an MCP server asks its client during this tool call to the gateway's caller. */
  onClientRequest?: ClientRequester;
  /** Receives the log messages (notifications/message params) an MCP server sends during this tool call. */
  onLog?: LogListener;
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
 * (downstream/rev-2026-07-28.ts).
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

/** What the registry and the dispatcher talk to: an HTTP service of the kit, or an MCP server behind an adapter. */
export interface Downstream {
  /** Where it is, safe to show (no credentials). */
  readonly url: string;
  readonly port: number;
  request(req: DownstreamRequest): Promise<DownstreamAnswer>;
  close(): Promise<void>;
  destroy(): Promise<void>;
}
