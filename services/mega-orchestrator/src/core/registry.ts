import { EventEmitter } from 'node:events';
import { createHash } from 'node:crypto';
import { isPlainObject, TOOL_NAME, type Logger } from '@mcp-fleet/kit';
import { SERVICES, type ServiceEntry } from '@mcp-fleet/inventory';
import { CircuitBreaker } from '../downstream/breaker';
import { buildCatalog, type Catalog, type TrustTier } from './catalog';
import { boundList, LIST_LIMIT_DEFAULTS, listBackoffMs, type ListKind, type ListLimits, type ListRefusal } from './list-limits';
import { changedFields, definitionOf, type ChangedTool, type PinMode, type PinStore } from './pins';
import type { DownstreamPrompt, DownstreamResource, DownstreamSpec, DownstreamTool, ServiceHealth } from './types';
import type { StdioLauncher } from '../downstream/stdio-sandbox';
import { DownstreamClient } from '../downstream/http-client';
import { DownstreamFailure, listRoute, type Downstream, type HealthAnswer, type ListAnswer, type ListName } from '../downstream/downstream';
import { McpDownstream } from '../downstream/mcp';
import { VERSION } from './config';

export interface RegistryOptions {
  pollMs: number;
  healthTimeoutMs: number;
  connections: number;
  maxResponseBytes: number;
  breakerFailures: number;
  breakerCooldownMs: number;
  logger: Logger;
  /** First restart delay of a stdio MCP server that died (doubles per failure, up to 30 s). */
  mcpRestartBackoffMs?: number;
  /** How stdio MCP servers are started (stdio-sandbox.ts; sandboxed by default). */
  stdioLauncher?: StdioLauncher;
  /** Plain tool calls over kit services' persistent channels (DOWNSTREAM_CHANNEL). */
  channel?: boolean;
  /** Where loopback kit services offer their channel on a Unix socket too (CHANNEL_SOCKET_DIR). */
  channelSocketDir?: string;
  /** MCP servers' elicitation, sampling and roots requests go to the caller of the call (MCP_FORWARD_CLIENT_REQUESTS). */
  forwardClientRequests?: boolean;
  /** How long a caller has to answer one of them (MCP_INPUT_TIMEOUT_MS). */
  inputTimeoutMs?: number;
  /** How long in all an MCP server's call may run while it reports progress (DOWNSTREAM_PROGRESS_MAX_MS). */
  progressMaxMs?: number;
  /** The fleet's inventory: its services are the fleet's tier and its tool names the fleet's (default: the fleet's own). */
  inventory?: readonly ServiceEntry[];
  /** Caps on what one downstream lists (DOWNSTREAM_MAX_*; an mcpServers entry's `limits` override them). */
  listLimits?: ListLimits;
  /** How long an MCP server's list may take in all (DOWNSTREAM_TIMEOUT_MS; its entry's timeoutMs wins): SlowList. */
  listTimeoutMs?: number;
}

/**
 * An MCP server's list not read within HEALTH_TIMEOUT_MS: it goes on in the background, up to the
 * server's call time limit, and the service is polled again when it ends (Registry.mcpList).
 */
class SlowList extends Error {
  constructor(
    readonly kind: ListName,
    readonly waitedMs: number,
    readonly limitMs: number,
  ) {
    super(
      `its ${listRoute(kind).slice(1)} has not answered within HEALTH_TIMEOUT_MS (${waitedMs} ms); still waiting for it (up to ${limitMs} ms)`,
    );
  }
}

/** An MCP server said a resource the gateway subscribed to changed ('resource-updated'). */
export interface ResourceUpdate {
  service: string;
  uri: string;
}

export interface PollResult {
  at: string;
  ok: boolean;
  latencyMs: number;
  reason?: string;
  /** The status the downstream's /health reported (healthy, degraded). */
  reported?: string;
}

/** Everything the gateway knows about one downstream. */
export class ServiceState {
  health: ServiceHealth = 'unknown';
  reason?: string = 'not checked yet';
  lastChecked?: number;
  lastPoll?: PollResult;
  /** Tools offered now (kept from the last good poll while unhealthy, for the debug view). */
  tools: DownstreamTool[] = [];
  /** Prompts the downstream offers: an MCP server's, or a kit service's GET /prompts/list (404: none). */
  prompts: DownstreamPrompt[] = [];
  /** An MCP server's resources and resource templates (kit services offer none). */
  resources: DownstreamResource[] = [];
  resourceTemplates: DownstreamResource[] = [];
  toolsByName = new Map<string, DownstreamTool>();
  /** Names declared by the inventory or ever seen: a call to one while down is UPSTREAM_UNAVAILABLE. */
  readonly known = new Set<string>();
  toolsSignature = '';
  promptsSignature = '';
  polls = { ok: 0, failed: 0 };
  /**
   * When it last answered anything (performance.now()): a call's envelope, of any code, or a good
   * poll. A call that times out while the service was heard from meanwhile is no sign of a failing
   * service (a slow tool, or a caller asking for slow work), so it does not count against the breaker.
   */
  heardAt = -Infinity;
  readonly breaker: CircuitBreaker;
  readonly upstream: Downstream;
  readonly primaryFor: string[];
  /** The fleet's own service (the inventory's), or a third-party MCP server (declared in mcpServers). */
  readonly tier: TrustTier;
  /** What a change of a pinned tool definition does here (off for the fleet's own services). */
  readonly pinMode: PinMode;
  readonly limits: ListLimits;
  /** What each list lost to the limits at its last read. */
  refusals: Partial<Record<ListKind, ListRefusal>> = {};
  /** Lists that broke a cap are not read again before this (listBackoffMs). */
  listsNotBefore = 0;
  listBackoffMs = 0;
  /** Its tools as last listed (within the limits), and their signature: pins are checked again from it. */
  listed: Record<string, unknown>[] = [];
  listedSignature = '';
  /** Tools whose definition differs from their pin: withheld (pin: hold) or served and reported (pin: notify). */
  held = new Map<string, ChangedTool>();
  changed = new Map<string, ChangedTool>();
  /** Announcements (resources/updated) and resources/read answers refused for naming URIs it does not own. */
  provenance = { refusedUpdates: 0, refusedReads: 0 };

  constructor(
    readonly spec: DownstreamSpec,
    readonly order: number,
    options: RegistryOptions,
    onToolsChanged: () => void = () => undefined,
    onResourceUpdated: (uri: string) => void = () => undefined,
    onElicitationComplete: (elicitationId: string) => void = () => undefined,
  ) {
    const fleet = (options.inventory ?? SERVICES).some((e) => e.id === spec.id);
    this.tier = spec.mcp && !fleet ? 'third-party' : 'fleet';
    this.pinMode = this.tier === 'third-party' ? (spec.pin ?? 'hold') : 'off';
    this.limits = { ...(options.listLimits ?? LIST_LIMIT_DEFAULTS), ...spec.limits };
    this.upstream = spec.mcp
      ? new McpDownstream(spec.mcp, {
          id: spec.id,
          logger: options.logger,
          version: VERSION,
          maxResponseBytes: options.maxResponseBytes,
          listCaps: { tools: this.limits.tools, prompts: this.limits.prompts, resources: this.limits.resources },
          ...(spec.secrets?.length ? { secrets: spec.secrets, shownUrl: spec.url } : {}),
          restartBackoffMs: options.mcpRestartBackoffMs,
          ...(options.stdioLauncher ? { launch: options.stdioLauncher } : {}),
          forwardClientRequests: options.forwardClientRequests,
          inputTimeoutMs: options.inputTimeoutMs,
          progressMaxMs: options.progressMaxMs,
          onToolsChanged,
          onResourceUpdated,
          onElicitationComplete,
        })
      : new DownstreamClient(spec.url, {
          connections: options.connections,
          channel: options.channel,
          channelSocketDir: options.channelSocketDir,
          maxResponseBytes: options.maxResponseBytes,
          connectTimeoutMs: Math.min(options.healthTimeoutMs, 10_000),
          headers: spec.headers,
        });
    this.breaker = new CircuitBreaker({ failureThreshold: options.breakerFailures, cooldownMs: options.breakerCooldownMs });
    this.primaryFor = [...(spec.primaryFor ?? [])];
    for (const t of spec.tools ?? []) this.known.add(t);
  }

  get id(): string {
    return this.spec.id;
  }

  get healthy(): boolean {
    return this.health === 'healthy';
  }

  /** Why calls to it fail fast, for errors. */
  unavailableReason(): string {
    if (this.health === 'unknown') return 'it has not been checked yet';
    return this.reason ?? 'it is unhealthy';
  }
}

function toTool(raw: unknown): DownstreamTool | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const t = raw as Record<string, unknown>;
  if (typeof t.name !== 'string' || t.name === '') return undefined;
  const schema =
    typeof t.inputSchema === 'object' && t.inputSchema !== null && !Array.isArray(t.inputSchema)
      ? (t.inputSchema as Record<string, unknown>)
      : { type: 'object' };
  return {
    name: t.name,
    ...(typeof t.title === 'string' ? { title: t.title } : {}),
    description: typeof t.description === 'string' ? t.description : '',
    inputSchema: schema.type === 'object' ? schema : { ...schema, type: 'object' },
    ...(isPlainObject(t.outputSchema) ? { outputSchema: t.outputSchema } : {}),
    annotations: typeof t.annotations === 'object' && t.annotations !== null ? (t.annotations as DownstreamTool['annotations']) : {},
    ...executionOf(t.execution),
    ...iconsAndMeta(t),
  };
}

/**
 * A tool name the gateway can alias: up to 128 characters (2025-11-25's limit), none a control
 * character, at least one letter or digit. 2025-11-25 allows letters, digits, `_`, `-` and `.`;
 * servers of the revisions before it, which set no rule, also use `/`, `:` and spaces.
 */
const ALIASABLE = /^(?=.*[a-zA-Z0-9])[^\p{Cc}]{1,128}$/u;

/**
 * The catalog's name of an MCP server's tool whose own name model APIs refuse (a dot, a slash, a
 * space, over 64 characters): each character but letters, digits, `_` and `-` as `_`, and past 64
 * characters the first 55 and a hash of the whole name. Undefined for a name with a control
 * character, none of a letter or digit, or over 128 characters.
 */
export function toolAlias(name: string): string | undefined {
  if (!ALIASABLE.test(name)) return undefined;
  const plain = name.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (plain.length <= 64) return plain;
  return `${plain.slice(0, 55)}_${createHash('sha1').update(name).digest('hex').slice(0, 8)}`;
}

/** A listed tool's or prompt's `icons` and `_meta`, kept as declared when they have the revision's shape (an array, an object). */
function iconsAndMeta(t: Record<string, unknown>): { icons?: unknown[]; _meta?: Record<string, unknown> } {
  return {
    ...(Array.isArray(t.icons) ? { icons: t.icons } : {}),
    ...(isPlainObject(t._meta) ? { _meta: t._meta } : {}),
  };
}

const TASK_SUPPORT = new Set(['forbidden', 'optional', 'required']);

/** MCP's `execution` of a listed tool, kept when its taskSupport is one of the three values (other fields ride along). */
function executionOf(raw: unknown): { execution?: DownstreamTool['execution'] } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
  const e = raw as Record<string, unknown>;
  if (e.taskSupport !== undefined && !TASK_SUPPORT.has(e.taskSupport as string)) return {};
  return { execution: e as DownstreamTool['execution'] };
}

/** A downstream that became healthy or unhealthy ('service' event). */
export interface ServiceChange {
  service: string;
  healthy: boolean;
  reason?: string;
  tools?: number;
}

/**
 * The downstream registry: polls every service's /health and, when healthy, its /tools/list, and
 * rebuilds the catalog. Emits 'catalog' when the listed tools change, 'prompts' when the served
 * prompts change, 'health' when a service comes or goes, and 'service' (a ServiceChange) for the
 * one that did.
 */
export class Registry extends EventEmitter {
  readonly services: ServiceState[];
  /**
   * The third-party MCP server behind the gateway when there is exactly one (the fleet's own services
   * aside): a tool name or resource URI no list shows can be only its own, and goes to it.
   */
  readonly soleServer?: ServiceState;
  private readonly byId = new Map<string, ServiceState>();
  catalog: Catalog;
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;
  private readonly suspects = new Set<string>();
  private suspectTimer?: NodeJS.Timeout;
  private closed = false;
  private readonly warned = new Set<string>();
  /** Which downstreams' prompt lists are served now; 'prompts' is emitted when it changes. */
  private servedPrompts = '';
  /** Every service's health as last published (a 'health' event when it changes). */
  private publishedHealth = '';
  private servedResources = '';
  /** The catalog last built and what it was built from (build()). */
  private built?: { inputs: string; catalog: Catalog };
  /** How many catalogs were built (build() found its inputs changed), for /debug/cache. */
  private builds = 0;
  /** The fleet's tool names (the inventory's): a third-party tool of such a name is never plain. */
  readonly fleetNames: ReadonlySet<string>;
  /** Tool pins (usePins): third-party tool definitions as first seen or approved. */
  private pins?: PinStore;
  /** The pinned tool names, known from the first poll on (a restarted gateway gives no plain name away meanwhile). */
  private pinnedNames?: Promise<void>;

  constructor(
    specs: readonly DownstreamSpec[],
    private readonly options: RegistryOptions,
  ) {
    super();
    this.fleetNames = new Set((options.inventory ?? SERVICES).flatMap((e) => e.tools));
    this.services = specs.map(
      (spec, i) =>
        new ServiceState(
          spec,
          i,
          options,
          () => this.suspect(spec.id),
          (uri) => this.emit('resource-updated', { service: spec.id, uri } satisfies ResourceUpdate),
          (elicitationId) => this.emit('elicitation-complete', elicitationId),
        ),
    );
    for (const s of this.services) {
      if (this.byId.has(s.id)) throw new Error(`downstream ${s.id} is registered twice`);
      this.byId.set(s.id, s);
    }
    const strangers = this.services.filter((s) => s.tier === 'third-party');
    if (strangers.length === 1) this.soleServer = strangers[0];
    this.catalog = this.build();
    this.publishedHealth = this.services.map((s) => s.health).join(',');
  }

  get(id: string): ServiceState | undefined {
    return this.byId.get(id);
  }

  /** Where tool pins are kept (the gateway's store); without it third-party tools are not pinned. */
  usePins(store: PinStore): void {
    this.pins = store;
  }

  /** The pin store in use (the admin routes approve through it). */
  get pinStore(): PinStore | undefined {
    return this.pins;
  }

  /** A pin of this server changed (an approval): its tools are checked again and the catalog rebuilt, without reading its list. */
  async recheckPins(id: string): Promise<void> {
    const s = this.byId.get(id);
    if (!s) return;
    await this.evaluateTools(s);
    this.publish();
  }

  /** Poll now and every pollMs. */
  start(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), this.options.pollMs);
    this.timer.unref();
  }

  /** Poll every service now (after any poll already running) and rebuild the catalog. */
  refresh(): Promise<void> {
    const next = (this.round ?? Promise.resolve()).then(() => this.pollServices(this.services));
    this.round = next.catch(() => undefined);
    return next;
  }

  /** A call just failed to connect: re-check that service soon instead of waiting for the next round. */
  suspect(id: string): void {
    if (this.closed) return;
    this.suspects.add(id);
    if (this.suspectTimer) return;
    this.suspectTimer = setTimeout(() => {
      this.suspectTimer = undefined;
      const list = this.services.filter((s) => this.suspects.has(s.id));
      this.suspects.clear();
      const next = (this.round ?? Promise.resolve()).then(() => this.pollServices(list));
      this.round = next.catch(() => undefined);
    }, 50);
    this.suspectTimer.unref();
  }

  /**
   * Polls these services, publishing what each poll finds as soon as it ends: one slow downstream
   * (a stdio server still starting, a probe waiting out HEALTH_TIMEOUT_MS) does not keep the others'
   * tools out of the catalog until the whole round is over.
   */
  private async pollServices(list: readonly ServiceState[]): Promise<void> {
    if (this.closed) return;
    this.pinnedNames ??= this.loadPinnedNames();
    await this.pinnedNames;
    await Promise.all(
      list.map(async (s) => {
        await this.pollOne(s);
        this.publish();
      }),
    );
  }

  /** Rebuilds the catalog (the same object while nothing in it changed) and tells what changed. */
  private publish(): void {
    if (this.closed) return;
    const previous = this.catalog;
    const next = this.build();
    if (next.signature !== previous.signature) {
      this.catalog = next;
      this.emit('catalog', this.catalog);
    }
    const health = this.services.map((s) => s.health).join(',');
    if (health !== this.publishedHealth) {
      this.publishedHealth = health;
      this.emit('health');
    }
    // The served prompts change when a downstream's list changes or it comes or goes.
    const prompts = this.promptSignature();
    if (prompts !== this.servedPrompts) {
      this.servedPrompts = prompts;
      this.emit('prompts');
    }
    // So do the served resources (an MCP server's list changed, or it came or went).
    const resources = this.resourceSignature();
    if (resources !== this.servedResources) {
      this.servedResources = resources;
      this.emit('resources');
    }
  }

  private resourceSignature(): string {
    const { resources, templates } = this.resourceCatalog();
    return createHash('sha1')
      .update(JSON.stringify([resources, templates]))
      .digest('base64url');
  }

  private promptSignature(): string {
    return this.services
      .filter((s) => s.healthy && s.prompts.length)
      .map((s) => `${s.id}:${s.promptsSignature}`)
      .join(',');
  }

  /**
   * The catalog, built again only when what it is built from changed: each service's health, tool
   * list (its signature) and the names it is known by (a set that only grows). The services, their
   * tiers and primary names are fixed at start. A poll round publishes after every service's poll,
   * so with the fleet's two dozen services most builds would make the same catalog again.
   */
  private build(): Catalog {
    const inputs = this.services.map((s) => `${s.healthy ? 1 : 0}${s.toolsSignature}:${s.known.size}`).join(',');
    if (this.built?.inputs === inputs) return this.built.catalog;
    const catalog = buildCatalog(
      this.services.map((s) => ({
        id: s.id,
        healthy: s.healthy,
        tools: s.healthy ? s.tools : [],
        known: s.known,
        primaryFor: s.primaryFor,
        signature: s.toolsSignature,
        tier: s.tier,
      })),
      Date.now(),
      this.fleetNames,
    );
    for (const skip of catalog.skipped) {
      const key = `${skip.service}/${skip.name}`;
      if (this.warned.has(key)) continue;
      this.warned.add(key);
      this.options.logger.warn(`catalog skips ${skip.name} of ${skip.service}: ${skip.reason}`);
    }
    this.built = { inputs, catalog };
    this.builds += 1;
    return catalog;
  }

  /** How many catalogs were built so far (build() found its inputs changed), for /debug/cache. */
  get catalogBuilds(): number {
    return this.builds;
  }

  /**
   * An MCP server's lists being read (mcpList), by `<id> <list>`: the read, and whether a poll gave up
   * waiting for it (then the service is polled again when it ends).
   */
  private readonly lists = new Map<string, { read: Promise<{ answer: ListAnswer } | { error: unknown }>; outlived: boolean }>();

  /**
   * One of an MCP server's lists. A server may take longer to list than to answer ping (one that asks
   * an API for its tools, or starts a browser): a list not read within HEALTH_TIMEOUT_MS is not given
   * up but goes on, up to the server's call time limit; this poll throws SlowList, and the service is
   * polled again as soon as the list ends, that poll taking its answer.
   */
  private async mcpList(s: ServiceState, kind: ListName): Promise<ListAnswer> {
    const key = `${s.id} ${kind}`;
    const { healthTimeoutMs } = this.options;
    const limitMs = Math.max(healthTimeoutMs, s.spec.timeoutMs ?? this.options.listTimeoutMs ?? healthTimeoutMs);
    let entry = this.lists.get(key);
    if (!entry) {
      const read = s.upstream.list(kind, { timeoutMs: limitMs }).then(
        (answer) => ({ answer }),
        (error: unknown) => ({ error }),
      );
      const started = { read, outlived: false };
      void read.then(() => started.outlived && this.suspect(s.id));
      this.lists.set(key, (entry = started));
    }
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      entry.read,
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), healthTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (waited === undefined) {
      const slow = new SlowList(kind, healthTimeoutMs, limitMs);
      if (!entry.outlived) this.options.logger.info(`${s.id}: ${slow.message}`);
      entry.outlived = true;
      throw slow;
    }
    this.lists.delete(key);
    if ('error' in waited) throw waited.error;
    return waited.answer;
  }

  /** One of a downstream's polls (its health, or one of its lists); a keep-alive socket the downstream closed gets one fresh attempt. */
  private probe(s: ServiceState, what: 'health'): Promise<HealthAnswer>;
  private probe(s: ServiceState, what: ListName): Promise<ListAnswer>;
  private async probe(s: ServiceState, what: 'health' | ListName): Promise<HealthAnswer | ListAnswer> {
    if (what !== 'health' && s.spec.mcp) return this.mcpList(s, what);
    const options = { timeoutMs: this.options.healthTimeoutMs };
    const ask = () => (what === 'health' ? s.upstream.health(options) : s.upstream.list(what, options));
    try {
      return await ask();
    } catch (err) {
      // A keep-alive socket the downstream closed (e.g. it restarted): one fresh attempt.
      if (err instanceof DownstreamFailure && err.kind === 'connection') return ask();
      throw err;
    }
  }

  private async pollOne(s: ServiceState): Promise<void> {
    const started = performance.now();
    const wasHealthy = s.healthy;
    let reason: string | undefined;
    let reported: string | undefined;
    try {
      const health = await this.probe(s, 'health');
      reported = health.value?.status;
      if (!health.value) {
        reason = `health answered ${health.status}`;
      } else if (Date.now() < s.listsNotBefore) {
        // its lists broke a cap: left as they are until the backoff ends (a pin approved meanwhile still counts)
        if (s.held.size || s.changed.size) await this.evaluateTools(s);
      } else {
        const list = await this.probe(s, 'tools').catch((err: unknown) => {
          if (!(err instanceof SlowList)) throw err;
          return err;
        });
        // a slow list: a server listed before keeps its tools meanwhile; a new one waits for it
        if (list instanceof SlowList) reason = s.listedSignature ? undefined : list.message;
        else if (list.status !== 200) reason = `tools/list answered ${list.status}`;
        else if (!list.value) reason = `tools/list answered ${list.problem ?? 'JSON without a tools array'}`;
        else {
          await this.acceptTools(s, list.value.items, list.value.more);
          await this.readPrompts(s);
          if (s.spec.mcp) await this.readResources(s);
          this.backOffOverCap(s);
        }
      }
    } catch (err) {
      reason = err instanceof DownstreamFailure ? err.message : `probe failed: ${(err as Error).message}`;
    }
    const latencyMs = Math.round((performance.now() - started) * 100) / 100;
    s.lastChecked = Date.now();
    s.lastPoll = {
      at: new Date(s.lastChecked).toISOString(),
      ok: reason === undefined,
      latencyMs,
      ...(reason ? { reason } : {}),
      ...(reported ? { reported } : {}),
    };
    if (reason === undefined) {
      s.polls.ok += 1;
      s.heardAt = performance.now();
      s.health = 'healthy';
      s.reason = undefined;
      // It came back: calls may go out again at once.
      if (!wasHealthy) {
        s.breaker.reset();
        this.options.logger.info(`${s.id} is healthy`, { url: s.upstream.url, tools: s.tools.length });
        this.emit('service', { service: s.id, healthy: true, tools: s.tools.length } satisfies ServiceChange);
      }
    } else {
      s.polls.failed += 1;
      s.health = 'unhealthy';
      s.reason = reason;
      if (wasHealthy) {
        this.options.logger.warn(`${s.id} is unhealthy: ${reason}`, { url: s.upstream.url });
        this.emit('service', { service: s.id, healthy: false, reason } satisfies ServiceChange);
      }
    }
  }

  /**
   * A downstream's prompts (an MCP server's, or a kit service's GET /prompts/list). 404 means it
   * offers none; another failure leaves the last good list (prompts are not what health is about).
   */
  private async readPrompts(s: ServiceState): Promise<void> {
    try {
      const res = await this.probe(s, 'prompts');
      const listed = res.status === 404 ? { items: [], more: false } : res.value;
      if (!listed) return;
      const { kept: raw, refusal } = boundList(listed.items, 'prompts', s.limits, listed.more);
      this.refused(s, 'prompts', refusal);
      const prompts: DownstreamPrompt[] = [];
      for (const p of raw) {
        if (typeof p !== 'object' || p === null || typeof (p as { name?: unknown }).name !== 'string') continue;
        const { name, title, description, arguments: args } = p as unknown as DownstreamPrompt;
        if (!TOOL_NAME.test(name)) continue;
        prompts.push({
          name,
          ...(typeof title === 'string' ? { title } : {}),
          ...(typeof description === 'string' ? { description } : {}),
          ...(Array.isArray(args) ? { arguments: args } : {}),
          ...iconsAndMeta(p as Record<string, unknown>),
        });
      }
      const signature = createHash('sha1').update(JSON.stringify(prompts)).digest('base64url');
      if (signature !== s.promptsSignature) {
        s.prompts = prompts;
        s.promptsSignature = signature;
      }
    } catch (err) {
      this.options.logger.debug(`${s.id} prompts/list failed`, { error: (err as Error).message });
    }
  }

  /**
   * An MCP server's resources and templates. 404 (no resources capability): none; another failure
   * leaves the last good lists.
   */
  private async readResources(s: ServiceState): Promise<void> {
    const read = async (key: 'resources' | 'resourceTemplates', uriKey: 'uri' | 'uriTemplate') => {
      try {
        const res = await this.probe(s, key);
        if (res.status === 404) return [];
        if (!res.value) return undefined;
        const { kept: raw, refusal } = boundList(res.value.items, key, s.limits, res.value.more);
        this.refused(s, key, refusal);
        return raw.filter(
          (r): r is DownstreamResource =>
            typeof r === 'object' && r !== null && typeof r[uriKey] === 'string' && r[uriKey].length <= 2048 && typeof r.name === 'string',
        );
      } catch (err) {
        this.options.logger.debug(`${s.id} ${listRoute(key)} failed`, { error: (err as Error).message });
        return undefined;
      }
    };
    s.resources = (await read('resources', 'uri')) ?? s.resources;
    s.resourceTemplates = (await read('resourceTemplates', 'uriTemplate')) ?? s.resourceTemplates;
  }

  /** The healthy downstreams' resources (the first owner of a URI keeps it) and templates, each with its service. */
  resourceCatalog(): {
    resources: { service: string; resource: DownstreamResource }[];
    templates: { service: string; resource: DownstreamResource }[];
  } {
    const healthy = this.services.filter((s) => s.healthy);
    const seen = new Set<string>();
    const resources: { service: string; resource: DownstreamResource }[] = [];
    for (const s of healthy)
      for (const r of s.resources) {
        const uri = (r as { uri: string }).uri;
        if (seen.has(uri)) continue;
        seen.add(uri);
        resources.push({ service: s.id, resource: r });
      }
    return { resources, templates: healthy.flatMap((s) => s.resourceTemplates.map((resource) => ({ service: s.id, resource }))) };
  }

  /** Every downstream's prompts: plain names where unique, `<service>__<name>` where two offer one name. */
  promptCatalog(): { name: string; service: string; prompt: DownstreamPrompt }[] {
    const healthy = this.services.filter((s) => s.healthy && s.prompts.length);
    const count = new Map<string, number>();
    for (const s of healthy) for (const p of s.prompts) count.set(p.name, (count.get(p.name) ?? 0) + 1);
    return healthy.flatMap((s) =>
      s.prompts.map((p) => ({ name: count.get(p.name)! > 1 ? `${s.id}__${p.name}` : p.name, service: s.id, prompt: p })),
    );
  }

  /** What a list lost to the limits, kept for /services (and logged when it changes). */
  private refused(s: ServiceState, kind: ListKind, refusal: ListRefusal | undefined): void {
    const before = s.refusals[kind];
    if (refusal) s.refusals[kind] = refusal;
    else delete s.refusals[kind];
    if (refusal && refusal.refused !== before?.refused)
      this.options.logger.warn(`${s.id} lists more than the gateway takes; the excess is refused`, { kind, ...refusal });
  }

  /**
   * Lists that broke a cap are not read again for a while (one minute, doubling to ten while they
   * stay over): a server listing 100,000 tools costs that parse once in a while, not every poll.
   */
  private backOffOverCap(s: ServiceState): void {
    if (Object.keys(s.refusals).length === 0) {
      s.listBackoffMs = 0;
      s.listsNotBefore = 0;
      return;
    }
    s.listBackoffMs = listBackoffMs(s.listBackoffMs);
    s.listsNotBefore = Date.now() + s.listBackoffMs;
  }

  /** A downstream's tool list: bounded by its limits, then checked (names, pins) unless it is what was checked last. */
  private async acceptTools(s: ServiceState, raw: unknown[], more: boolean): Promise<void> {
    const { kept, signature, refusal } = boundList(raw, 'tools', s.limits, more);
    this.refused(s, 'tools', refusal);
    if (signature === s.listedSignature && s.held.size === 0 && s.changed.size === 0) return;
    s.listed = kept;
    s.listedSignature = signature;
    await this.evaluateTools(s);
  }

  /**
   * The tools of the last listing that are served: valid names, and for a pinned server each
   * definition compared with its pin (a new tool is pinned as first seen; a changed one is withheld
   * or reported by the server's pin mode). Runs when the list changed or a pin may have (never per call).
   */
  private async evaluateTools(s: ServiceState): Promise<void> {
    const listed: { tool: DownstreamTool; raw: Record<string, unknown> }[] = [];
    const parsed = s.listed.map((item) => ({ item, tool: toTool(item) }));
    // names model APIs accept are the catalog's (^[a-zA-Z0-9_-]{1,64}$); an MCP server's other name
    // (a dot, a slash, a space, up to 128 characters) is listed under an alias, unless that is taken
    const names = new Set(parsed.flatMap((p) => (p.tool && TOOL_NAME.test(p.tool.name) ? [p.tool.name] : [])));
    for (const { item, tool: own } of parsed) {
      if (!own) continue;
      let tool = own;
      if (!TOOL_NAME.test(own.name)) {
        // (only an MCP server's: a fleet service names its tools as the catalog does)
        const alias = s.spec.mcp ? toolAlias(own.name) : undefined;
        const key = `${s.id}/${own.name}`;
        const taken = alias !== undefined && names.has(alias);
        if (alias === undefined || taken) {
          if (!this.warned.has(key)) {
            this.warned.add(key);
            this.options.logger.warn(
              `${s.id} offers a tool whose name does not match ^[a-zA-Z0-9_-]{1,64}$${taken ? ` and whose alias ${alias} is taken` : ''}; it is not routed`,
              { tool: own.name.slice(0, 100) },
            );
          }
          continue;
        }
        names.add(alias);
        if (!this.warned.has(key)) {
          this.warned.add(key);
          this.options.logger.info(`${s.id} offers a tool named ${own.name}, which model APIs refuse: listed as ${alias}`);
        }
        tool = { ...own, name: alias, upstreamName: own.name };
      }
      listed.push({ tool, raw: item });
    }
    let tools = listed.map((l) => l.tool);
    const held = new Map<string, ChangedTool>();
    const changed = new Map<string, ChangedTool>();
    if (this.pins && s.pinMode !== 'off') {
      try {
        tools = await this.checkPins(s, listed, held, changed);
      } catch (err) {
        // the store failed: what was verified last stays served, nothing new
        this.options.logger.error(`${s.id}: tool pins could not be checked; its tools stay as they were`, { err: (err as Error).message });
        return;
      }
    }
    for (const l of listed) s.known.add(l.tool.name);
    s.held = held;
    s.changed = changed;
    const signature = createHash('sha1')
      .update(JSON.stringify(tools))
      .update([...held.keys()].join(','))
      .digest('base64url');
    if (signature === s.toolsSignature) return;
    s.toolsSignature = signature;
    s.tools = tools;
    s.toolsByName = new Map(tools.map((t) => [t.name, t]));
  }

  /** Each listed tool against its pin: the tools served; `held` and `changed` filled with those that differ. */
  private async checkPins(
    s: ServiceState,
    listed: { tool: DownstreamTool; raw: Record<string, unknown> }[],
    held: Map<string, ChangedTool>,
    changed: Map<string, ChangedTool>,
  ): Promise<DownstreamTool[]> {
    const pins = this.pins!;
    const pinned = await pins.list(s.id);
    const served: DownstreamTool[] = [];
    for (const { tool, raw } of listed) {
      const { hash, definition } = definitionOf(raw);
      const pin = pinned.get(tool.name) ?? (await pins.first(s.id, tool.name, hash, definition));
      if (pin.hash === hash) {
        if (pin.seen) await pins.saw(s.id, tool.name);
        served.push(tool);
        continue;
      }
      if (pin.seen?.hash !== hash) await pins.saw(s.id, tool.name, { hash, definition });
      const change: ChangedTool = {
        tool: tool.name,
        pinnedHash: pin.hash,
        hash,
        changed: changedFields(pin.definition, definition),
        since: pin.seen?.hash === hash ? pin.seen.at : Date.now(),
      };
      const key = `${s.id}/${tool.name}/${hash}`;
      if (!this.warned.has(key)) {
        this.warned.add(key);
        this.options.logger.warn(
          `${s.id} changed the definition of ${tool.name} since it was pinned (${change.changed.join(', ')}): ${
            s.pinMode === 'hold' ? 'withheld' : 'served'
          } until an operator approves it (GET /admin/pins)`,
          { pinned: pin.hash, listed: hash },
        );
      }
      if (s.pinMode === 'hold') held.set(tool.name, change);
      else {
        changed.set(tool.name, change);
        served.push(tool);
      }
    }
    return served;
  }

  /** Third-party tool names pinned by earlier runs count as known from the start, so no other server takes them meanwhile. */
  private async loadPinnedNames(): Promise<void> {
    if (!this.pins) return;
    for (const s of this.services) {
      if (s.pinMode === 'off') continue;
      try {
        for (const name of (await this.pins.list(s.id)).keys()) s.known.add(name);
      } catch (err) {
        this.options.logger.warn(`${s.id}: pinned tool names could not be read`, { err: (err as Error).message });
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.suspectTimer) clearTimeout(this.suspectTimer);
    await Promise.all(this.services.map((s) => s.upstream.destroy().catch(() => undefined)));
  }
}
