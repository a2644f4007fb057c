import type { ToolAnnotations } from '@mcp-fleet/kit';
import { allows, type Principal } from '../auth/auth';
import { McpDownstream } from '../downstream/mcp';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Catalog } from './catalog';
import type { GatewayContext } from './context';
import { inventoryStatus } from './tool-resolver';
import { MODE_DESCRIPTIONS, RESOURCES, ROUTING_MODES } from './types';
import { DownstreamClient, displayUrl } from '../downstream/http-client';
import type { ServiceState } from './registry';
import { SERVICE_ID, VERSION } from './config';

// The gateway's own resources live in types.ts, which mcp/subscriptions.ts imports without a cycle; re-exported for the rest.
export { RESOURCE_URIS, RESOURCES, RESOURCES_CHANGED_BY } from './types';

export interface ToolListing {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations: Record<string, unknown>;
  /** MCP's execution hints as the downstream declared them (`taskSupport`). */
  execution?: Record<string, unknown>;
  icons?: unknown[];
  _meta?: Record<string, unknown>;
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
    ...(e.tool.outputSchema ? { outputSchema: e.tool.outputSchema } : {}),
    annotations: e.tool.annotations as Record<string, unknown>,
    ...(e.tool.execution ? { execution: e.tool.execution as Record<string, unknown> } : {}),
    ...(e.tool.icons ? { icons: e.tool.icons } : {}),
    ...(e.tool._meta ? { _meta: e.tool._meta } : {}),
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
    service: SERVICE_ID,
    version: VERSION,
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
        ? {
            mcp: {
              transport: s.upstream.spec.transport,
              // the revision it is spoken to in (declared, or found: server/discover answered)
              protocolVersion: s.upstream.protocolEra,
              starts: s.upstream.starts,
              ...(s.upstream.pid ? { pid: s.upstream.pid } : {}),
            },
          }
        : {}),
      // a kit service's persistent channel (DOWNSTREAM_CHANNEL): over its Unix socket, over TCP, or not open now
      ...(s.upstream instanceof DownstreamClient && s.upstream.channel ? { channel: s.upstream.channel.transport ?? 'closed' } : {}),
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
      ...catalogGuards(ctx, s),
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

/**
 * What the gateway's guards did to one downstream's offer (issue 33): its trust tier, what its lists
 * lost to the caps, tools whose definition changed since pinned, tools listed by their qualified
 * name only, announcements and reads refused; `notice` says it in one line (the status page's note).
 * Names only, never a server's descriptions.
 */
function catalogGuards(ctx: GatewayContext, s: ServiceState): Record<string, unknown> {
  const out: Record<string, unknown> = { trust: s.tier };
  const notes: string[] = [];
  const refused = Object.entries(s.refusals);
  if (refused.length) {
    out.refused = s.refusals;
    const next = s.listsNotBefore > Date.now() ? `; lists read again after ${new Date(s.listsNotBefore).toISOString()}` : '';
    notes.push(`${refused.map(([kind, r]) => `${r.refused}${r.more ? '+' : ''} ${kind}`).join(', ')} refused (over the caps)${next}`);
  }
  if (s.pinMode !== 'off') {
    const view = (m: Map<string, { tool: string; changed: string[]; since: number; pinnedHash: string; hash: string }>) =>
      [...m.values()].map((c) => ({
        tool: c.tool,
        changed: c.changed,
        since: new Date(c.since).toISOString(),
        pinned: c.pinnedHash,
        listed: c.hash,
      }));
    out.pins = { mode: s.pinMode, held: view(s.held), changed: view(s.changed) };
    if (s.held.size)
      notes.push(`${s.held.size} tool${s.held.size === 1 ? '' : 's'} withheld: changed since pinned (approve at /admin/pins)`);
    if (s.changed.size)
      notes.push(`${s.changed.size} tool${s.changed.size === 1 ? '' : 's'} changed since pinned (approve at /admin/pins)`);
  }
  const shadowed = ctx.registry.catalog.shadowed.filter((e) => e.service === s.id);
  if (shadowed.length) {
    out.qualifiedOnly = shadowed.map((e) => ({ tool: e.name, listedAs: e.qualifiedName, reason: e.reason }));
    notes.push(`${shadowed.length} tool${shadowed.length === 1 ? '' : 's'} listed by qualified name only (fleet names)`);
  }
  if (s.provenance.refusedUpdates || s.provenance.refusedReads) {
    out.provenance = { ...s.provenance };
    notes.push(`${s.provenance.refusedUpdates + s.provenance.refusedReads} announcements or reads of URIs it does not own refused`);
  }
  if (notes.length) out.notice = notes.join('; ');
  return out;
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
      // a third-party name goes to its primary only (no failover between strangers)
      auto: (c.failover ? healthyOwners[0] : healthyOwners.find((id) => id === c.primary)) ?? null,
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
