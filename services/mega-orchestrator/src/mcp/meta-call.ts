/**
 * A meta-tool called over MCP (MCP_DISCOVERY=meta, src/discovery/): search_tools and describe_tool
 * answer a tool result; call_tool answers the plain tools/call it stands for, which callTool then
 * runs as it runs any other (same routing, scopes, history). Errors are tool results with the
 * fleet's envelope, as every tool's are.
 */
import { JSONRPC_CODES, toAppError, toolErrorResult } from '@mcp-fleet/kit';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/auth';
import type { GatewayContext } from '../core/context';
import { paramHeaderScans } from './rev-2026-07-28/param-headers';
import { SERVICE_ID } from '../core/config';

export async function metaToolCall(
  ctx: GatewayContext,
  params: Record<string, unknown>,
  principal: Principal | undefined,
): Promise<{ result: CallToolResult } | { call: Record<string, unknown> }> {
  const catalog = ctx.registry.catalog;
  let answer;
  try {
    answer = await ctx.discovery!.answer(catalog, params.name as string, params.arguments, principal);
  } catch (err) {
    return { result: toolErrorResult(SERVICE_ID, toAppError(err)) as CallToolResult };
  }
  if ('value' in answer)
    return { result: { content: [{ type: 'text', text: JSON.stringify(answer.value) }], structuredContent: answer.value, isError: false } };
  const { name } = answer.call;
  // as tools/call refuses it directly: a tool whose x-mcp-header declarations are invalid is not called over MCP
  const scan = paramHeaderScans(catalog, ctx.logger).get(name);
  if (scan && !scan.valid)
    throw new McpError(
      JSONRPC_CODES.INVALID_PARAMS,
      `The tool "${name.slice(0, 100)}" is not offered over MCP: its x-mcp-header declarations are invalid (${scan.reason}). Its service must fix its inputSchema.`,
    );
  return { call: { ...params, name, arguments: answer.call.arguments } };
}
