/**
 * What the protocol layer holds for the whole process beside the gateway's shared parts
 * (GatewayContext, core/context.ts): the 2026-07-28 subscriptions/listen streams and the
 * input_required exchanges waiting for a client's retry. Per-request data is in the RequestContext
 * (request-context.ts).
 */
import type { GatewayContext } from '../core/context';
import type { InputExchanges } from './client-requests';
import type { ListenStreams } from './subscriptions';

export interface McpContext extends GatewayContext {
  /** 2026-07-28 tool calls whose MCP server asked the client something, waiting for its retry. */
  inputs: InputExchanges;
  /** Open 2026-07-28 subscriptions/listen streams. */
  listen: ListenStreams;
}
