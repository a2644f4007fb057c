import type { ToolAnnotations } from '@mcp-fleet/kit';
import { allows, type Principal } from './auth';
import { McpDownstream } from './mcp-downstream';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Catalog } from './catalog';
import type { GatewayContext } from './context';
import { inventoryStatus } from './tool-resolver';
import { MODE_DESCRIPTIONS, ROUTING_MODES } from './types';
import { displayUrl } from './downstream-client';

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

export interface ToolListing {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: Record<string, unknown>;
  /** MCP's execution hints as the downstream declared them (`taskSupport`). */
  execution?: Record<string, unknown>;
  service: string;
  qualifiedName: string;
}

const listingCache = new WeakMap<Catalog, ToolListing[]>();

/** The catalog as listed; with a principal, only the tools it may call. */
export function toolListing(catalog: Catalog, principal?: Principal): ToolListing[] {
  if (principal) return toolListing(catalog).filter((t) => allows(principal, t.service, t.annotations as ToolAnnotations));
  const cached = listingCache.get(catalog);
  if (cached) return cached;
  const list = catalog.entries.map((e) => ({
    name: e.name,
    ...(e.tool.title ? { title: e.tool.title } : {}),
    description: e.plain ? e.tool.description : `${e.tool.description} (Offered by ${e.service}; this name always routes there.)`,
    inputSchema: e.tool.inputSchema,
    annotations: e.tool.annotations as Record<string, unknown>,
    ...(e.tool.execution ? { execution: e.tool.execution as Record<string, unknown> } : {}),
    service: e.service,
    qualifiedName: e.qualifiedName,
  }));
  listingCache.set(catalog, list);
  return list;
}

export function healthView(ctx: GatewayContext): Record<string, unknown> {
  const services: Record<string, string> = {};
  let healthy = 0;
  let unhealthy = 0;
  let unknown = 0;
  for (const s of ctx.registry.services) {
    services[s.id] = s.health;
    if (s.health === 'healthy') healthy += 1;
    else if (s.health === 'unhealthy') unhealthy += 1;
    else unknown += 1;
  }
  const storeOk = ctx.history.failure === undefined;
  const allUp = healthy === ctx.registry.services.length;
  return {
    status: allUp && storeOk ? 'healthy' : 'degraded',
    service: ctx.service,
    version: ctx.version,
    uptimeSeconds: Math.round((Date.now() - ctx.stats.startedAt) / 1000),
    timestamp: new Date().toISOString(),
    downstream: { total: ctx.registry.services.length, healthy, unhealthy, unknown, services },
    tools: ctx.registry.catalog.entries.length,
    mcpSessions: ctx.mcpSessionCount(),
    checks: {
      sessionStore: storeOk ? { status: 'ok' } : { status: 'error', error: ctx.history.failure },
    },
  };
}

export function servicesView(ctx: GatewayContext): Record<string, unknown> {
  const entries: Record<string, unknown>[] = [];
  const registered = new Set<string>();
  for (const s of ctx.registry.services) {
    registered.add(s.id);
    const inv = ctx.inventory.find((e) => e.id === s.id);
    entries.push({
      id: s.id,
      url: s.upstream.url,
      port: s.upstream.port,
      ...(s.upstream instanceof McpDownstream
        ? { mcp: { transport: s.upstream.spec.transport, starts: s.upstream.starts, ...(s.upstream.pid ? { pid: s.upstream.pid } : {}) } }
        : {}),
      pattern: inv?.pattern ?? (s.spec.mcp ? 'mcp' : 'tool-oriented'),
      ...(inv ? { description: inv.description } : {}),
      status: s.health === 'unknown' ? 'unknown' : s.health,
      ...(s.reason ? { reason: s.reason } : {}),
      lastChecked: s.lastChecked ? new Date(s.lastChecked).toISOString() : null,
      ...(s.lastPoll ? { latencyMs: s.lastPoll.latencyMs } : {}),
      tools: s.healthy ? s.tools.length : 0,
      ...(s.primaryFor.length ? { primaryFor: s.primaryFor } : {}),
      breaker: s.breaker.snapshot(),
      routable: s.healthy && s.breaker.isAvailable(),
    });
  }
  for (const e of ctx.inventory) {
    if (registered.has(e.id)) continue;
    const self = e.pattern === 'gateway';
    entries.push({
      id: e.id,
      url: self ? null : displayUrl(`http://127.0.0.1:${e.port}`),
      port: self ? (ctx.config.PORT ?? e.port) : e.port,
      pattern: e.pattern,
      description: e.description,
      status: self ? 'healthy' : inventoryStatus(e),
      reason: self
        ? 'this gateway'
        : e.status === 'excluded'
          ? 'excluded from the public contract'
          : e.status === 'planned'
            ? 'not built yet; its tools answer UPSTREAM_UNAVAILABLE'
            : e.pattern === 'coordinator'
              ? 'the alternate coordinator surface: it calls this gateway, which does not route to it'
              : ctx.config.FLEET_SERVICES.length
                ? 'not started in this fleet (FLEET_SERVICES lists the services this gateway polls)'
                : 'not in this gateway’s registry',
      lastChecked: null,
      tools: self ? 0 : e.tools.length,
      breaker: null,
      routable: false,
    });
  }
  const counts: Record<string, number> = {};
  for (const e of entries) counts[String(e.status)] = (counts[String(e.status)] ?? 0) + 1;
  return { services: entries, count: entries.length, byStatus: counts };
}

export function schemaView(ctx: GatewayContext): Record<string, unknown> {
  const tools = toolListing(ctx.registry.catalog);
  return {
    tools,
    count: tools.length,
    resources: RESOURCES,
    protocolVersions: SUPPORTED_PROTOCOL_VERSIONS,
    modes: ROUTING_MODES.map((name) => ({ name, description: MODE_DESCRIPTIONS[name] })),
  };
}

export function modesView(ctx: GatewayContext): Record<string, unknown> {
  const { catalog } = ctx.registry;
  const routing = [...catalog.collisions].map(([tool, c]) => {
    const healthyOwners = c.owners.filter((id) => ctx.registry.get(id)?.healthy);
    return {
      tool,
      primary: c.primary,
      owners: c.owners,
      qualifiedNames: c.owners.map((id) => `${id}__${tool}`),
      auto: healthyOwners[0] ?? null,
      primaryMode: healthyOwners.includes(c.primary) ? c.primary : null,
    };
  });
  return {
    default: 'auto',
    modes: ROUTING_MODES.map((name) => ({ name, default: name === 'auto', description: MODE_DESCRIPTIONS[name] })),
    collisionRule:
      'A name offered by one service is listed plain. A name offered by several is listed plain for its primary owner and as ' +
      '<service-id>__<tool> for every owner; the qualified form always works.',
    routing,
    modeSwitches: ctx.stats.modeSwitches,
  };
}
