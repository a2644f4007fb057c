/**
 * The one place where a failure on the MCP endpoint becomes an HTTP status and a JSON-RPC error, for
 * both revisions. Fleet errors (AppError) take the kit's table (ERROR_CODES: status and JSON-RPC
 * code); an McpError keeps its code (HTTP 200, or 404 for an unknown method over 2026-07-28, whose
 * transport answers errors with statuses; an internal one's message is hidden from 2025-era
 * sessions, as the SDK server hides it, unless an MCP server behind the gateway answered it:
 * ServerRpcError); an HttpRpcError names its own status; anything else is
 * an internal error whose cause goes to the log only.
 */
import type { ServerResponse } from 'node:http';
import { AppError, ERROR_CODES, HttpRpcError, JSONRPC_CODES, sendJson } from '@mcp-fleet/kit';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { rpcError, withoutMcpErrorPrefix, type RpcId } from './jsonrpc';
import type { Revision } from './request-context';

export interface RpcFailure {
  status: number;
  code: number;
  message: string;
  data?: unknown;
  /** An internal error: its cause belongs in the log, and only a generic message to the caller. */
  internal: boolean;
}

const INTERNAL = 'Internal error; the gateway log has the cause.';

/**
 * A JSON-RPC error an MCP server behind the gateway answered, passed on to its caller as it was:
 * its message is the server's (never hidden as the gateway's own internal error's is).
 */
export class ServerRpcError extends McpError {}

/**
 * What a thrown error answers. `revision` says whether the transport carries errors in HTTP statuses
 * (2026-07-28) or answers every JSON-RPC error of a request with 200 (2025-era Streamable HTTP).
 */
export function rpcFailure(err: unknown, revision: Revision): RpcFailure {
  const statuses = revision === '2026-07-28';
  if (err instanceof HttpRpcError) return { status: err.status, code: err.code, message: err.message, data: err.data, internal: false };
  if (err instanceof AppError && err.code !== 'INTERNAL') {
    const entry = ERROR_CODES[err.code];
    return {
      status: statuses ? entry.status : 200,
      code: entry.rpc,
      message: err.message,
      ...(err.details !== undefined ? { data: err.details } : {}),
      internal: false,
    };
  }
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'number') {
    const e = err as { message?: unknown; data?: unknown };
    // A 2025-era session's answer hides an internal error's message (the SDK server's rule); the
    // 2026-07-28 switch says what failed (a resource that could not be read, a task store down).
    if (code === JSONRPC_CODES.INTERNAL_ERROR && !statuses && !(err instanceof ServerRpcError))
      return { status: 200, code, message: 'Internal error', internal: true };
    return {
      status: statuses && code === JSONRPC_CODES.METHOD_NOT_FOUND ? 404 : 200,
      code,
      message: withoutMcpErrorPrefix(String(e.message ?? '')),
      ...(e.data !== undefined ? { data: e.data } : {}),
      internal: false,
    };
  }
  return {
    status: statuses ? 500 : 200,
    code: JSONRPC_CODES.INTERNAL_ERROR,
    message: statuses ? INTERNAL : 'Internal error',
    internal: true,
  };
}

/** The JSON-RPC error payload of a failure. */
export const failurePayload = (id: RpcId, f: RpcFailure) => rpcError(id, f.code, f.message, f.data);

/**
 * The HTTP status of a JSON-RPC error the transport answers before any method runs (a body that is
 * not JSON-RPC, a session that is gone, the limit reached): the protocol's own codes here, the
 * fleet's from the kit's table (ERROR_CODES, the first code that carries it), 500 for the rest.
 */
const PROTOCOL_STATUS: Record<number, number> = {
  [JSONRPC_CODES.PARSE_ERROR]: 400,
  [JSONRPC_CODES.INVALID_REQUEST]: 400,
  [JSONRPC_CODES.METHOD_NOT_FOUND]: 404,
  [JSONRPC_CODES.SESSION_REQUIRED]: 400,
  [JSONRPC_CODES.SESSION_NOT_FOUND]: 404,
  [JSONRPC_CODES.CONNECTION_CLOSED]: 503,
  [JSONRPC_CODES.HEADER_MISMATCH]: 400,
  [JSONRPC_CODES.MISSING_REQUIRED_CLIENT_CAPABILITY]: 400,
  [JSONRPC_CODES.UNSUPPORTED_PROTOCOL_VERSION]: 400,
};
for (const { status, rpc } of Object.values(ERROR_CODES)) PROTOCOL_STATUS[rpc] ??= status;

export const statusOfRpcCode = (code: number): number => PROTOCOL_STATUS[code] ?? 500;

/** A JSON-RPC error from the transport, with the status its code takes (statusOfRpcCode). Nothing more once an answer started. */
export function sendRpcError(res: ServerResponse, id: RpcId, code: number, message: string, data?: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  sendJson(res, statusOfRpcCode(code), rpcError(id, code, message, data));
}

/** A JSON-RPC error thrown with the status its code takes (statusOfRpcCode), for the 2026-07-28 transport's answer. */
export const rpcErrorWithStatus = (code: number, message: string, data?: unknown) =>
  new HttpRpcError(statusOfRpcCode(code), code, message, data);
