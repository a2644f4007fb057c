import type { ToolAnnotations, ToolExecution } from '@mcp-fleet/kit';
import type { ListLimits } from './list-limits';
import type { PinMode } from './pins';

export type { HttpServerSpec, McpServerSpec, StdioSandboxPolicy, StdioServerSpec } from '../downstream/mcp/spec';
import type { McpServerSpec } from '../downstream/mcp/spec';

/** One downstream the gateway routes to (the registry is injected; config.ts builds it from the inventory). */
export interface DownstreamSpec {
  id: string;
  url: string;
  /** Tools the inventory declares, so a call to one of them while the service is down is UPSTREAM_UNAVAILABLE, not UNKNOWN_TOOL. */
  tools?: string[];
  /** Colliding names this service owns plainly. */
  primaryFor?: string[];
  /** Set for a real MCP server (stdio child or Streamable HTTP); `url` is then only for display (its declared template). */
  mcp?: McpServerSpec;
  /** An MCP server's pin mode (pins.ts); default hold for third-party servers, off for the fleet's own. */
  pin?: PinMode;
  /** Caps on what it lists, over the gateway's defaults (list-limits.ts). */
  limits?: Partial<ListLimits>;
  /** Values `${VAR}` put into its URL, headers, environment or arguments: masked wherever the gateway speaks of it. */
  secrets?: string[];
  /** Extra headers sent on every request to it (e.g. the marketplace's bearer token); never logged. */
  headers?: Record<string, string>;
  /** Its own time limit of one call (an mcpServers entry's timeoutMs), instead of DOWNSTREAM_TIMEOUT_MS. */
  timeoutMs?: number;
}

/** A tool as a downstream's GET /tools/list describes it. */
export interface DownstreamTool {
  name: string;
  /** The name its MCP server knows it by, when the catalog lists it under another (one model APIs refuse, such as `admin.tools.list`). */
  upstreamName?: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** The JSON Schema of its structuredContent, as an MCP server declared it (clients validate results against it). */
  outputSchema?: Record<string, unknown>;
  annotations: ToolAnnotations;
  /** MCP's execution hints as the downstream declared them: `taskSupport` decides which calls may become tasks. */
  execution?: ToolExecution;
  /** MCP's icons of the tool, as declared. */
  icons?: unknown[];
  /** The tool's `_meta` as its MCP server declared it (MCP Apps' `ui`, a host's own keys): passed on unchanged. */
  _meta?: Record<string, unknown>;
}

/** A prompt as an MCP server's prompts/list describes it. */
export interface DownstreamPrompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: { name: string; description?: string; required?: boolean }[];
  icons?: unknown[];
  _meta?: Record<string, unknown>;
}

/** A resource, or a resource template (`uriTemplate` instead of `uri`), as an MCP server lists it. */
export type DownstreamResource = Record<string, unknown> & { name: string } & ({ uri: string } | { uriTemplate: string });

export type ServiceHealth = 'unknown' | 'healthy' | 'unhealthy';

export const ROUTING_MODES = ['auto', 'primary'] as const;
export type RoutingMode = (typeof ROUTING_MODES)[number];

export const MODE_DESCRIPTIONS: Record<RoutingMode, string> = {
  auto:
    'Default. A plain name goes to its primary owner; if that service is unhealthy (or its circuit breaker is open) and another ' +
    'owner of the same name is healthy, the call fails over to it. Qualified names (<service-id>__<tool>) always go to that service.',
  primary:
    'A plain name goes to its primary owner only; no failover. When the primary owner is down the call fails with UPSTREAM_UNAVAILABLE.',
};

export type Transport = 'native' | 'jsonrpc' | 'service' | 'proxy';

/** The gateway's MCP resources; also listed by GET /mcp/schema. */
export const RESOURCES = [
  { uri: 'mega://health', name: 'health', mimeType: 'application/json', description: 'Gateway health and a summary of every downstream.' },
  {
    uri: 'mega://services',
    name: 'services',
    mimeType: 'application/json',
    description: 'Every inventory service with status, reason, last check, tool count and breaker state.',
  },
  {
    uri: 'mega://schema',
    name: 'schema',
    mimeType: 'application/json',
    description: 'Tool definitions and resource URIs (GET /mcp/schema).',
  },
] as const;

/** The gateway's resource URIs. */
export const RESOURCE_URIS: ReadonlySet<string> = new Set(RESOURCES.map((r) => r.uri));

/**
 * The resources a change alters, for notifications/resources/updated: a downstream's health
 * (mega://health, mega://services) or the catalog (mega://services, mega://schema). The polls'
 * timestamps alone do not count as a change.
 */
export const RESOURCES_CHANGED_BY: Readonly<Record<'health' | 'catalog', readonly string[]>> = {
  health: ['mega://health', 'mega://services'],
  catalog: ['mega://services', 'mega://schema'],
};
