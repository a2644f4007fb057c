/**
 * The request rules of MCP 2026-07-28, the stateless revision, in one place for every endpoint
 * that serves it (the gateway's POST /mcp, a service's own): one JSON-RPC message, the Mcp-Method
 * and Mcp-Name headers agreeing with the body (SEP-2243), the protocol version and client
 * capabilities in every request's `_meta`, and the methods the revision removed.
 */
import type { IncomingMessage } from 'node:http';
import { JSONRPC_CODES } from './errors';
import { header as headerOf, isPlainObject } from './http';

export const STATELESS_VERSION = '2026-07-28';
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
/** Where a 2026-07-28 server names itself in any result's `_meta` (server/discover's, and others' if it likes). */
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
/** The tasks extension's id (SEP-2663), as clients and servers declare it under `extensions`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** A JSON-RPC error answered with its own HTTP status (the 2026-07-28 transport's rules). */
export class HttpRpcError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** The body field the Mcp-Name header mirrors, by method (SEP-2243; tasks/* from the tasks extension). */
const MCP_NAME_FIELD: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};
/** Methods the revision removed (server/discover replaces initialize). */
const REMOVED = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);

const header = (req: IncomingMessage, name: string): string | undefined => headerOf(req, name)?.trim();

/**
 * True when a POST /mcp is for the stateless revision: no session, and the 2026-07-28 header or a
 * protocol version in `_meta`. A 2025-era client inside its session keeps its path even when it
 * sends a newer version header.
 */
export function isStatelessRequest(req: IncomingMessage, body: unknown): boolean {
  if (req.headers['mcp-session-id'] !== undefined) return false;
  if (header(req, 'mcp-protocol-version') === STATELESS_VERSION) return true;
  if (!isPlainObject(body) || !isPlainObject(body.params) || !isPlainObject(body.params._meta)) return false;
  // a request that names its version in _meta is stateless-era
  return typeof body.params._meta[META_PROTOCOL_VERSION] === 'string' && body.method !== 'initialize';
}

/** A 2026-07-28 request as checked: its method, params and `_meta`. */
export interface StatelessRequest {
  method: string;
  params: Record<string, unknown>;
  meta: Record<string, unknown>;
}

/**
 * Checks one 2026-07-28 request against the revision's rules, in the order the revision names them,
 * throwing the HttpRpcError the first broken rule calls for. Undefined for a notification (no id),
 * which needs no answer (202) and has no header rules.
 */
export function readStatelessRequest(req: IncomingMessage, body: unknown, supported: readonly string[]): StatelessRequest | undefined {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string' || body.method === '')
    throw new HttpRpcError(
      400,
      JSONRPC_CODES.INVALID_REQUEST,
      'Invalid Request: one JSON-RPC 2.0 message with a "method" (no batches in 2026-07-28).',
    );
  const method = body.method;
  const params = body.params === undefined ? {} : body.params;
  if (!isPlainObject(params)) throw new HttpRpcError(400, JSONRPC_CODES.INVALID_REQUEST, 'Invalid Request: "params" must be an object.');
  // the v2 client's notifications/cancelled after closing a listen stream carries no Mcp-Method
  if (!('id' in body)) return undefined;

  const headerMethod = header(req, 'mcp-method');
  if (headerMethod === undefined || headerMethod !== method)
    throw new HttpRpcError(
      400,
      JSONRPC_CODES.HEADER_MISMATCH,
      `The Mcp-Method header (${headerMethod === undefined ? 'missing' : JSON.stringify(headerMethod.slice(0, 100))}) must equal the body's method "${method.slice(0, 100)}".`,
    );
  const field = Object.hasOwn(MCP_NAME_FIELD, method) ? MCP_NAME_FIELD[method] : undefined;
  const expected = field ? params[field] : undefined;
  const headerName = header(req, 'mcp-name');
  if (typeof expected === 'string' && headerName !== expected)
    throw new HttpRpcError(
      400,
      JSONRPC_CODES.HEADER_MISMATCH,
      `The Mcp-Name header (${headerName === undefined ? 'missing' : JSON.stringify(headerName.slice(0, 200))}) must equal params.${field}.`,
    );

  const meta = isPlainObject(params._meta) ? params._meta : undefined;
  const missing = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES].filter((k) =>
    k === META_CLIENT_CAPABILITIES ? !isPlainObject(meta?.[k]) : typeof meta?.[k] !== 'string',
  );
  if (missing.length)
    throw new HttpRpcError(
      400,
      JSONRPC_CODES.INVALID_PARAMS,
      `params._meta must carry ${missing.join(' and ')} on every 2026-07-28 request.`,
      {
        missing,
      },
    );
  // A header that disagrees with _meta is a mismatch whatever the two versions are; only then is
  // the version itself judged.
  const version = meta![META_PROTOCOL_VERSION] as string;
  const headerVersion = header(req, 'mcp-protocol-version');
  if (headerVersion !== undefined && headerVersion !== version)
    throw new HttpRpcError(
      400,
      JSONRPC_CODES.HEADER_MISMATCH,
      `The MCP-Protocol-Version header "${headerVersion.slice(0, 40)}" differs from _meta's "${version.slice(0, 40)}".`,
    );
  if (version !== STATELESS_VERSION)
    throw new HttpRpcError(
      400,
      JSONRPC_CODES.UNSUPPORTED_PROTOCOL_VERSION,
      `Unsupported protocol version "${version.slice(0, 40)}" for a stateless request; supported: ${supported.join(', ')} (the 2025 ones through initialize and a session).`,
      { supported, requested: version.slice(0, 40) },
    );
  if (REMOVED.has(method))
    throw new HttpRpcError(
      404,
      JSONRPC_CODES.METHOD_NOT_FOUND,
      `Method not found: ${method} was removed in 2026-07-28 (server/discover replaces initialize).`,
    );
  return { method, params, meta: meta! };
}
