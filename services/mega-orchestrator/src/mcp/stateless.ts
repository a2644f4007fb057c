import { principalOf } from '../auth';
/**
 * MCP 2026-07-28, the stateless revision, beside the session-based 2025-11-25 transport on the same
 * POST /mcp. A request is taken as 2026-era when it says so in the MCP-Protocol-Version header or
 * in its `_meta`. No initialize, no session: every request carries its protocol version and client
 * capabilities in `_meta`, the Mcp-Method (and Mcp-Name) headers must agree with the body, every
 * result says its `resultType`, and list/read results carry cache hints (`ttlMs`, `cacheScope`).
 * `subscriptions/listen` answers a long-lived SSE stream of tools/prompts list changes (subscriptions.ts).
 * The operations themselves (catalog pages, tools/call through the dispatcher, the gateway's
 * resources) are the ones the 2025-era SDK server uses.
 */
import type { IncomingMessage } from 'node:http';
import { abortOnClose, header as headerOf, JSONRPC_CODES, isPlainObject, sendJson, type HttpResponse } from '@mcp-fleet/kit';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { GatewayContext } from '../context';
import { RESOURCES } from '../views';
import { HttpRpcError, rpcError, type RpcId } from './jsonrpc';
import { parseFilter } from './subscriptions';
import { CAPABILITIES, callTool, complete, getPrompt, INSTRUCTIONS, listPrompts, listToolsPage, readResource } from './server';

export const STATELESS_VERSION = '2026-07-28';
/** Versions served on this endpoint: the stateless one, and the session-based ones through the SDK. */
export const SUPPORTED_VERSIONS = [STATELESS_VERSION, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const REMOVED = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);
const NAMED: Record<string, (params: Record<string, unknown>) => unknown> = {
  'tools/call': (p) => p.name,
  'prompts/get': (p) => p.name,
  'resources/read': (p) => p.uri,
};
/** The catalog changes when services come and go: clients may reuse a list for a few seconds. */
const CATALOG_TTL_MS = 5_000;

const header = (req: IncomingMessage, name: string): string | undefined => headerOf(req, name)?.trim();

/**
 * True when this POST is for the stateless revision: no session, and the 2026-07-28 header or a
 * protocol version in `_meta`. A 2025-era client inside its session keeps the SDK path even when it
 * sends a newer version header.
 */
export function isStatelessRequest(req: IncomingMessage, body: unknown): boolean {
  if (req.headers['mcp-session-id'] !== undefined) return false;
  if (header(req, 'mcp-protocol-version') === STATELESS_VERSION) return true;
  if (!isPlainObject(body) || !isPlainObject(body.params) || !isPlainObject(body.params._meta)) return false;
  const v = body.params._meta[META_VERSION];
  // A request that names its version in _meta is stateless-era.
  return typeof v === 'string' && body.method !== 'initialize';
}

export async function handleStateless(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: HttpResponse,
  body: unknown,
  pageSize: number,
): Promise<void> {
  const id: RpcId = isPlainObject(body) && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : null;
  const send = (status: number, payload: Record<string, unknown>) => {
    res.setHeader('MCP-Protocol-Version', STATELESS_VERSION);
    sendJson(res, status, payload);
  };
  try {
    if (!isPlainObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string' || body.method === '')
      throw new HttpRpcError(
        400,
        JSONRPC_CODES.INVALID_REQUEST,
        'Invalid Request: one JSON-RPC 2.0 message with a "method" (no batches in 2026-07-28).',
      );
    const method = body.method;
    const params = body.params === undefined ? {} : body.params;
    if (!isPlainObject(params)) throw new HttpRpcError(400, JSONRPC_CODES.INVALID_REQUEST, 'Invalid Request: "params" must be an object.');

    // Notifications (no id) are accepted and need no answer. The revision defines no header rules for
    // them (the v2 client's notifications/cancelled after closing a listen stream carries no Mcp-Method).
    if (!('id' in body)) {
      res.statusCode = 202;
      return void res.end();
    }

    const headerMethod = header(req, 'mcp-method');
    if (headerMethod === undefined || headerMethod !== method)
      throw new HttpRpcError(
        400,
        JSONRPC_CODES.HEADER_MISMATCH,
        `The Mcp-Method header (${headerMethod === undefined ? 'missing' : JSON.stringify(headerMethod.slice(0, 100))}) must equal the body's method "${method.slice(0, 100)}".`,
      );
    const named = NAMED[method];
    if (named) {
      const expected = named(params);
      const headerName = header(req, 'mcp-name');
      if (typeof expected === 'string' && headerName !== expected)
        throw new HttpRpcError(
          400,
          JSONRPC_CODES.HEADER_MISMATCH,
          `The Mcp-Name header (${headerName === undefined ? 'missing' : JSON.stringify(headerName.slice(0, 200))}) must equal ${method === 'resources/read' ? 'params.uri' : 'params.name'}.`,
        );
    }

    const meta = isPlainObject(params._meta) ? params._meta : undefined;
    const missing = [META_VERSION, META_CAPABILITIES].filter((k) =>
      k === META_CAPABILITIES ? !isPlainObject(meta?.[k]) : typeof meta?.[k] !== 'string',
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
    const version = meta![META_VERSION] as string;
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
        `Unsupported protocol version "${version.slice(0, 40)}" for a stateless request; supported: ${SUPPORTED_VERSIONS.join(', ')} (the 2025 ones through initialize and a session).`,
        { supported: SUPPORTED_VERSIONS, requested: version.slice(0, 40) },
      );

    if (REMOVED.has(method))
      throw new HttpRpcError(
        404,
        JSONRPC_CODES.METHOD_NOT_FOUND,
        `Method not found: ${method} was removed in 2026-07-28 (server/discover replaces initialize).`,
      );

    if (method === 'subscriptions/listen') {
      // The id names the subscription on every message of its stream.
      if (id === null)
        throw new HttpRpcError(
          400,
          JSONRPC_CODES.INVALID_REQUEST,
          'Invalid Request: subscriptions/listen needs an "id" (a string or a number).',
        );
      return ctx.listen.serve(req, res, id, parseFilter(params), { 'MCP-Protocol-Version': STATELESS_VERSION });
    }

    const result = await dispatch(ctx, req, res, method, params, pageSize);
    send(200, { jsonrpc: '2.0', id, result });
  } catch (err) {
    if (err instanceof HttpRpcError) return send(err.status, rpcError(id, err.code, err.message, err.data));
    if (err instanceof McpError) {
      const status = err.code === JSONRPC_CODES.METHOD_NOT_FOUND ? 404 : 200;
      return send(status, rpcError(id, err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data));
    }
    ctx.logger.error('stateless MCP request failed', { err });
    return send(500, rpcError(id, JSONRPC_CODES.INTERNAL_ERROR, 'Internal error; the gateway log has the cause.'));
  }
}

async function dispatch(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: HttpResponse,
  method: string,
  params: Record<string, unknown>,
  pageSize: number,
) {
  const cache = (ttlMs: number) => ({ ttlMs, cacheScope: 'public' as const });
  switch (method) {
    case 'server/discover':
      return {
        resultType: 'complete',
        supportedVersions: SUPPORTED_VERSIONS,
        // What this endpoint really serves to 2026-era clients: list changes and resource updates
        // arrive on a subscriptions/listen stream.
        capabilities: { ...CAPABILITIES },
        instructions: INSTRUCTIONS,
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: ctx.service, title: 'mcp-fleet gateway', version: ctx.version } },
        ...cache(60_000),
      };
    case 'tools/list':
      return {
        resultType: 'complete',
        ...listToolsPage(ctx, pageSize, params.cursor, principalOf(res)),
        ...cache(principalOf(res) ? 0 : CATALOG_TTL_MS),
      };
    case 'tools/call': {
      const requestId = headerOf(req, 'x-request-id');
      const result = await callTool(ctx, params, {
        requestId: requestId && /^[\w.:-]{1,128}$/.test(requestId) ? requestId : String(res.locals.requestId ?? ''),
        traceparent: headerOf(req, 'traceparent'),
        principal: principalOf(res),
        // a 2026-era client cancels by closing its request: the downstream call is aborted
        signal: abortOnClose(res),
      });
      return { resultType: 'complete', ...result };
    }
    case 'resources/list':
      return { resultType: 'complete', resources: RESOURCES.map((r) => ({ ...r })), ...cache(60_000) };
    case 'resources/templates/list':
      return { resultType: 'complete', resourceTemplates: [], ...cache(60_000) };
    case 'resources/read':
      // Live views (health, services): not to be reused.
      return { resultType: 'complete', ...readResource(ctx, params.uri, JSONRPC_CODES.INVALID_PARAMS), ttlMs: 0, cacheScope: 'private' };
    case 'prompts/list':
      // The prompts of the downstreams (MCP servers, marketplace skills).
      return { resultType: 'complete', ...listPrompts(ctx, principalOf(res)), ...cache(principalOf(res) ? 0 : CATALOG_TTL_MS) };
    case 'prompts/get':
      return { resultType: 'complete', ...(await getPrompt(ctx, params, undefined, principalOf(res))) };
    case 'completion/complete':
      return { resultType: 'complete', ...(await complete(ctx, params, abortOnClose(res), principalOf(res))) };
    default:
      throw new McpError(
        JSONRPC_CODES.METHOD_NOT_FOUND,
        `Method not found: ${method.slice(0, 100)}. server/discover lists what this server offers.`,
      );
  }
}
