import { AppError } from '@mcp-fleet/kit';
import { polledByGateway, type ServiceEntry } from '@mcp-fleet/inventory';
import { QUALIFIER } from './catalog';
import type { Registry, ServiceState } from './registry';
import type { DownstreamTool, RoutingMode } from './types';

export interface Target {
  service: ServiceState;
  /** The downstream's own tool name. */
  toolName: string;
  tool?: DownstreamTool;
}

export interface Route {
  /** Services to try, in order; more than one only in auto mode (failover). */
  candidates: Target[];
}

/** Inventory services that are not in the registry, by tool name, so their tools fail fast as unavailable (never the coordinator surface's, which are other services' tools). */
export function unregisteredOwners(inventory: readonly ServiceEntry[], registry: Registry): Map<string, ServiceEntry[]> {
  const out = new Map<string, ServiceEntry[]>();
  for (const entry of inventory) {
    if (!polledByGateway(entry) || registry.get(entry.id)) continue;
    for (const tool of entry.tools) out.set(tool, [...(out.get(tool) ?? []), entry]);
  }
  return out;
}

export function inventoryStatus(entry: ServiceEntry): string {
  if (entry.status === 'excluded') return 'excluded';
  if (entry.status === 'planned') return 'not yet available';
  return 'not registered';
}

const unavailable = (message: string, retryAfter: number) => new AppError('UPSTREAM_UNAVAILABLE', message, { retryAfter });

/** A tool name as MCP spells one (1-128 printable ASCII characters, no space): only such a name goes to a server that does not list it. */
const NAME_AS_MCP_ALLOWS = /^[\x21-\x7e]{1,128}$/;

/**
 * Whether a call of a name `service` does not list goes to it all the same (docs/gateway.md,
 * "Names and URIs no list shows"): a third-party MCP server answers for its own names, as it would
 * directly (a tool it does not list, or lists only later). Never a fleet service (its tools are the
 * contract's), never a tool withheld by its pin (that answers below), never a server whose list the
 * gateway's limits cut short (the name may be one the operator's limits refused).
 */
export function answersUnlisted(service: ServiceState, name: string): boolean {
  return service.tier === 'third-party' && !service.refusals.tools && !service.held.has(name) && NAME_AS_MCP_ALLOWS.test(name);
}

/** Name + mode -> the services to call. Map lookups only: this is the hot path. */
export class ToolResolver {
  private absent: Map<string, ServiceEntry[]>;
  private readonly inventoryById: Map<string, ServiceEntry>;

  constructor(
    private readonly registry: Registry,
    private readonly inventory: readonly ServiceEntry[],
    private readonly pollSeconds: number,
    /** MCP_FORWARD_UNLISTED: names no list shows go to the server they can only be (answersUnlisted). */
    private readonly unlisted = true,
  ) {
    this.absent = unregisteredOwners(inventory, registry);
    this.inventoryById = new Map(inventory.map((e) => [e.id, e]));
  }

  resolve(name: string, mode: RoutingMode): Route {
    const q = name.indexOf(QUALIFIER);
    if (q > 0) {
      const id = name.slice(0, q);
      const service = this.registry.get(id);
      if (service) return { candidates: [this.target(service, name.slice(q + QUALIFIER.length))] };
      const entry = this.inventoryById.get(id);
      if (entry && polledByGateway(entry)) {
        throw unavailable(`${id} is ${inventoryStatus(entry)}; its tools cannot be called through this gateway.`, this.pollSeconds);
      }
    }
    const owners = this.registry.catalog.owners.get(name);
    if (!owners) {
      const absent = this.absent.get(name);
      if (absent) {
        throw unavailable(
          `${name} belongs to ${absent.map((e) => `${e.id} (${inventoryStatus(e)})`).join(', ')}; GET /services shows what is running.`,
          this.pollSeconds,
        );
      }
      // the only MCP server behind the gateway answers for a name nobody lists, as it would directly (never a fleet name)
      const sole = this.registry.soleServer;
      if (this.unlisted && sole?.healthy && !this.registry.fleetNames.has(name) && answersUnlisted(sole, name))
        return { candidates: [{ service: sole, toolName: name }] };
      throw new AppError(
        'UNKNOWN_TOOL',
        `No service offers a tool named "${name.slice(0, 100)}"; GET /tools/list shows the tools available now.`,
      );
    }
    const primary = this.registry.get(owners[0])!;
    if (mode === 'primary') return { candidates: [this.target(primary, name)] };
    const candidates: Target[] = [];
    for (const id of owners) {
      const s = this.registry.get(id)!;
      if (s.healthy && s.toolsByName.has(name) && s.breaker.isAvailable())
        candidates.push({ service: s, toolName: name, tool: s.toolsByName.get(name) });
    }
    if (candidates.length > 0) return { candidates };
    if (primary.healthy && !primary.toolsByName.has(name)) {
      const down = owners.map((id) => this.registry.get(id)!).find((s) => !s.healthy);
      if (down) return { candidates: [this.target(down, name)] };
    }
    return { candidates: [this.target(primary, name)] };
  }

  /** One named service (POST /mcp/{service} or a qualified name): no failover. */
  resolveOn(service: ServiceState, name: string): Route {
    const prefix = service.id + QUALIFIER;
    return { candidates: [this.target(service, name.startsWith(prefix) ? name.slice(prefix.length) : name)] };
  }

  private target(service: ServiceState, toolName: string): Target {
    if (!service.healthy) {
      throw unavailable(`${service.id} is unavailable: ${service.unavailableReason()}. GET /services shows its state.`, this.pollSeconds);
    }
    const tool = service.toolsByName.get(toolName);
    if (!tool) {
      // a pinned tool whose definition changed (pin: hold): withheld until an operator approves it
      const held = service.held.get(toolName);
      if (held)
        throw new AppError(
          'UPSTREAM_UNAVAILABLE',
          `${service.id} changed the definition of ${toolName} (${held.changed.join(', ')}) since it was pinned; the tool is withheld until an operator approves the change (GET /admin/pins).`,
          { details: { pinned: held.pinnedHash, listed: held.hash } },
        );
      // a third-party server named by the call (a qualified name, POST /mcp/{service}) answers for its own names
      if (this.unlisted && answersUnlisted(service, toolName)) return { service, toolName };
      throw new AppError(
        'UNKNOWN_TOOL',
        `${service.id} has no tool named "${toolName.slice(0, 100)}"; GET /tools/list shows the tools available now.`,
      );
    }
    return { service, toolName, tool };
  }
}
