import {
  paginate,
  AppError,
  ERROR_CODES,
  JSONRPC_CODES,
  isPlainObject,
  MAX_INPUT_DEPTH,
  withinDepth,
  type Logger,
  type ToolAnnotations,
} from '@mcp-fleet/kit';
import { allows, type Principal } from '../auth/auth';
import type { CallCancel } from '../downstream/cancel';
import type { ClientRequester, LogListener, ProgressListener } from '../downstream/http-client';
import { callersMeta, type CompleteParams } from '../downstream/downstream';
import { McpError, type CallToolResult, type GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import { z } from 'zod';
import type { Catalog } from '../core/catalog';
import type { GatewayContext } from '../core/context';
import { ROUTING_MODES, type RoutingMode } from '../core/types';
import { healthView, RESOURCE_URIS, RESOURCES, schemaView, servicesView, toolListing } from '../core/views';
import { paramHeaderScans } from './rev-2026-07-28/param-headers';
import { skillsOf, SKILLS_EXTENSION_CAPABILITY } from '../core/skills';
import { metaToolCall } from './meta-call';
import { rpcErrorWithStatus, ServerRpcError } from './errors';
import type { ExecutionView } from './request-context';

/**
 * What the gateway serves in both eras: tools and prompts list changes (GET stream or
 * subscriptions/listen), updates of its three fixed resources (no list changes), completions,
 * the skills of the services behind it (Skills extension, src/skills.ts).
 * 2025-era sessions have logging too (createMcpServer); 2026-07-28 removed logging/setLevel.
 */
export const CAPABILITIES = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  extensions: SKILLS_EXTENSION_CAPABILITY,
} as const;

interface McpTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  execution?: Record<string, unknown>;
  icons?: unknown[];
  _meta?: Record<string, unknown>;
}

const mcpToolCaches: Record<ExecutionView, WeakMap<Catalog, McpTool[]>> = {
  none: new WeakMap(),
  declared: new WeakMap(),
  session: new WeakMap(),
};

/**
 * The catalog as MCP tools. 2026-07-28 clients get each tool's `execution` as its downstream
 * declared it (tasks extension). A 2025-11-25 session that serves tasks sees every tool that may
 * run as a task as `taskSupport: "optional"`, a downstream's required one included: the gateway runs
 * a call without params.task to its end (driving the downstream's task itself), so for the session
 * the task is an option, and the v1 SDK client, which refuses a plain callTool of a tool listed as
 * task-required, keeps calling it. A downstream's `taskSupport: "forbidden"` is listed as it
 * declared it to every client, unless MCP_TASK_TOOLS makes the tool a task for the session.
 */
function mcpTools(catalog: Catalog, view: ExecutionView, logger: Logger, runsAsTask?: (name: string) => boolean): McpTool[] {
  const cache = mcpToolCaches[view];
  let list = cache.get(catalog);
  if (!list) {
    // A tool whose x-mcp-header declarations break SEP-2243's rules is one an MCP client must reject: not listed.
    const scans = paramHeaderScans(catalog, logger);
    list = toolListing(catalog)
      .filter((t) => scans.get(t.name)?.valid !== false)
      .map((t) => ({
        name: t.name,
        ...(t.title ? { title: t.title } : {}),
        description: t.description,
        inputSchema: t.inputSchema,
        ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
        // as the downstream declared them: a tool without annotations is listed without (not with an empty object)
        ...(t.annotations && Object.keys(t.annotations).length > 0 ? { annotations: t.annotations } : {}),
        ...executionFor(t, view, runsAsTask),
        ...(t.icons ? { icons: t.icons } : {}),
        ...(t._meta ? { _meta: t._meta } : {}),
      }));
    cache.set(catalog, list);
  }
  return list;
}

/** A listed tool's `execution` as a client of this view is told it (mcpTools), as a part to spread. */
function executionFor(
  t: { name: string; execution?: Record<string, unknown> },
  view: ExecutionView,
  runsAsTask?: (name: string) => boolean,
): { execution?: Record<string, unknown> } {
  if (view === 'declared') return t.execution ? { execution: t.execution } : {};
  if (view === 'session' && runsAsTask?.(t.name)) return { execution: { taskSupport: 'optional' } };
  // a downstream's "forbidden" holds in every view: listed as it declared it
  return t.execution?.taskSupport === 'forbidden' ? { execution: t.execution } : {};
}

const ID = /^[\w.:-]{1,128}$/;

export const INSTRUCTIONS =
  'One catalog for the whole fleet. Names offered by several services are listed plain for their primary owner and as ' +
  '<service-id>__<tool> for every owner. Optional params._meta: mode ("auto" or "primary"), context_id, and session_id (sessionless requests).';

/** One page of the catalog as MCP tools (both protocol eras). */
export function listToolsPage(
  ctx: GatewayContext,
  pageSize: number,
  cursor: unknown,
  principal?: Principal,
  view: ExecutionView = 'none',
): { tools: McpTool[]; nextCursor?: string } {
  if (cursor !== undefined && typeof cursor !== 'string') throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'cursor must be a string');
  // MCP_DISCOVERY=meta: the meta-tools stand for the catalog (search_tools lists what the caller may call)
  if (ctx.discovery) return { tools: [...ctx.discovery.tools] };
  try {
    const catalog = ctx.registry.catalog;
    const all = mcpTools(catalog, view, ctx.logger, (name) => ctx.tasks.supportOf(catalog, name) !== undefined);
    const visible = principal ? all.filter((t) => allows(principal, serviceOf(ctx, t.name), t.annotations as ToolAnnotations)) : all;
    // 0: the whole catalog at once (clients that never follow nextCursor see every tool)
    const page = paginate(visible, pageSize > 0 ? pageSize : Math.max(visible.length, 1), cursor);
    return { tools: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  } catch (err) {
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, err instanceof AppError ? err.message : 'invalid cursor');
  }
}

/** A downstream's time limit of one request: its own (an mcpServers entry's timeoutMs), else DOWNSTREAM_TIMEOUT_MS. */
function timeoutAt(ctx: GatewayContext, service: string): number {
  return ctx.registry.get(service)?.spec.timeoutMs ?? ctx.config.DOWNSTREAM_TIMEOUT_MS;
}

/** The service a listed name routes to (for scope checks of the MCP listing). */
function serviceOf(ctx: GatewayContext, name: string): string {
  return ctx.registry.catalog.byName.get(name)?.service ?? '';
}

/** tools/call's params checked (no allocation: the hot path): a bad name, arguments or mode is -32602, before any task is created for it. */
export function checkCallParams(p: Record<string, unknown>): void {
  if (typeof p.name !== 'string' || p.name === '')
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'tools/call needs params.name (a string).');
  if (p.arguments !== undefined && !isPlainObject(p.arguments))
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.arguments must be an object.');
  // as the kit's edge does: nothing downstream (JSON.stringify of the forwarded call) may recurse without bound
  if (p.arguments !== undefined && !withinDepth(p.arguments, MAX_INPUT_DEPTH))
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `params.arguments nests deeper than ${MAX_INPUT_DEPTH} levels; flatten it.`);
  const mode = isPlainObject(p._meta) ? p._meta.mode : undefined;
  if (mode !== undefined && !ROUTING_MODES.includes(mode as RoutingMode))
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `_meta.mode must be one of: ${ROUTING_MODES.join(', ')} (GET /modes describes them).`);
}

/** tools/call through the dispatcher (both protocol eras): downstream failures are results with isError. */
export async function callTool(
  ctx: GatewayContext,
  p: Record<string, unknown>,
  call: {
    requestId: string;
    signal?: AbortSignal;
    cancel?: CallCancel;
    traceparent?: string;
    sessionId?: string;
    principal?: Principal;
    onProgress?: ProgressListener;
    /** Answers what an MCP server behind the gateway asks its client during the call. */
    onClientRequest?: ClientRequester;
    /** Receives the log messages an MCP server behind the gateway sends during the call. */
    onLog?: LogListener;
    /** This call's time limit (a task's is longer than DOWNSTREAM_TIMEOUT_MS). */
    timeoutMs?: number;
  },
): Promise<CallToolResult> {
  checkCallParams(p);
  // MCP_DISCOVERY=meta: a meta-tool's answer, or the plain call call_tool stands for (run below as any other)
  if (ctx.discovery?.isMetaTool(p.name)) {
    const meta = await metaToolCall(ctx, p, call.principal);
    if ('result' in meta) return meta.result;
    p = meta.call;
  }
  const name = p.name as string;
  const args = (p.arguments ?? {}) as Record<string, unknown>;
  const meta = isPlainObject(p._meta) ? p._meta : {};
  const mode = (meta.mode as RoutingMode | undefined) ?? 'auto';
  const contextId = typeof meta.context_id === 'string' && ID.test(meta.context_id) ? meta.context_id : undefined;
  const out = await ctx.dispatcher.call({
    tool: name,
    args,
    mode,
    transport: 'jsonrpc',
    requestId: call.requestId,
    // Sessionless clients may name a session in _meta to have their calls recorded.
    sessionId: call.sessionId ?? (typeof meta.session_id === 'string' && ID.test(meta.session_id) ? meta.session_id : undefined),
    contextId,
    // a call with a CallCancel goes on with it alone: its AbortSignal is made only where one is needed (signalOf)
    signal: call.cancel ? undefined : call.signal,
    cancel: call.cancel,
    traceparent: call.traceparent,
    principal: call.principal,
    onProgress: call.onProgress,
    onClientRequest: call.onClientRequest,
    onLog: call.onLog,
    timeoutMs: call.timeoutMs,
    meta: callersMeta(p._meta),
  });
  if (!out.body.success && out.code === 'UNKNOWN_TOOL') throw new McpError(JSONRPC_CODES.INVALID_PARAMS, out.body.error);
  // An MCP server that answered a JSON-RPC error, not a tool result: its caller gets that error (code,
  // message, data), as from the server directly: a URL elicitation required (-32042, to open and
  // retry), a client capability the caller did not declare (-32021, the caller's own error: HTTP 400
  // over 2026-07-28), the server's own codes. (Its -32602 is the call's VALIDATION_ERROR result,
  // as 2025-11-25 asks of bad arguments, so that a model can correct them.)
  const own = out.rpcError?.code === JSONRPC_CODES.INVALID_PARAMS ? undefined : out.rpcError;
  if (own?.code === JSONRPC_CODES.MISSING_REQUIRED_CLIENT_CAPABILITY) throw rpcErrorWithStatus(own.code, own.message, own.data);
  if (own) throw new ServerRpcError(own.code, own.message, own.data);
  // the tool's result as the downstream's edge read it (an MCP server's unchanged, a kit service's envelope as MCP's)
  if (out.result) return out.result;
  // no tool result: the call's error (the gateway's own, or the downstream's error envelope)
  return { content: [{ type: 'text', text: JSON.stringify(out.body) }], structuredContent: out.body, isError: true };
}

/**
 * The prompts a caller may see: reading a prompt is a read-only act on its service, so a token sees
 * those of the services it may call read-only tools on (tools:read, service:<id>[:read], ...), as
 * tools/list shows only the tools it may call. Without authorization, all of them.
 */
function visiblePrompts(ctx: GatewayContext, principal: Principal | undefined) {
  const all = ctx.registry.promptCatalog();
  return principal ? all.filter((e) => allows(principal, e.service, { readOnlyHint: true })) : all;
}

/** The prompts of the downstreams: MCP servers and kit services such as marketplace-mcp (both protocol eras). */
export function listPrompts(ctx: GatewayContext, principal?: Principal): { prompts: Record<string, unknown>[] } {
  return { prompts: visiblePrompts(ctx, principal).map((e) => ({ ...e.prompt, name: e.name })) };
}

/** A prompt the caller may see, by its listed name; one it may not see is answered as one that does not exist. */
function promptEntry(ctx: GatewayContext, name: string, principal: Principal | undefined) {
  const entry = visiblePrompts(ctx, principal).find((e) => e.name === name);
  if (!entry) throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `Unknown prompt "${name.slice(0, 100)}"; prompts/list shows the prompts.`);
  return entry;
}

const completeParams = z.object({
  ref: z.discriminatedUnion('type', [
    z.object({ type: z.literal('ref/prompt'), name: z.string().min(1).max(200) }),
    z.object({ type: z.literal('ref/resource'), uri: z.string().min(1).max(2048) }),
  ]),
  argument: z.object({ name: z.string().min(1).max(200), value: z.string().max(4096) }),
  context: z.object({ arguments: z.record(z.string(), z.string()).optional() }).optional(),
});

const NO_COMPLETION = { completion: { values: [] as string[], hasMore: false } };

/**
 * completion/complete (both eras): a prompt argument is completed by the MCP server that offers the
 * prompt, a resource template's argument by the server that lists the template, when it supports
 * completions; other prompts (kit services, skills) and the gateway's own resources (no templates)
 * have no suggestions. At most 100 values, as the spec allows.
 */
export async function complete(
  ctx: GatewayContext,
  p: Record<string, unknown>,
  signal?: AbortSignal,
  principal?: Principal,
): Promise<{ completion: { values: string[]; total?: number; hasMore?: boolean } }> {
  const parsed = completeParams.safeParse(p);
  if (!parsed.success)
    throw new McpError(
      JSONRPC_CODES.INVALID_PARAMS,
      'completion/complete needs params.ref ({type: "ref/prompt", name} or {type: "ref/resource", uri}) and params.argument ({name, value}).',
    );
  const { ref, argument, context } = parsed.data;
  if (ref.type === 'ref/resource') {
    // a template (or resource) of an MCP server behind the gateway: that server completes its arguments
    const owner = completionOwner(ctx, ref.uri, principal);
    if (owner) return completeAt(ctx, owner, { ref, argument, ...(context ? { context } : {}) }, signal);
    knownResource(ref.uri, JSONRPC_CODES.INVALID_PARAMS);
    return NO_COMPLETION;
  }
  const entry = promptEntry(ctx, ref.name, principal);
  const args = (entry.prompt.arguments ?? []) as { name: string }[];
  if (!args.some((a) => a.name === argument.name))
    throw new McpError(
      JSONRPC_CODES.INVALID_PARAMS,
      `Prompt "${ref.name.slice(0, 100)}" has no argument "${argument.name.slice(0, 100)}".`,
    );
  return completeAt(
    ctx,
    entry.service,
    { ref: { type: 'ref/prompt', name: entry.prompt.name }, argument, ...(context ? { context } : {}) },
    signal,
  );
}

/** The MCP server whose resource template (as listed: the URI template itself) or resource a ref/resource names, when the caller may read it. */
function completionOwner(ctx: GatewayContext, uri: string, principal: Principal | undefined): string | undefined {
  const { resources, templates } = ctx.registry.resourceCatalog();
  const owner =
    templates.find((e) => (e.resource as { uriTemplate: string }).uriTemplate === uri) ??
    resources.find((e) => (e.resource as { uri: string }).uri === uri);
  return owner && !RESOURCE_URIS.has(uri) && mayRead(principal, owner.service) ? owner.service : undefined;
}

/** completion/complete at the downstream that offers the prompt or template (none from one without completions). */
async function completeAt(
  ctx: GatewayContext,
  service: string,
  params: CompleteParams,
  signal: AbortSignal | undefined,
): Promise<{ completion: { values: string[]; total?: number; hasMore?: boolean } }> {
  try {
    const answer = await ctx.registry.get(service)!.upstream.complete(params, { timeoutMs: timeoutAt(ctx, service), signal });
    if (!answer.value) {
      // the server's own JSON-RPC error, as it sent it (as prompts/get's)
      const own = answer.rpcError;
      if (own) throw new ServerRpcError(own.code, own.message, own.data);
      // Kit services have no completions (404); an answer that is not a completion counts as none.
      return NO_COMPLETION;
    }
    const { completion } = answer.value;
    const values = (completion.values as unknown[]).filter((v): v is string => typeof v === 'string').slice(0, 100);
    // hasMore as the server said it (left out when it did), true when values were cut here
    const cut = completion.values.length > values.length;
    return {
      completion: {
        values,
        ...(typeof completion.total === 'number' ? { total: completion.total } : {}),
        ...(cut || typeof completion.hasMore === 'boolean' ? { hasMore: cut || completion.hasMore === true } : {}),
      },
    };
  } catch (err) {
    if (err instanceof McpError) throw err;
    throw new McpError(ERROR_CODES.UPSTREAM_UNAVAILABLE.rpc, `${service} is unavailable: ${(err as Error).message}`);
  }
}

/** prompts/get, forwarded to the downstream that offers the prompt. */
export async function getPrompt(
  ctx: GatewayContext,
  p: Record<string, unknown>,
  signal?: AbortSignal,
  principal?: Principal,
  /** Answers what the MCP server asks its client while it builds the prompt (2026-07-28: input_required). */
  onClientRequest?: ClientRequester,
): Promise<GetPromptResult> {
  if (typeof p.name !== 'string') throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'prompts/get needs params.name (a string).');
  if (p.arguments !== undefined && !isPlainObject(p.arguments))
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'prompts/get params.arguments must be an object of strings.');
  const entry = promptEntry(ctx, p.name, principal);
  const service = entry.service;
  try {
    const answer = await ctx.registry.get(service)!.upstream.getPrompt(entry.prompt.name, (p.arguments ?? {}) as Record<string, unknown>, {
      timeoutMs: timeoutAt(ctx, service),
      signal,
      onClientRequest,
      meta: callersMeta(p._meta),
    });
    if (answer.value) return answer.value;
    const body = answer.json as { error?: unknown } | undefined;
    // the server's own JSON-RPC error, as it sent it (as tools/call's)
    const own = answer.rpcError;
    if (own) throw new ServerRpcError(own.code, own.message, own.data);
    const message = typeof body?.error === 'string' ? body.error : `${service} answered ${answer.status}`;
    // Bad arguments (400) and a prompt gone since the last poll (404) are the caller's params.
    throw new McpError(
      answer.status === 400 || answer.status === 404 ? JSONRPC_CODES.INVALID_PARAMS : ERROR_CODES.UPSTREAM_ERROR.rpc,
      message,
    );
  } catch (err) {
    if (err instanceof McpError) throw err;
    throw new McpError(ERROR_CODES.UPSTREAM_UNAVAILABLE.rpc, `${service} is unavailable: ${(err as Error).message}`);
  }
}

/** A downstream's resources and templates are seen by a caller that may read its service (as its prompts are). */
const mayRead = (principal: Principal | undefined, service: string) => !principal || allows(principal, service, { readOnlyHint: true });

/** resources/list: the gateway's own views, then the resources of the MCP servers behind it (both eras). */
export function listResources(ctx: GatewayContext, principal?: Principal): { resources: Record<string, unknown>[] } {
  const theirs = ctx.registry
    .resourceCatalog()
    .resources.filter((e) => !RESOURCE_URIS.has((e.resource as { uri: string }).uri) && mayRead(principal, e.service));
  return { resources: [...RESOURCES.map((r) => ({ ...r })), ...theirs.map((e) => ({ ...e.resource }))] };
}

/** resources/templates/list: the MCP servers' templates (the gateway's own resources are fixed URIs). */
export function listResourceTemplates(ctx: GatewayContext, principal?: Principal): { resourceTemplates: Record<string, unknown>[] } {
  return {
    resourceTemplates: ctx.registry
      .resourceCatalog()
      .templates.filter((e) => mayRead(principal, e.service))
      .map((e) => ({ ...e.resource })),
  };
}

/** URIs that are the gateway's own to answer (its views, skill files): never another server's. */
const GATEWAYS_OWN = /^(mega|skill):/i;

/** The service behind the gateway that serves a URI: a listed resource, else the first template it matches. */
export function resourceOwner(ctx: GatewayContext, uri: string, principal: Principal | undefined): string | undefined {
  const owner = listedOwner(ctx, uri);
  return owner !== undefined && mayRead(principal, owner) ? owner : undefined;
}

/**
 * The service to watch a URI at (resources/subscribe, a listen stream's resourceSubscriptions): its
 * owner, else (no list or template shows it) the only third-party MCP server behind the gateway
 * when it offers resources (lists some, none refused by the limits), which decides whether it
 * watches a URI of its own it does not list, as it would directly (docs/gateway.md, "Names and
 * URIs no list shows"). Reading such a URI stays not found: the gateway reads only what is listed.
 */
export function watchedOwner(ctx: GatewayContext, uri: string, principal: Principal | undefined): string | undefined {
  const owner = listedOwner(ctx, uri);
  if (owner !== undefined) return mayRead(principal, owner) ? owner : undefined;
  const sole = ctx.config.MCP_FORWARD_UNLISTED ? ctx.registry.soleServer : undefined;
  if (!sole?.healthy || GATEWAYS_OWN.test(uri) || sole.refusals.resources || sole.refusals.resourceTemplates) return undefined;
  return (sole.resources.length || sole.resourceTemplates.length) && mayRead(principal, sole.id) ? sole.id : undefined;
}

function listedOwner(ctx: GatewayContext, uri: string): string | undefined {
  const { resources, templates } = ctx.registry.resourceCatalog();
  const listed = resources.find((e) => (e.resource as { uri: string }).uri === uri);
  const owner =
    listed ??
    templates.find((e) => {
      try {
        return new UriTemplate((e.resource as { uriTemplate: string }).uriTemplate).match(uri) !== null;
      } catch {
        return false; // a template the SDK cannot parse matches nothing
      }
    });
  return owner?.service;
}

/**
 * resources/read (both protocol eras): the gateway's own views, or the MCP server that lists the URI
 * (or a template it matches). An unknown URI is -32002 for 2025-era sessions and -32602 (Invalid
 * Params, SEP-2164) for 2026-07-28, the URI in data either way.
 */
export async function readResource(
  ctx: GatewayContext,
  uri: unknown,
  notFoundCode: number = JSONRPC_CODES.RESOURCE_NOT_FOUND,
  principal?: Principal,
  signal?: AbortSignal,
  /** Answers what the MCP server asks its client while it reads the resource (2026-07-28: input_required). */
  onClientRequest?: ClientRequester,
  /** The request's `_meta` (the caller's own keys go on to the server: callersMeta). */
  meta?: unknown,
): Promise<{ contents: Record<string, unknown>[] }> {
  if (typeof uri !== 'string') throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.uri must be a string (a resource URI).');
  // skill://<service-id>/...: a skill file, read from that service (src/skills.ts)
  const skillFile = await skillsOf(ctx).read(uri, principal, notFoundCode, signal);
  if (skillFile) return skillFile;
  const views: Record<string, () => unknown> = {
    'mega://health': () => healthView(ctx),
    'mega://services': () => servicesView(ctx),
    'mega://schema': () => schemaView(ctx),
  };
  if (RESOURCE_URIS.has(uri)) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(views[uri]()) }] };
  const service = uri.length <= 2048 ? resourceOwner(ctx, uri, principal) : undefined;
  if (!service) throw resourceNotFound(uri, notFoundCode);
  const answer = await ctx.registry.get(service)!.upstream.readResource(uri, {
    timeoutMs: timeoutAt(ctx, service),
    signal,
    onClientRequest,
    meta: callersMeta(meta),
  });
  if (answer.value) return { ...answer.value, contents: ownContents(ctx, service, uri, answer.value.contents) };
  const body = answer.json as { error?: unknown } | undefined;
  const own = answer.rpcError;
  if (own?.code === JSONRPC_CODES.RESOURCE_NOT_FOUND || answer.status === 400) throw resourceNotFound(uri, notFoundCode);
  // the server's own JSON-RPC error, as it sent it (as tools/call's)
  if (own) throw new ServerRpcError(own.code, own.message, own.data);
  throw new McpError(
    JSONRPC_CODES.INTERNAL_ERROR,
    `${service} could not read ${uri.slice(0, 200)}: ${String((body as { error?: unknown } | undefined)?.error ?? `status ${answer.status}`).slice(0, 300)}`,
  );
}

/**
 * Provenance: a server answers a read of `uri` with content of that URI only. Content naming another
 * (another server's, a mega:// view) would let it plant what a client files under that URI; the
 * whole answer is refused as the call's UPSTREAM_ERROR.
 */
function ownContents(ctx: GatewayContext, service: string, uri: string, contents: unknown[]): Record<string, unknown>[] {
  const other = contents.find((c) => !isPlainObject(c) || c.uri !== uri);
  if (other === undefined) return contents as Record<string, unknown>[];
  const named = isPlainObject(other) && typeof other.uri === 'string' ? other.uri.slice(0, 200) : '(no URI)';
  const s = ctx.registry.get(service);
  if (s) s.provenance.refusedReads += 1;
  ctx.logger.warn(`${service} answered a read of one resource with content of another; refused`, { asked: uri.slice(0, 200), named });
  throw new McpError(
    ERROR_CODES.UPSTREAM_ERROR.rpc,
    `${service} answered resources/read of ${uri.slice(0, 200)} with content for another URI (${named}); the gateway refuses it.`,
    { uri: uri.slice(0, 200) },
  );
}

export const resourceNotFound = (uri: string, code: number) =>
  new McpError(code, `Resource not found: ${uri.slice(0, 200)}. resources/list and resources/templates/list show what can be read.`, {
    uri: uri.slice(0, 200),
  });

/** `uri` when it names one of the gateway's resources; otherwise the not-found error (the URI in data). */
export function knownResource(uri: unknown, notFoundCode: number = JSONRPC_CODES.RESOURCE_NOT_FOUND): string {
  if (typeof uri !== 'string') throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.uri must be a string (a resource URI).');
  if (RESOURCE_URIS.has(uri)) return uri;
  throw new McpError(notFoundCode, `Resource not found: ${uri.slice(0, 200)}. resources/list shows the three resources.`, {
    uri: uri.slice(0, 200),
  });
}
