/**
 * POST /mcp in protocol revision 2026-07-28, the stateless one, beside the kit's 2025-era endpoint
 * on the same route: a request is 2026-era when its MCP-Protocol-Version header or its
 * `_meta["io.modelcontextprotocol/protocolVersion"]` says so (and it carries no session). No
 * initialize: server/discover answers the capabilities; the revision's request rules are the
 * kit's (readStatelessRequest, as the gateway checks them); every result says its `resultType`,
 * and lists, entries and reads carry cache hints. The methods are the
 * ones the 2025-era endpoint serves (tools, and the service's own table), answered here without
 * the SDK, whose 2025 server does not know the revision.
 */
import type { Express, NextFunction, Request, Response } from 'express';
import express from 'express';
import {
  abortOnClose,
  HttpRpcError,
  isPlainObject,
  isStatelessRequest,
  JSONRPC_CODES,
  readStatelessRequest,
  STATELESS_VERSION,
  toolToJson,
  type KitHandle,
  type ToolDefinition,
} from '@mcp-fleet/kit';
import { mcpToolCall, toMcpError, type McpMethodHandler } from '@mcp-fleet/kit/mcp';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

const SUPPORTED = [STATELESS_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];
/** Results that carry ttlMs and cacheScope (CacheableResult). */
const CACHEABLE = new Set([
  'server/discover',
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/directory/read',
  'skills/list',
  'skills/get',
]);
/** How long a client may reuse a list, entry or read: a publish or a changed file shows within this. */
const TTL_MS = 5_000;

export interface ModernMcpOptions {
  name: string;
  version?: string;
  tools: readonly ToolDefinition[];
  bodyLimit: string;
  /** The service's methods beyond tools (the same table the 2025-era endpoint serves). */
  methods: Readonly<Record<string, McpMethodHandler>>;
  capabilities: Record<string, unknown>;
  /** "private" when answers depend on who asks (bearer tokens), else "public". */
  cacheScope: 'public' | 'private';
}

/**
 * Mounts the 2026-07-28 side of POST /mcp; other requests go on to the next handler of the route
 * (mount the kit's mountMcpEndpoint after it).
 */
export function mountModernMcp(app: Express, kit: Pick<KitHandle, 'callTool'>, options: ModernMcpOptions): void {
  const cache = { ttlMs: TTL_MS, cacheScope: options.cacheScope };
  const toolNames = new Set(options.tools.map((t) => t.name));
  const dispatch = async (req: Request, res: Response, method: string, params: Record<string, unknown>) => {
    switch (method) {
      case 'server/discover':
        return {
          supportedVersions: SUPPORTED,
          capabilities: { ...options.capabilities, tools: {} },
          _meta: { 'io.modelcontextprotocol/serverInfo': { name: options.name, version: options.version ?? '0.1.0' } },
        };
      case 'tools/list':
        return { tools: options.tools.map((t) => toolToJson(t)) };
      case 'tools/call':
        if (typeof params.name !== 'string' || params.name === '')
          throw new HttpRpcError(200, JSONRPC_CODES.INVALID_PARAMS, 'tools/call needs params.name (a string).');
        if (params.arguments !== undefined && !isPlainObject(params.arguments))
          throw new HttpRpcError(200, JSONRPC_CODES.INVALID_PARAMS, 'params.arguments must be an object.');
        // an unknown tool is a protocol error in this revision, not a tool's failed result
        if (!toolNames.has(params.name))
          throw new HttpRpcError(
            200,
            JSONRPC_CODES.INVALID_PARAMS,
            `Unknown tool "${params.name.slice(0, 100)}"; tools/list shows the tools.`,
          );
        return mcpToolCall(kit, options.name, { name: params.name, arguments: params.arguments }, req, res);
      default: {
        const handle = Object.hasOwn(options.methods, method) ? options.methods[method] : undefined;
        if (!handle)
          throw new HttpRpcError(
            404,
            JSONRPC_CODES.METHOD_NOT_FOUND,
            `Method not found: ${method.slice(0, 100)}. server/discover lists what this server offers.`,
          );
        return (await handle(params, { req, res, signal: abortOnClose(res) })) as Record<string, unknown>;
      }
    }
  };

  const answer = async (req: Request, res: Response) => {
    const body: unknown = req.body;
    const id = isPlainObject(body) && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : null;
    const send = (status: number, payload: Record<string, unknown>) =>
      res
        .status(status)
        .set('MCP-Protocol-Version', STATELESS_VERSION)
        .json({ jsonrpc: '2.0', id, ...payload });
    try {
      const checked = readStatelessRequest(req, body, SUPPORTED);
      // a notification needs no answer
      if (!checked) return void res.status(202).end();
      const { method, params } = checked;
      const result = await dispatch(req, res, method, params);
      send(200, { result: { resultType: 'complete', ...result, ...(CACHEABLE.has(method) ? cache : {}) } });
    } catch (err) {
      if (err instanceof HttpRpcError)
        return send(err.status, { error: { code: err.code, message: err.message, ...(err.data ? { data: err.data } : {}) } });
      const e = toMcpError(err);
      if (e.code === JSONRPC_CODES.INTERNAL_ERROR)
        (res.locals.logger as KitHandle['logger'] | undefined)?.error('MCP request failed', { err });
      send(200, {
        error: { code: e.code, message: e.message.replace(/^MCP error -?\d+: /, ''), ...(e.data !== undefined ? { data: e.data } : {}) },
      });
    }
  };

  app.post('/mcp', express.json({ limit: options.bodyLimit }), (req: Request, res: Response, next: NextFunction) => {
    if (!isStatelessRequest(req, req.body)) return next();
    answer(req, res).catch(next);
  });
}
