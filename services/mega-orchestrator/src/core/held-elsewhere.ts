/**
 * Errors core raises about a request that the protocol layer answers: a call another gateway
 * instance holds (the 2026-07-28 transport forwards the request there, mcp/rev-2026-07-28/peer-forward.ts),
 * and the SDK's message prefix taken off an MCP server's error.
 */

/** Thrown where a request turns out to belong to another instance (its MCP endpoint URL). */
export class HeldElsewhere extends Error {
  constructor(
    readonly instanceUrl: string,
    /** What the client is told when the request cannot be forwarded (already forwarded, or unreachable). */
    readonly refusal: string,
  ) {
    super(refusal);
  }
}

/** The SDK's McpError puts "MCP error <code>: " before its message (again when wrapped); the code travels on its own. */
export function withoutMcpErrorPrefix(message: string): string {
  return message.replace(/^(MCP error -?\d+: )+/, '');
}
