/**
 * What one MCP request carries, built once per request by its revision's codec
 * (rev-2025-11-25/codec.ts: a session, a sessionless request or the SDK server's handler;
 * rev-2026-07-28/codec.ts: the request's own `_meta` and headers) and read by every method of the
 * table (methods.ts). The gateway's process-wide parts are in GatewayContext (core/context.ts).
 */
import type { IncomingMessage } from 'node:http';
import { header, requestIdFrom, type HttpResponse } from '@mcp-fleet/kit';
import type { Principal } from '../auth/auth';
import type { CallCancel } from '../downstream/cancel';
import type { ClientRequester, LogListener, ProgressListener } from '../downstream/http-client';

/** The two revisions the endpoint speaks: the session-based one (and the older versions it reads the same way), and the stateless one. */
export type Revision = '2025-11-25' | '2026-07-28';

/**
 * Which `execution` tools/list shows: none (sessionless 2025-era requests, sessions without tasks),
 * as declared (2026-07-28, tasks extension), or the session's (2025-11-25 tasks).
 */
export type ExecutionView = 'none' | 'declared' | 'session';

export interface RequestContext {
  revision: Revision;
  /** Who calls (authorization on), else undefined. */
  principal?: Principal;
  /** The caller's X-Request-Id when it is a sane one, else the id the gateway gave the request. */
  requestId: string;
  traceparent?: string;
  /** The Mcp-Session-Id of a 2025-era session (undefined for sessionless and 2026-07-28 requests). */
  sessionId?: string;
  /** The client capabilities the caller declared (2026-07-28: per request in `_meta`). */
  clientCapabilities?: unknown;
  /** Aborted when the caller cancels or goes away. */
  signal: AbortSignal;
  /**
   * The same cancellation without an AbortSignal, where the transport made one (a 2025 session's hot
   * path): `signal` is then made from it when first read (downstream/cancel.ts).
   */
  cancel?: CallCancel;
  /** Where what the request streams goes (progress, log messages of an MCP server, its requests to the client). */
  onProgress?: ProgressListener;
  onLog?: LogListener;
  onClientRequest?: ClientRequester;
  /** This call's time limit, when it is not DOWNSTREAM_TIMEOUT_MS (a task's). */
  timeoutMs?: number;
  /** tools/list's `execution` view and page size, resources/read's not-found code: what the revision says. */
  execution: ExecutionView;
  pageSize: number;
  resourceNotFound: number;
}

/**
 * The request's id (the kit's request context set it: the caller's X-Request-Id when it is a sane
 * one, else a new one), or, for a request answered before that context ran, the same rule here.
 */
export function callerRequestId(req: IncomingMessage, res: { locals?: Pick<HttpResponse, 'locals'>['locals'] }): string {
  const id: unknown = res.locals?.requestId;
  return typeof id === 'string' ? id : requestIdFrom(header(req, 'x-request-id'));
}
