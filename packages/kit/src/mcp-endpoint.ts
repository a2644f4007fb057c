import express, { type Express } from 'express';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { KitHandle } from './app';
import type { Logger } from './logger';
import { toolErrorResult } from './envelope';
import { toAppError } from './errors';
import { toolToJson, type ToolDefinition } from './tool';

export interface McpEndpointOptions {
  name: string;
  version?: string;
  tools: readonly ToolDefinition[];
  bodyLimit: string;
  path?: string;
}

/**
 * POST /mcp: the official SDK server, stateless Streamable HTTP with JSON answers (initialize, ping,
 * tools/list, tools/call), serving the same tool definitions as /tools/* (one definition, two
 * surfaces). Tool errors come back as isError results carrying the fleet's code; GET/DELETE answer 405.
 * A browser page from another origin never reaches it: the app's Host and Origin rule (hostOriginRule,
 * ALLOWED_ORIGINS) refuses it with 403 on every route.
 */
export function mountMcpEndpoint(app: Express, kit: Pick<KitHandle, 'callTool' | 'sendError'>, options: McpEndpointOptions): void {
  const route = options.path ?? '/mcp';
  app.post(route, express.json({ limit: options.bodyLimit }), async (req, res) => {
    const server = new Server({ name: options.name, version: options.version ?? '0.1.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: options.tools.map((t) => toolToJson(t)) }));
    server.setRequestHandler(CallToolRequestSchema, async (r) => {
      try {
        const result = await kit.callTool(r.params.name, r.params.arguments ?? {}, {
          authorization: req.get('authorization'),
          requestId: res.locals.requestId as string | undefined,
          // the request's logger (trace_id, span_id) for the call's access line
          logger: res.locals.logger as Logger | undefined,
        });
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
      } catch (err) {
        return toolErrorResult(options.name, toAppError(err));
      }
    });
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
