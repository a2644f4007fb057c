import { AppError, defineTool, type AnyObjectSchema, type ToolAnnotations, type ToolDefinition } from '@mcp-fleet/kit';
import type { GatewayClient } from '../gateway';

/** What the tools need: the gateway every call goes through, and the time limit of one call. */
export interface ToolDeps {
  gateway: GatewayClient;
  callTimeoutMs: number;
}

/**
 * One tool of the contract's argument table: its schema with exactly the contract's argument names,
 * and the fleet service that answers it. Validated here, at the coordinator's edge, then forwarded
 * unchanged (the services take the same names).
 */
export interface ForwardSpec {
  name: string;
  /** The inventory service that answers the tool (through the gateway's POST /mcp/{service}). */
  service: string;
  title: string;
  description: string;
  input: AnyObjectSchema;
  annotations: ToolAnnotations;
}

/** Declares a forwarded tool (one file per tool); createTools turns it into a kit tool. */
export const forwardSpec = (spec: ForwardSpec): ForwardSpec => spec;

export function forwardTool(deps: ToolDeps, spec: ForwardSpec): ToolDefinition {
  return defineTool({
    name: spec.name,
    title: spec.title,
    description: `${spec.description} Answered by ${spec.service} through the gateway; at most ${Math.round(deps.callTimeoutMs / 1000)} s per call (COORDINATOR_CALL_TIMEOUT_MS).`,
    input: spec.input,
    annotations: spec.annotations,
    timeoutMs: deps.callTimeoutMs,
    handler: async (args, ctx) => {
      try {
        return await deps.gateway.call(spec.service, spec.name, args, ctx);
      } catch (err) {
        // A service's own internal failure is not the coordinator's: 502, with the service's sentence.
        if (err instanceof AppError && err.code === 'INTERNAL') {
          throw new AppError('UPSTREAM_ERROR', `${spec.service} failed on ${spec.name}: ${err.message}`, { cause: err });
        }
        throw err;
      }
    },
  });
}
