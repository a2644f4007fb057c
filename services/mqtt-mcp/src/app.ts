import express from 'express';
import { createServiceApp, toolToJson, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { SERVICE_ID, type Config } from './config';
import { MqttHub } from './hub';
import { createTools } from './tools';

export interface MqttDeps {
  config: Config;
  logger: Logger;
}

export interface MqttApp extends ServiceApp {
  hub: MqttHub;
}

export function createApp({ config, logger }: MqttDeps): MqttApp {
  const hub = new MqttHub(config, logger);
  const tools = createTools({ hub, config });
  const kit = createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools,
    defaultMetrics: true,
    healthChecks: [
      {
        name: 'mqtt',
        required: false,
        check: async () => {
          if (!hub.connected)
            throw new Error(`not connected to ${hub.brokerUrl || 'the broker'}${hub.lastError ? `: ${hub.lastError}` : ''}`);
        },
      },
    ],
    // POST /mcp: the official SDK server, stateless Streamable HTTP with JSON answers, serving the
    // same tool definitions as /tools/* (one definition, two surfaces).
    extend: (app, handle) => {
      app.post('/mcp', express.json({ limit: config.BODY_LIMIT }), async (req, res) => {
        const server = new Server({ name: SERVICE_ID, version: '0.1.0' }, { capabilities: { tools: {} } });
        server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools.map((t) => toolToJson(t)) }));
        server.setRequestHandler(CallToolRequestSchema, async (r) => {
          try {
            const result = await handle.callTool(r.params.name, r.params.arguments ?? {});
            return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
          } catch (err) {
            const e = err as { code?: string; message?: string; details?: unknown };
            const error = { code: e.code ?? 'INTERNAL', message: e.message ?? 'failed', ...(e.details ? { details: e.details } : {}) };
            return { isError: true, content: [{ type: 'text', text: JSON.stringify(error) }] };
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
          handle.sendError(res, err);
        }
      });
      for (const method of ['get', 'delete'] as const)
        app[method]('/mcp', (_req, res) => {
          res
            .status(405)
            .set('Allow', 'POST')
            .json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: stateless server, use POST.' }, id: null });
        });
    },
    onClose: () => hub.close(),
  });
  return Object.assign(kit, { hub });
}
