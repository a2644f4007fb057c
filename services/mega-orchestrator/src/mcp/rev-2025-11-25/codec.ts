/**
 * The 2025-11-25 revision's codec (and the older versions read the same way): how a request is read
 * into a RequestContext (the session it belongs to, the principal the transport attached, the
 * capabilities the session declared at initialize) whether the SDK server handles it or the
 * session's hot path answers it, and how an answer is written (a JSON-RPC result or error, HTTP 200
 * either way; progress, log messages and the server's requests on the request's event stream,
 * session-transport.ts).
 */
import type { IncomingMessage } from 'node:http';
import { header, JSONRPC_CODES, type HttpResponse, type Logger } from '@mcp-fleet/kit';
import type { Principal } from '../../auth/auth';
import type { CallCancel } from '../../downstream/cancel';
import type { ClientRequester, LogListener, ProgressListener } from '../../downstream/http-client';
import { failurePayload, rpcFailure } from '../errors';
import type { RpcId } from '../jsonrpc';
import { callerRequestId, type ExecutionView, type RequestContext } from '../request-context';

/** What the SDK server gives a handler of one request (the parts read here). */
export interface SdkExtra {
  authInfo?: { extra?: Record<string, unknown> };
  requestInfo?: { headers: Record<string, string | string[] | undefined> };
  requestId: string | number;
  signal: AbortSignal;
}

const first = (v: string | string[] | undefined) => (typeof v === 'string' ? v : undefined);

/**
 * A request the SDK server handles. The transport set its X-Request-Id to the gateway's id of the
 * request (session-transport.ts), so the id is the one the hot path uses; a request without one
 * (tests that drive the server directly) is known by its JSON-RPC id.
 */
export function contextOfSdk(extra: SdkExtra, session: { sessionId?: string; pageSize: number; execution: ExecutionView }): RequestContext {
  const headers = extra.requestInfo?.headers;
  return {
    revision: '2025-11-25',
    principal: extra.authInfo?.extra?.principal as Principal | undefined,
    requestId: first(headers?.['x-request-id']) ?? String(extra.requestId),
    traceparent: first(headers?.traceparent),
    sessionId: session.sessionId,
    signal: extra.signal,
    execution: session.execution,
    pageSize: session.pageSize,
    resourceNotFound: JSONRPC_CODES.RESOURCE_NOT_FOUND,
  };
}

/** A request of a live session that its hot path answers without the SDK transport (session-transport.ts answerDirectly). */
export interface SessionCall {
  sessionId: string;
  req: IncomingMessage;
  res: HttpResponse;
  /** Aborted when the client cancels the request or goes away; its AbortSignal is made only when read. */
  cancel: CallCancel;
  onProgress?: ProgressListener;
  onClientRequest?: ClientRequester;
  onLog?: LogListener;
}

/**
 * A session's hot-path request: its `signal` made from its CallCancel when first read
 * (downstream/cancel.ts). A class, because V8 builds an object literal with a getter through a
 * runtime call (about 0.4 µs, and an object every later read finds slower).
 */
class SessionRequestContext implements RequestContext {
  readonly revision = '2025-11-25' as const;
  readonly requestId: string;
  readonly traceparent: string | undefined;
  readonly sessionId: string;
  readonly cancel: CallCancel;
  readonly onProgress: ProgressListener | undefined;
  readonly onClientRequest: ClientRequester | undefined;
  readonly onLog: LogListener | undefined;
  readonly execution = 'none' as const;
  readonly resourceNotFound = JSONRPC_CODES.RESOURCE_NOT_FOUND;

  constructor(
    call: SessionCall,
    readonly principal: Principal | undefined,
    readonly pageSize: number,
  ) {
    this.requestId = callerRequestId(call.req, call.res);
    this.traceparent = header(call.req, 'traceparent');
    this.sessionId = call.sessionId;
    this.cancel = call.cancel;
    this.onProgress = call.onProgress;
    this.onClientRequest = call.onClientRequest;
    this.onLog = call.onLog;
  }

  get signal(): AbortSignal {
    return this.cancel.signal;
  }
}

export function contextOfSession(call: SessionCall, principal: Principal | undefined, pageSize: number): RequestContext {
  return new SessionRequestContext(call, principal, pageSize);
}

/** A failure as the revision writes it: a JSON-RPC error with HTTP 200 (errors.ts); an internal one is logged with its cause. */
export function encodeFailure(id: RpcId, err: unknown, method: string, logger: Logger): Record<string, unknown> {
  const failure = rpcFailure(err, '2025-11-25');
  if (failure.internal) logger.error(`${method} failed`, { err });
  return failurePayload(id, failure);
}
