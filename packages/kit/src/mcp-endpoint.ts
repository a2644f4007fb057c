import express, { type Express, type Request, type Response } from 'express';
import type * as SdkServer from '@modelcontextprotocol/sdk/server/index.js';
import type * as SdkStreamableHttp from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type * as SdkTypes from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, McpError, ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { KitHandle } from './app';
import type { Logger } from './logger';
import { toolErrorResult } from './envelope';
import { ERROR_CODES, toAppError } from './errors';
import { toolToJson, type ToolDefinition } from './tool';
import { badParamsAsInvalidParams } from './mcp-params';

/** One extra JSON-RPC method of a service's POST /mcp (an extension's, resources): its params and the HTTP exchange. */
export type McpMethodHandler = (
  params: Record<string, unknown>,
  context: { req: Request; res: Response; signal: AbortSignal },
) => unknown | Promise<unknown>;

export interface McpEndpointOptions {
  name: string;
  version?: string;
  tools: readonly ToolDefinition[];
  bodyLimit: string;
  path?: string;
  /** More methods than tools/list and tools/call (throw McpError for a JSON-RPC error), and the capabilities they declare. */
  methods?: Readonly<Record<string, McpMethodHandler>>;
  capabilities?: ServerCapabilities;
}

export { badParamsAsInvalidParams } from './mcp-params';

const looseParams = z.record(z.string(), z.unknown()).optional();

/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * The MCP SDK's server side, loaded at the first POST /mcp (or the first error mapped for it): a
 * service whose callers use /tools/* does not hold it (some 7 MB of heap).
 */
let sdkModules: (typeof SdkServer & typeof SdkStreamableHttp & typeof SdkTypes) | undefined;
const sdk = () =>
  (sdkModules ??= {
    ...(require('@modelcontextprotocol/sdk/server/index.js') as typeof SdkServer),
    ...(require('@modelcontextprotocol/sdk/server/streamableHttp.js') as typeof SdkStreamableHttp),
    ...(require('@modelcontextprotocol/sdk/types.js') as typeof SdkTypes),
  });
/* eslint-enable @typescript-eslint/no-require-imports */

/** tools/call as MCP answers it (both protocol eras): the tool's result, or its error as an isError result. */
export async function mcpToolCall(
  kit: Pick<KitHandle, 'callTool'>,
  service: string,
  call: { name: string; arguments?: unknown },
  req: Request,
  res: Response,
): Promise<CallToolResult> {
  try {
    const result = await kit.callTool(call.name, call.arguments ?? {}, {
      authorization: req.get('authorization'),
      requestId: res.locals.requestId as string | undefined,
      // the request's logger (trace_id, span_id) for the call's access line
      logger: res.locals.logger as Logger | undefined,
    });
    return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
  } catch (err) {
    return toolErrorResult(service, toAppError(err));
  }
}

/** A method's failure as the JSON-RPC error it answers: an McpError as thrown, a fleet error by its code (INTERNAL without its cause). */
export function toMcpError(err: unknown): McpError {
  const { McpError } = sdk();
  if (err instanceof McpError) return err;
  const e = toAppError(err);
  return new McpError(ERROR_CODES[e.code].rpc, e.code === 'INTERNAL' ? 'Internal error; the service log has the cause.' : e.message);
}

/**
 * POST /mcp: the official SDK server, stateless Streamable HTTP with JSON answers (initialize, ping,
 * tools/list, tools/call, and the service's own `methods`), serving the same tool definitions as
 * /tools/* (one definition, two surfaces). Tool errors come back as isError results carrying the
 * fleet's code; GET/DELETE answer 405.
 * A browser page from another origin never reaches it: the app's Host and Origin rule (hostOriginRule,
 * ALLOWED_ORIGINS) refuses it with 403 on every route.
 */
export function mountMcpEndpoint(app: Express, kit: Pick<KitHandle, 'callTool' | 'sendError'>, options: McpEndpointOptions): void {
  const route = options.path ?? '/mcp';
  app.post(route, express.json({ limit: options.bodyLimit }), async (req, res) => {
    const { Server, StreamableHTTPServerTransport, CallToolRequestSchema, ListToolsRequestSchema } = sdk();
    const server = new Server(
      { name: options.name, version: options.version ?? '0.1.0' },
      { capabilities: { ...options.capabilities, tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: options.tools.map((t) => toolToJson(t)) }));
    server.setRequestHandler(CallToolRequestSchema, (r) => mcpToolCall(kit, options.name, r.params, req, res));
    for (const [method, handle] of Object.entries(options.methods ?? {}))
      server.setRequestHandler(z.object({ method: z.literal(method), params: looseParams }), async (r, extra) => {
        try {
          return (await handle(r.params ?? {}, { req, res, signal: extra.signal })) as Record<string, unknown>;
        } catch (err) {
          const answer = toMcpError(err);
          // a fault of the service, not of the request: its cause goes to the log, not to the caller
          if (answer.code === ERROR_CODES.INTERNAL.rpc)
            (res.locals.logger as Logger | undefined)?.error('MCP method failed', { method, err });
          throw answer;
        }
      });
    badParamsAsInvalidParams(server);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      kit.sendError(res, err);
    }
  });
  for (const method of ['get', 'delete'] as const)
    app[method](route, (_req, res) => {
      res
        .status(405)
        .set('Allow', 'POST')
        .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: stateless server, use POST.' }, id: null });
    });
}
