import { randomUUID } from 'node:crypto';
import { AppError, invokeTool, toolErrorResult, toolToJson, type Logger, secretFilesFrom } from '@mcp-fleet/kit';
import { badParamsAsInvalidParams } from '@mcp-fleet/kit/mcp-params';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SERVICE_ID, type Config } from './config';
import { createTools } from './tools';

export interface ToolkitDeps {
  config: Config;
  logger: Logger;
}

/** The MCP server (official SDK) with the ten tools; the caller connects it to a transport. */
export async function createApp({ config, logger }: ToolkitDeps): Promise<McpServer> {
  const ws = await Workspace.open(config.WORKSPACE_ROOTS, secretFilesFrom(config, logger));
  const tools = new Map(createTools({ config, ws, logger }).map((t) => [t.name, t]));
  const server = new McpServer({ name: SERVICE_ID, version: '0.1.0' }, { capabilities: { tools: {} } });
  server.server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...tools.values()].map((t) => {
      const j = toolToJson(t);
      return {
        name: j.name,
        ...(j.title ? { title: j.title } : {}),
        description: j.description,
        inputSchema: j.inputSchema as { type: 'object' },
        annotations: j.annotations,
      };
    }),
  }));
  server.server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const started = performance.now();
    const tool = tools.get(req.params.name);
    try {
      if (!tool) throw new AppError('UNKNOWN_TOOL', `No tool "${req.params.name}"; tools/list names the ten tools.`);
      const result = await invokeTool(tool, req.params.arguments ?? {}, {
        service: SERVICE_ID,
        requestId: randomUUID(),
        logger,
        defaultTimeoutMs: config.TOOL_TIMEOUT_MS,
        signal: extra.signal,
      });
      logger.info('tool call', { tool: req.params.name, ms: Math.round(performance.now() - started) });
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
    } catch (err) {
      const e = err instanceof AppError ? err : new AppError('INTERNAL', 'The tool failed unexpectedly; see the server log.');
      if (!(err instanceof AppError)) logger.error('tool failed', { tool: req.params.name, err });
      return toolErrorResult(SERVICE_ID, e);
    }
  });
  // a caller's bad params (tools/call without a name, ...) are -32602 naming the field, not -32603 with zod's dump
  badParamsAsInvalidParams(server.server);
  return server;
}
