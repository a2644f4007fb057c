import type { ToolDefinition } from '@mcp-fleet/kit';

/** The secrets UI offers no tools: secrets are never handed to MCP clients. Its surface is REST plus the HTML UI. */
export function createTools(): ToolDefinition[] {
  return [];
}
