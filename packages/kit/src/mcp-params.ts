/**
 * -32602 for a caller's bad params to the methods an official SDK server parses itself; apart from
 * mcp-endpoint.ts (which loads Express) so a stdio server (toolkit-mcp-server) takes it alone.
 */
import type * as SdkTypes from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { ERROR_CODES } from './errors';
import { zodIssuesToDetails } from './validation';

type SdkHandler = (request: unknown, extra: unknown) => Promise<unknown>;

/**
 * The SDK parses a request with its method's schema before the handler runs, and a parse that
 * fails is answered -32603 (Internal error) with zod's dump as the message: what a caller's bad
 * params got: to tools/call, initialize and the rest where the SDK's schema is the strict one
 * (the gateway's logging/setLevel and tasks/*, a kit service's tools/call). A caller's bad params are -32602, saying which field and why.
 * (The SDK keeps its handlers in a private map; without it, as in a later SDK, nothing is changed.)
 */
export function badParamsAsInvalidParams(server: object): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { McpError } = require('@modelcontextprotocol/sdk/types.js') as typeof SdkTypes;
  const handlers = (server as unknown as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) return;
  for (const [method, handler] of handlers as Map<string, SdkHandler>) {
    handlers.set(method, (request: unknown, extra: unknown) => {
      try {
        // the parse is synchronous, before the handler's own (asynchronous) work
        return handler(request, extra);
      } catch (err) {
        const issues = (err as { issues?: unknown }).issues;
        if (!Array.isArray(issues) || issues.length === 0) throw err;
        const [first] = zodIssuesToDetails(issues as z.core.$ZodIssue[]);
        const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
        throw new McpError(ERROR_CODES.VALIDATION_ERROR.rpc, `Invalid params for ${method}: ${first.path}: ${first.message}${more}.`);
      }
    });
  }
}
