/**
 * One virtual server's view of the catalog: its tools as its clients see them (renamed, described,
 * fixed arguments out of the schema, defaults in it), built from the gateway's catalog whenever
 * either changes, never per call. A tool whose backing tool is not served now is hidden, with the
 * reason (GET /services, virtualServers); a call of it still goes to the gateway, which answers why.
 */
import { createHash } from 'node:crypto';
import { AppError, isPlainObject } from '@mcp-fleet/kit';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { QUALIFIER, type Catalog, type CatalogEntry } from '../catalog';
import type { Registry } from '../registry';
import type { TaskManager } from '../tasks';
import type { DownstreamTool } from '../types';
import type { VirtualServerDef, VirtualToolDef } from './definition';
import type { HiddenTool } from './report';

/** One defined tool, listed or not. */
export interface VirtualTool {
  def: VirtualToolDef;
  /** The arguments its definition fixes (refused from callers). */
  fixed: readonly string[];
  /** Set when the definition itself does not fit the backing tool: calls are refused (NOT_CONFIGURED) until it is fixed. */
  problem?: string;
}

export interface ServerView {
  /** What the server's clients see, in the shape of the gateway's catalog (the MCP and REST code reads it as such). */
  catalog: Catalog;
  /** Every defined tool by the name its clients call. */
  tools: ReadonlyMap<string, VirtualTool>;
  hidden: HiddenTool[];
}

type Backing = { service: string; tool: DownstreamTool } | { reason: string };

/** The tool a definition names, as the gateway serves it now, or why it is not served. */
function backingOf(real: Catalog, registry: Registry, name: string): Backing {
  const listed = real.byName.get(name);
  if (listed) return { service: listed.service, tool: listed.tool };
  const q = name.indexOf(QUALIFIER);
  const named = q > 0 ? registry.get(name.slice(0, q)) : undefined;
  if (named) {
    const own = name.slice(q + QUALIFIER.length);
    if (!named.healthy) return { reason: `${named.id} is unavailable: ${named.unavailableReason()}` };
    const tool = named.toolsByName.get(own);
    if (tool) return { service: named.id, tool };
    if (named.held.has(own)) return { reason: `${named.id} changed ${own} since it was pinned; withheld until approved (GET /admin/pins)` };
    return { reason: `${named.id} does not offer ${own}` };
  }
  const owner = real.owners
    .get(name)
    ?.map((id) => registry.get(id))
    .find((s) => s !== undefined);
  if (owner)
    return { reason: owner.healthy ? `${owner.id} does not list it now` : `${owner.id} is unavailable: ${owner.unavailableReason()}` };
  return { reason: 'no service offers it now' };
}

/** Why a fixed or default value does not fit the backing tool's schema (undefined: it fits, or cannot be judged). */
function valueProblem(schema: Record<string, unknown>, key: string, value: unknown, validator: jsonSchemaValidator): string | undefined {
  const properties = isPlainObject(schema.properties) ? schema.properties : undefined;
  if (!properties || !Object.hasOwn(properties, key))
    return schema.additionalProperties === false ? 'is not one of its arguments' : undefined;
  const property = properties[key];
  if (!isPlainObject(property)) return undefined;
  try {
    const check = validator.getValidator({
      ...property,
      ...(schema.$defs !== undefined ? { $defs: schema.$defs } : {}),
      ...(schema.definitions !== undefined ? { definitions: schema.definitions } : {}),
    } as Parameters<jsonSchemaValidator['getValidator']>[0]);
    const verdict = check(value);
    return verdict.valid ? undefined : `does not fit its schema (${verdict.errorMessage.slice(0, 200)})`;
  } catch {
    return undefined; // a schema the validator cannot compile is judged by the tool itself, on each call
  }
}

/** The input schema the server's clients see: fixed arguments gone, defaults shown and no longer required. */
export function viewSchema(schema: Record<string, unknown>, def: VirtualToolDef): Record<string, unknown> {
  if (!def.fixed && !def.defaults) return schema;
  const fixed = new Set(Object.keys(def.fixed ?? {}));
  const defaults = def.defaults ?? {};
  const properties: Record<string, unknown> = {};
  if (isPlainObject(schema.properties))
    for (const [key, value] of Object.entries(schema.properties)) if (!fixed.has(key)) properties[key] = value;
  for (const [key, value] of Object.entries(defaults))
    properties[key] = { ...(isPlainObject(properties[key]) ? properties[key] : {}), default: value };
  const required = Array.isArray(schema.required)
    ? schema.required.filter((k) => typeof k === 'string' && !fixed.has(k) && !Object.hasOwn(defaults, k))
    : [];
  const { required: _required, ...rest } = schema;
  return { ...rest, properties, ...(required.length ? { required } : {}) };
}

/** The view of one server over the gateway's catalog now. */
export function buildView(
  def: VirtualServerDef,
  real: Catalog,
  registry: Registry,
  tasks: TaskManager,
  validator: jsonSchemaValidator,
): ServerView {
  const entries: CatalogEntry[] = [];
  const tools = new Map<string, VirtualTool>();
  const hidden: HiddenTool[] = [];
  for (const t of def.tools) {
    const name = t.name ?? t.tool;
    const vt: VirtualTool = { def: t, fixed: Object.keys(t.fixed ?? {}) };
    tools.set(name, vt);
    const backing = backingOf(real, registry, t.tool);
    if ('reason' in backing) {
      hidden.push({ name, tool: t.tool, reason: backing.reason });
      continue;
    }
    const schema = backing.tool.inputSchema;
    for (const [what, values] of [
      ['fixed', t.fixed],
      ['defaults', t.defaults],
    ] as const)
      for (const [key, value] of Object.entries(values ?? {})) {
        const why = valueProblem(schema, key, value, validator);
        if (why && !vt.problem) vt.problem = `${what}.${key} ${why} (${t.tool})`;
      }
    if (vt.problem) {
      hidden.push({ name, tool: t.tool, reason: `the definition does not fit the tool: ${vt.problem}` });
      continue;
    }
    const support = tasks.supportOf(real, t.tool);
    const execution = support ? { ...backing.tool.execution, taskSupport: support } : backing.tool.execution;
    const title = t.title ?? backing.tool.title;
    const tool: DownstreamTool = {
      name,
      ...(title ? { title } : {}),
      description: t.description ?? backing.tool.description,
      inputSchema: viewSchema(schema, t),
      ...(backing.tool.outputSchema ? { outputSchema: backing.tool.outputSchema } : {}),
      annotations: backing.tool.annotations,
      ...(execution ? { execution } : {}),
      ...(backing.tool.icons ? { icons: backing.tool.icons } : {}),
      ...(backing.tool._meta ? { _meta: backing.tool._meta } : {}),
    };
    entries.push({ name, service: backing.service, tool, qualifiedName: name, plain: true });
  }
  // the mode is part of what clients see: switching it is a list change
  const signature = createHash('sha256')
    .update(JSON.stringify([def.discovery ?? 'full', entries.map((e) => [e.name, e.service, e.tool])]))
    .digest('base64url');
  const catalog: Catalog = {
    builtAt: real.builtAt,
    signature,
    entries,
    byName: new Map(entries.map((e) => [e.name, e])),
    owners: new Map(entries.map((e) => [e.name, [e.service]])),
    collisions: new Map(),
    skipped: [],
    shadowed: [],
  };
  return { catalog, tools, hidden };
}

/**
 * A call's arguments as the backing tool gets them: defaults where the caller left them out, fixed
 * values always. A caller that sends a fixed argument is refused (VALIDATION_ERROR) rather than
 * silently overridden: it learns the argument is not its to choose, and the value is not shown.
 */
export function callArguments(server: string, name: string, vt: VirtualTool, args: Record<string, unknown>): Record<string, unknown> {
  const sent = vt.fixed.filter((k) => Object.hasOwn(args, k));
  if (sent.length)
    throw new AppError(
      'VALIDATION_ERROR',
      `${name} on virtual server ${server} sets ${sent.map((k) => `arguments.${k}`).join(', ')} itself; leave ${sent.length === 1 ? 'it' : 'them'} out (tools/list shows the arguments you may send).`,
      { details: { fixed: sent } },
    );
  if (!vt.def.fixed && !vt.def.defaults) return args;
  return { ...vt.def.defaults, ...args, ...vt.def.fixed };
}
