import { TOOL_NAME } from '@mcp-fleet/kit';
import type { DownstreamTool } from './types';

/**
 * Trust tiers for names (issue 33, item 5): the fleet's own services (the inventory's) always own
 * their plain tool names; a third-party MCP server (declared in mcpServers) gets a plain name only
 * where no fleet tool has it.
 */
export type TrustTier = 'fleet' | 'third-party';

/** What the catalog needs to know about one registered downstream, in registry (inventory) order. */
export interface CatalogService {
  id: string;
  healthy: boolean;
  /** The tools it offers now (empty unless healthy). */
  tools: readonly DownstreamTool[];
  /** Every name it is known to offer: declared by the inventory or seen in an earlier /tools/list. */
  known: Iterable<string>;
  primaryFor: readonly string[];
  /** Changes when the service's tool definitions change. */
  signature?: string;
  /** Default: fleet. */
  tier?: TrustTier;
}

export interface CatalogEntry {
  /** The name clients call: plain, or `<service-id>__<tool>`. */
  name: string;
  service: string;
  /** The downstream's own name for the tool. */
  tool: DownstreamTool;
  qualifiedName: string;
  plain: boolean;
}

export interface Catalog {
  builtAt: number;
  /** Changes whenever the listed tools change (drives notifications/tools/list_changed). */
  signature: string;
  entries: CatalogEntry[];
  byName: Map<string, CatalogEntry>;
  /**
   * Plain name -> the services a call of it may go to, healthy or not: for a fleet name every fleet
   * owner, primary first, then registry order (failover); for a third-party name its primary owner only.
   */
  owners: Map<string, string[]>;
  /** Names with more than one known owner of one tier; `failover` false for third-party names. */
  collisions: Map<string, { primary: string; owners: string[]; failover: boolean }>;
  skipped: { service: string; name: string; reason: string }[];
  /** Tools listed by their qualified name only: a third-party tool named like a fleet tool, or a name that reads as qualified. */
  shadowed: { service: string; name: string; qualifiedName: string; reason: string }[];
}

export const QUALIFIER = '__';

export function qualify(service: string, tool: string): string {
  return `${service}${QUALIFIER}${tool}`;
}

/**
 * The collision rule (decisions.md): a name offered by one service is listed plain; a name offered
 * by several fleet services is listed plain for its effective owner (the primary, or the first
 * healthy owner after it) and as `<service-id>__<tool>` for every healthy owner. Only healthy
 * services' tools are listed. Names that would break ^[a-zA-Z0-9_-]{1,64}$ are skipped and reported.
 *
 * Trust tiers: `fleetNames` (the inventory's tool names, whatever the health or presence of their
 * services) and every name a fleet service lists belong to the fleet; a third-party server's tool of
 * such a name is listed only as `<server>__<tool>`, and a plain call never reaches it. Third-party
 * servers sharing a name: plain for their primary only (no failover between strangers), so a plain
 * name never moves to another server as servers come and go. A tool whose name reads as a qualified
 * name of a registered service (`<id>__...`, which calls route to that service) is listed qualified only.
 */
export function buildCatalog(services: readonly CatalogService[], now = Date.now(), fleetNames: ReadonlySet<string> = new Set()): Catalog {
  const ids = new Set(services.map((s) => s.id));
  const fleet = new Set(fleetNames);
  for (const s of services) if ((s.tier ?? 'fleet') === 'fleet') for (const name of s.known) fleet.add(name);
  /** Why this service's tool may not have its plain name (undefined: it may). */
  const notPlain = (s: CatalogService, name: string): string | undefined => {
    const q = name.indexOf(QUALIFIER);
    if (q > 0 && ids.has(name.slice(0, q))) return `the name reads as a qualified name of ${name.slice(0, q)}`;
    if (s.tier === 'third-party' && fleet.has(name)) return 'a fleet service owns this name';
    return undefined;
  };
  const all = new Map<string, string[]>();
  const tierOf = new Map<string, TrustTier>();
  const primaryOf = new Map<string, string>();
  for (const s of services) {
    tierOf.set(s.id, s.tier ?? 'fleet');
    for (const name of s.primaryFor) if (!primaryOf.has(name)) primaryOf.set(name, s.id);
    for (const name of new Set(s.known)) {
      if (notPlain(s, name)) continue;
      const list = all.get(name);
      if (list) list.push(s.id);
      else all.set(name, [s.id]);
    }
  }
  const owners = new Map<string, string[]>();
  const collisions = new Map<string, { primary: string; owners: string[]; failover: boolean }>();
  for (const [name, list] of all) {
    const primary = primaryOf.get(name);
    if (primary && list.includes(primary) && list[0] !== primary) {
      list.splice(list.indexOf(primary), 1);
      list.unshift(primary);
    }
    const failover = tierOf.get(list[0]) === 'fleet';
    owners.set(name, failover ? list : [list[0]]);
    if (list.length > 1) collisions.set(name, { primary: list[0], owners: [...list], failover });
  }

  const offering = new Map<string, Set<string>>();
  for (const s of services) {
    if (!s.healthy) continue;
    for (const t of s.tools) {
      const set = offering.get(t.name) ?? new Set<string>();
      set.add(s.id);
      offering.set(t.name, set);
    }
  }

  const entries: CatalogEntry[] = [];
  const byName = new Map<string, CatalogEntry>();
  const skipped: Catalog['skipped'] = [];
  const shadowed: Catalog['shadowed'] = [];
  const add = (entry: CatalogEntry) => {
    if (byName.has(entry.name)) return;
    byName.set(entry.name, entry);
    entries.push(entry);
  };
  const addQualified = (s: CatalogService, tool: DownstreamTool, qualifiedName: string) => {
    if (TOOL_NAME.test(qualifiedName)) add({ name: qualifiedName, service: s.id, tool, qualifiedName, plain: false });
    else skipped.push({ service: s.id, name: qualifiedName, reason: 'the qualified name would be longer than 64 characters' });
  };
  for (const s of services) {
    if (!s.healthy) continue;
    for (const tool of s.tools) {
      if (!TOOL_NAME.test(tool.name)) {
        skipped.push({ service: s.id, name: tool.name, reason: 'the name does not match ^[a-zA-Z0-9_-]{1,64}$' });
        continue;
      }
      const qualifiedName = qualify(s.id, tool.name);
      const why = notPlain(s, tool.name);
      if (why) {
        shadowed.push({ service: s.id, name: tool.name, qualifiedName, reason: why });
        addQualified(s, tool, qualifiedName);
        continue;
      }
      const known = all.get(tool.name) ?? [s.id];
      const effective = (owners.get(tool.name) ?? [s.id]).find((id) => offering.get(tool.name)?.has(id));
      if (known.length < 2 || effective === s.id) add({ name: tool.name, service: s.id, tool, qualifiedName, plain: true });
      if (known.length >= 2) addQualified(s, tool, qualifiedName);
    }
  }
  const signature =
    entries.map((e) => `${e.name}>${e.service}`).join('|') +
    '#' +
    services
      .filter((s) => s.healthy)
      .map((s) => `${s.id}:${s.signature ?? ''}`)
      .join('|');
  return { builtAt: now, signature, entries, byName, owners, collisions, skipped, shadowed };
}
