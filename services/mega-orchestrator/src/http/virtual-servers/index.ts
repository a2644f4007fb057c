/**
 * Virtual servers (issue 30, part 1): named endpoints of the gateway, /servers/{name}/mcp, each
 * exposing a chosen set of the gateway's tools, renamed, described, with fixed or default arguments.
 *
 * No MCP code of their own: each server is a view of the gateway's context (McpContext) whose
 * registry answers the server's catalog (view.ts), whose dispatcher maps a call of one of its tools
 * to the backing tool (the gateway's own dispatcher then routes it: scopes, breaker, history, audit),
 * and whose list-change streams and MCP sessions are its own. The handlers of /mcp (native, both
 * protocol eras) run on that view unchanged. /mcp itself never looks here: nothing on its path.
 */
import { AppError, errorEnvelope, toAppError, type Logger } from '@mcp-fleet/kit';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Catalog } from '../../core/catalog';
import { Discovery } from '../../core/discovery';
import { paramHeaderScans } from '../../mcp/rev-2026-07-28/param-headers';
import type { McpContext } from '../../mcp/context';
import type { CallRequest, CallResult, Dispatcher } from '../../core/dispatch';
import type { McpSessionTransport } from '../../mcp/rev-2025-11-25/session-transport';
import { ListenStreams } from '../../mcp/subscriptions';
import type { Registry } from '../../core/registry';
import { mcpHandlers, type McpHandlers } from '../routes/mcp';
import type { TaskFollowers } from '../../core/tasks';
import { RESOURCES_CHANGED_BY } from '../../core/types';
import type { VirtualServerDef } from '../../core/virtual-servers/definition';
import { DefinitionFile, type FileStatus } from '../../core/virtual-servers/file';
import type { ServerReport, VirtualServerReports } from '../../core/virtual-servers/report';
import { buildView, callArguments, type ServerView } from '../../core/virtual-servers/view';
import { SERVICE_ID, VERSION } from '../../core/config';

export { SERVER_NAME, virtualServerSchema, type VirtualServerDef } from '../../core/virtual-servers/definition';
export { readDefinitionFile } from '../../core/virtual-servers/file';

/** The path of a virtual server's MCP endpoint. */
export const endpointOf = (name: string) => `/servers/${name}/mcp`;
/** The scope a token needs for a virtual server when authorization is on (beside the tool scopes of each call). */
export const serverScope = (name: string) => `server:${name}`;

export interface VirtualServersOptions {
  ctx: McpContext;
  file: string;
  /** The file as read at start (readDefinitionFile). */
  initial: { text: string; servers: Map<string, VirtualServerDef> };
  /** The MCP session transport of one server, built around its view of the gateway as /mcp's is built around the gateway (app.ts). */
  transport: (view: McpContext) => McpSessionTransport;
  validator: jsonSchemaValidator;
}

const NO_PROMPTS = () => [];
const NO_RESOURCES = () => ({ resources: [], templates: [] });

class VirtualServer {
  readonly ctx: McpContext;
  readonly listen: ListenStreams;
  readonly transport: McpSessionTransport;
  readonly handlers: McpHandlers;
  private built?: { real: Catalog; def: VirtualServerDef; view: ServerView };
  /** The signature of the list its clients were last told about. */
  private told: string;

  constructor(
    readonly name: string,
    public def: VirtualServerDef,
    private readonly options: VirtualServersOptions,
    /** The search over a catalog (discovery: meta), shared by the virtual servers. */
    private readonly discovery: () => Discovery,
  ) {
    const { ctx } = options;
    this.listen = new ListenStreams({
      maxStreams: ctx.config.MCP_MAX_LISTEN_STREAMS,
      keepAliveMs: ctx.config.MCP_LISTEN_KEEPALIVE_MS,
      logger: ctx.logger,
      serverInfo: { name: SERVICE_ID, version: VERSION },
    });
    // Its catalog, and none of the gateway's prompts or MCP servers' resources: a virtual server serves tools.
    const registry = new Proxy(ctx.registry, {
      get: (target, prop) => {
        if (prop === 'catalog') return this.view().catalog;
        if (prop === 'promptCatalog') return NO_PROMPTS;
        if (prop === 'resourceCatalog') return NO_RESOURCES;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const dispatcher = Object.create(ctx.dispatcher) as Dispatcher;
    dispatcher.call = (req) => this.call(req);
    this.ctx = Object.assign(Object.create(ctx) as McpContext, {
      registry,
      dispatcher,
      listen: this.listen,
      mcpSessionCount: () => this.transport.count,
      virtualServer: name,
    });
    // Its own mode (default full, whatever MCP_DISCOVERY says): meta searches and calls its own catalog only.
    Object.defineProperty(this.ctx, 'discovery', { get: () => (this.def.discovery === 'meta' ? this.discovery() : undefined) });
    this.transport = options.transport(this.ctx);
    this.handlers = mcpHandlers(this.ctx, this.transport);
    this.told = this.view().catalog.signature;
    if (def.discovery === 'meta') this.discovery().prepare(this.view().catalog);
  }

  /** Its view of the gateway's catalog now (rebuilt when either changed). */
  view(): ServerView {
    const { registry, tasks } = this.options.ctx;
    const real = registry.catalog;
    if (this.built?.real !== real || this.built.def !== this.def)
      this.built = { real, def: this.def, view: buildView(this.def, real, registry, tasks, this.options.validator) };
    return this.built.view;
  }

  /** Tells its clients (its sessions, its listen streams; nobody else's) when what they see changed. */
  changed(): void {
    const { catalog } = this.view();
    // the search index of a meta server is built here, off the request path
    if (this.def.discovery === 'meta') this.discovery().prepare(catalog);
    const signature = catalog.signature;
    if (signature === this.told) return;
    this.told = signature;
    this.transport.notifyToolsChanged();
    this.listen.notify('tools');
  }

  /** A call of one of its tools, as the backing tool gets it, through the gateway's dispatcher. */
  private async call(req: CallRequest): Promise<CallResult> {
    const started = performance.now();
    const view = this.view();
    const vt = view.tools.get(req.tool);
    try {
      if (!vt)
        throw new AppError(
          'UNKNOWN_TOOL',
          `Virtual server ${this.name} has no tool named "${req.tool.slice(0, 100)}"; its tools/list shows its tools.`,
        );
      if (vt.problem)
        throw new AppError(
          'NOT_CONFIGURED',
          `${req.tool} on virtual server ${this.name} is not served: ${vt.problem}. Its definition must be fixed (VIRTUAL_SERVERS_FILE or PUT /admin/servers/${this.name}).`,
        );
      const out = await this.options.ctx.dispatcher.call({
        ...req,
        tool: vt.def.tool,
        args: callArguments(this.name, req.tool, vt, req.args),
      });
      if (out.code !== 'UNKNOWN_TOOL') return out;
      const reason = view.hidden.find((h) => h.name === req.tool)?.reason ?? 'no service offers it now';
      // The name stays this server's: its backing tool is away, not the tool unknown.
      throw new AppError(
        'UPSTREAM_UNAVAILABLE',
        `${req.tool} on virtual server ${this.name} is backed by ${vt.def.tool}, which is not served now (${reason}); GET /services shows the services.`,
        { retryAfter: Math.max(1, Math.ceil(this.options.ctx.config.HEALTH_POLL_MS / 1000)) },
      );
    } catch (err) {
      const e = toAppError(err);
      return {
        ok: false,
        status: e.status,
        body: errorEnvelope(SERVICE_ID, e),
        code: e.code,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        ...(e.retryAfter !== undefined ? { retryAfter: e.retryAfter } : {}),
      };
    }
  }

  report(): ServerReport {
    const view = this.view();
    return {
      name: this.name,
      endpoint: endpointOf(this.name),
      ...(this.def.description ? { description: this.def.description } : {}),
      tools: view.catalog.entries.map((e) => e.name),
      hidden: view.hidden,
    };
  }

  /** Its sessions and listen streams end (the server was removed, or the gateway stops). */
  close(): Promise<void> {
    return this.transport.close();
  }
}

export class VirtualServers implements VirtualServerReports {
  private readonly servers = new Map<string, VirtualServer>();
  readonly file: DefinitionFile;
  private readonly logger: Logger;
  private readonly changedResources = new Set<string>();
  private ownDiscovery?: Discovery;

  constructor(private readonly options: VirtualServersOptions) {
    const { ctx } = options;
    this.logger = ctx.logger;
    this.file = new DefinitionFile(options.file, options.initial.text, (servers) => this.apply(servers), ctx.logger);
    this.apply(options.initial.servers);
    const registry: Registry = ctx.registry;
    registry.on('catalog', () => {
      for (const s of this.servers.values()) s.changed();
      this.resourcesChanged(RESOURCES_CHANGED_BY.catalog);
    });
    registry.on('health', () => this.resourcesChanged(RESOURCES_CHANGED_BY.health));
    ctx.tasks.on('task', ({ task }: { task: { taskId: string } & Record<string, unknown> }) => {
      for (const s of this.servers.values()) s.listen.notifyTask(task);
    });
  }

  /**
   * The search of servers in meta mode: the gateway's own when MCP_DISCOVERY=meta (one vector cache),
   * else one of their own with the local embedder. Never set on the gateway's context: /mcp keeps its mode.
   */
  private discovery(): Discovery {
    const { ctx } = this.options;
    return (
      ctx.discovery ??
      (this.ownDiscovery ??= new Discovery({
        logger: ctx.logger,
        hidden: (catalog, name) => paramHeaderScans(catalog, ctx.logger).get(name)?.valid === false,
      }))
    );
  }

  /** Follows the file's changes (VIRTUAL_SERVERS_FILE). */
  watch(): void {
    this.file.watch();
  }

  get(name: string): VirtualServer | undefined {
    return this.servers.get(name);
  }

  get size(): number {
    return this.servers.size;
  }

  /** The definitions in force: servers added, changed (their clients told) or removed (their sessions ended). */
  private apply(defs: ReadonlyMap<string, VirtualServerDef>): void {
    for (const [name, server] of this.servers)
      if (!defs.has(name)) {
        this.servers.delete(name);
        void server.close();
        this.logger.info(`virtual server ${name} removed; its sessions end`);
      }
    for (const [name, def] of defs) {
      const server = this.servers.get(name);
      if (!server) this.servers.set(name, new VirtualServer(name, def, this.options, () => this.discovery()));
      else if (JSON.stringify(server.def) !== JSON.stringify(def)) {
        server.def = def;
        server.changed();
      }
    }
  }

  /** The gateway's resources (mega://) changed: the sessions and listen streams of every virtual server that watch them hear it, once per refresh. */
  private resourcesChanged(uris: readonly string[]): void {
    if (this.changedResources.size === 0)
      setImmediate(() => {
        const list = [...this.changedResources];
        this.changedResources.clear();
        for (const s of this.servers.values()) {
          s.transport.notifyResourcesUpdated(list);
          s.listen.notifyResources(list);
        }
      });
    for (const uri of uris) this.changedResources.add(uri);
  }

  /** The tasks the task manager reads for listeners (PostgreSQL): those followed on /mcp and on every virtual server. */
  followers(main: TaskFollowers): TaskFollowers {
    const all = () => [main, ...[...this.servers.values()].map((s) => s.listen.followedTasks)];
    return {
      has: (id) => all().some((f) => f.has(id)),
      keys: () => new Set(all().flatMap((f) => [...f.keys()])).values(),
    };
  }

  report(): ServerReport[] {
    return [...this.servers.values()].map((s) => s.report());
  }

  definition(name: string): VirtualServerDef | undefined {
    return this.servers.get(name)?.def;
  }

  status(): FileStatus {
    return this.file.status();
  }

  /** Sets (creates or replaces) one server's definition in the file and in force. */
  async put(name: string, def: VirtualServerDef): Promise<{ created: boolean }> {
    const created = !this.servers.has(name);
    await this.file.change(name, def);
    return { created };
  }

  /** Removes one server from the file and from service; false when there was none. */
  async delete(name: string): Promise<boolean> {
    if (!this.servers.has(name)) return false;
    await this.file.change(name, undefined);
    return true;
  }

  async close(): Promise<void> {
    this.file.close();
    await Promise.all([...this.servers.values()].map((s) => s.close()));
    this.servers.clear();
  }
}
