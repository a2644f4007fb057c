/** MCP servers as downstreams (mcp-downstream.ts): what the rest of the gateway uses of them. */
export { McpDownstream, type McpDownstreamOptions } from './mcp-downstream';
export { REV_2025, withInFlightTables } from './client-2025-11-25';
export { REV_2026, withDefaults, asMcpError } from './client-2026-07-28';
export { readInbound, tolerated } from './tolerant';
export type { HttpServerSpec, McpServerSpec, StdioSandboxPolicy, StdioServerSpec } from './spec';
