/**
 * The 2026-07-28 revision's codec: how a request is read (one message, its Mcp-* headers, its
 * protocol version and client capabilities in `_meta`: no session) into a RequestContext, and how
 * its answer is written (every result says its `resultType`, list and read results carry cache
 * hints, errors carry HTTP statuses, progress and log messages go on the request's own event
 * stream). The methods themselves are the table's (../methods.ts).
 */
import type { IncomingMessage } from 'node:http';
import {
  abortOnClose,
  header,
  isPlainObject,
  JSONRPC_CODES,
  META_CLIENT_CAPABILITIES,
  readStatelessRequest,
  STATELESS_VERSION,
  type HttpResponse,
  type Logger,
} from '@mcp-fleet/kit';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { carryResultText } from '../../downstream/tool-result';
import { principalOf } from '../../auth/auth';
import type { CallListeners } from '../client-requests';
import { failurePayload, rpcFailure } from '../errors';
import { LOG_LEVELS, logPasses, progressNotification, type LazyEventStream, type LogLevel } from '../event-stream';
import { type RpcId } from '../jsonrpc';
import { callerRequestId, type RequestContext } from '../request-context';

export { STATELESS_VERSION };
/** Versions served on this endpoint: the stateless one, and the session-based ones through the SDK. */
export const SUPPORTED_VERSIONS = [STATELESS_VERSION, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
/** The catalog changes when services come and go: clients may reuse a list for a few seconds. */
const CATALOG_TTL_MS = 5_000;

export interface DecodedRequest {
  id: RpcId;
  method: string;
  params: Record<string, unknown>;
  meta: Record<string, unknown>;
  rc: RequestContext;
}

/** The request's JSON-RPC id as it was sent (a string or a number), for its answer. */
export const idOfBody = (body: unknown): RpcId =>
  isPlainObject(body) && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : null;

/**
 * One request read by the revision's rules (kit readStatelessRequest: one message, the Mcp-* headers,
 * `_meta`, the version, removed methods), with its RequestContext. Undefined for a notification.
 */
export function decodeRequest(req: IncomingMessage, res: HttpResponse, body: unknown, pageSize: number): DecodedRequest | undefined {
  const checked = readStatelessRequest(req, body, SUPPORTED_VERSIONS);
  if (!checked) return undefined;
  const meta = checked.meta!;
  return {
    id: idOfBody(body),
    method: checked.method,
    params: checked.params,
    meta,
    rc: {
      revision: '2026-07-28',
      principal: principalOf(res),
      requestId: callerRequestId(req, res),
      traceparent: header(req, 'traceparent'),
      clientCapabilities: meta[META_CLIENT_CAPABILITIES],
      // a 2026-era client cancels by closing its request: the downstream call is aborted
      signal: abortOnClose(res),
      execution: 'declared',
      pageSize,
      // SEP-2164: an unknown URI is invalid params, the URI in data
      resourceNotFound: JSONRPC_CODES.INVALID_PARAMS,
    },
  };
}

/** The cache hints of a complete result, by method: lists may be reused for a while (not a caller's own view), reads and the rest not. */
function cacheHints(method: string, rc: RequestContext): { ttlMs: number; cacheScope: 'public' | 'private' } | undefined {
  switch (method) {
    case 'server/discover':
      return { ttlMs: 60_000, cacheScope: 'public' };
    case 'tools/list':
    case 'prompts/list':
    case 'resources/list':
    case 'resources/templates/list':
    case 'skills/list':
    case 'skills/get':
    case 'resources/directory/read':
      return { ttlMs: rc.principal ? 0 : CATALOG_TTL_MS, cacheScope: 'public' };
    case 'resources/read':
      // live views (health, services): not to be reused
      return { ttlMs: 0, cacheScope: 'private' };
    default:
      return undefined;
  }
}

/** A result as the revision writes it: its resultType ("complete" unless it says input_required or task), and cache hints when complete. */
export function encodeResult(method: string, result: Record<string, unknown>, rc: RequestContext): Record<string, unknown> {
  const hints = result.resultType === undefined || result.resultType === 'complete' ? cacheHints(method, rc) : undefined;
  // a tools/call result's text is stitched, not serialized again (answer-text.ts): resultType first
  return carryResultText(result as CallToolResult, { resultType: 'complete', ...result, ...hints });
}

/** A failure as the revision writes it: its HTTP status and JSON-RPC error (errors.ts); an internal one is logged. */
export function encodeFailure(id: RpcId, err: unknown, logger: Logger): { status: number; payload: Record<string, unknown> } {
  const failure = rpcFailure(err, '2026-07-28');
  if (failure.internal) logger.error('stateless MCP request failed', { err });
  return { status: failure.status, payload: failurePayload(id, failure) };
}

/**
 * What a 2026-07-28 tools/call streams while it runs: notifications/progress for its
 * `_meta.progressToken`, and the MCP server's log messages at or above its
 * `_meta["io.modelcontextprotocol/logLevel"]` (none without it: the revision removed logging/setLevel).
 */
export function callListeners(meta: Record<string, unknown>, stream: LazyEventStream): CallListeners {
  const token = meta.progressToken;
  const level = meta[META_LOG_LEVEL];
  if (level !== undefined && !LOG_LEVELS.includes(level as LogLevel))
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `_meta["${META_LOG_LEVEL}"] must be one of: ${LOG_LEVELS.join(', ')}.`);
  return {
    ...(typeof token === 'string' || typeof token === 'number'
      ? { onProgress: (progress, total, message) => stream.send(progressNotification(token, progress, total, message)) }
      : {}),
    ...(level !== undefined
      ? {
          onLog: (log) => {
            if (logPasses(log.level, level as LogLevel)) stream.send({ jsonrpc: '2.0', method: 'notifications/message', params: log });
          },
        }
      : {}),
  };
}
