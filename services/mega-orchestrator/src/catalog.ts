import { TOOL_NAME } from '@mcp-fleet/kit';
import type { DownstreamTool } from './types';

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
  /** Plain name -> every known owner, primary first, then registry order (healthy or not). */
  owners: Map<string, string[]>;
  /** Names with more than one known owner. */
  collisions: Map<string, { primary: string; owners: string[] }>;
  skipped: { service: string; name: string; reason: string }[];
}

export const QUALIFIER = '__';

export function qualify(service: string, tool: string): string {
  return `${service}${QUALIFIER}${tool}`;
}

/**
 * The collision rule (decisions.md): a name offered by one service is listed plain; a name offered
 * by several is listed plain for its effective owner (the primary, or the first healthy owner
 * after it) and as `<service-id>__<tool>` for every healthy owner. Only healthy services' tools are
 * listed. Names that would break ^[a-zA-Z0-9_-]{1,64}$ are skipped and reported.
 */
export function buildCatalog(services: readonly CatalogService[], now = Date.now()): Catalog {
  const owners = new Map<string, string[]>();
  const primaryOf = new Map<string, string>();
  for (const s of services) {
    for (const name of s.primaryFor) if (!primaryOf.has(name)) primaryOf.set(name, s.id);
    for (const name of new Set(s.known)) {
      const list = owners.get(name);
      if (list) list.push(s.id);
      else owners.set(name, [s.id]);
    }
  }
  const collisions = new Map<string, { primary: string; owners: string[] }>();
  for (const [name, list] of owners) {
    const primary = primaryOf.get(name);
    if (primary && list.includes(primary) && list[0] !== primary) {
      list.splice(list.indexOf(primary), 1);
      list.unshift(primary);
    }
    if (list.length > 1) collisions.set(name, { primary: list[0], owners: [...list] });
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
  const add = (entry: CatalogEntry) => {
    if (byName.has(entry.name)) return;
    byName.set(entry.name, entry);
    entries.push(entry);
  };
  for (const s of services) {
    if (!s.healthy) continue;
    for (const tool of s.tools) {
      if (!TOOL_NAME.test(tool.name)) {
        skipped.push({ service: s.id, name: tool.name, reason: 'the name does not match ^[a-zA-Z0-9_-]{1,64}$' });
        continue;
      }
      const qualifiedName = qualify(s.id, tool.name);
      const all = owners.get(tool.name) ?? [s.id];
      const effective = all.find((id) => offering.get(tool.name)?.has(id)) ?? s.id;
      if (all.length < 2 || effective === s.id) add({ name: tool.name, service: s.id, tool, qualifiedName, plain: true });
      if (all.length >= 2) {
        if (TOOL_NAME.test(qualifiedName)) add({ name: qualifiedName, service: s.id, tool, qualifiedName, plain: false });
        else skipped.push({ service: s.id, name: qualifiedName, reason: 'the qualified name would be longer than 64 characters' });
      }
    }
  }
  const signature =
    entries.map((e) => `${e.name}>${e.service}`).join('|') +
    '#' +
    services
      .filter((s) => s.healthy)
      .map((s) => `${s.id}:${s.signature ?? ''}`)
      .join('|');
  return { builtAt: now, signature, entries, byName, owners, collisions, skipped };
}
