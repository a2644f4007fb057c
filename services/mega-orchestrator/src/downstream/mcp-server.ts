/**
 * A real MCP server as a downstream: over stdio (a child process the gateway starts, restarts with
 * backoff when it dies, and stops with the fleet) or over Streamable HTTP at a URL. It answers the
 * same three requests the registry and the dispatcher send every downstream (GET /health, GET
 * /tools/list, POST /tools/call), translated to MCP (ping, tools/list, tools/call), so failover,
 * breakers, time limits, history and metrics treat it like any other service.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { InFlight, isErrorCode, statusForCode, type ErrorCode as FleetCode, type Logger } from '@mcp-fleet/kit';
import {
  answerTooLarge,
  DownstreamFailure,
  displayUrl,
  type DownstreamAnswer,
  type DownstreamRequest,
  type Downstream,
  type ClientRequester,
  type ClientRequestMethod,
  type LogListener,
  type ProgressListener,
} from './http-client';
import { VERSION } from '../core/config';
import type { McpServerSpec, StdioServerSpec } from '../core/types';
import { defaultStdioLauncher, type StdioLaunch, type StdioLauncher } from './stdio-sandbox';
import {
  asMcpError,
  connectModern,
  MODERN_VERSION,
  withInputRounds,
  type McpSubscription,
  type ModernClient,
  type SubscriptionFilter,
} from './rev-2026-07-28';
import { awaitAnswer } from '../mcp/client-requests';
import { isAnswerTooLarge, streamBudget, type StreamBudget } from './stream-budget';
import { withoutMcpErrorPrefix } from '../mcp/jsonrpc';
import { maskingLogger, maskSecrets, maskStrings } from '../core/secret-mask';

export interface McpDownstreamOptions {
  id: string;
  logger: Logger;
  maxResponseBytes: number;
  /** First restart delay after the server dies or fails to start; doubles per failure up to 30 s. */
  restartBackoffMs?: number;
  /** Called when the server sends notifications/tools/list_changed, prompts/list_changed or resources/list_changed. */
  onToolsChanged?: () => void;
  /** Called when the server sends notifications/resources/updated for a URI the gateway subscribed to. */
  onResourceUpdated?: (uri: string) => void;
  /** Called when the server says a URL-mode elicitation finished (notifications/elicitation/complete). */
  onElicitationComplete?: (elicitationId: string) => void;
  /**
   * Declare elicitation, sampling and roots to the server and put what it asks during a tool call to
   * that call's caller (MCP_FORWARD_CLIENT_REQUESTS). Off: the gateway declares no client capabilities.
   */
  forwardClientRequests?: boolean;
  /** How long a caller has to answer one such request (MCP_INPUT_TIMEOUT_MS). */
  inputTimeoutMs?: number;
  /** Items of each list read at most (pages beyond them are not read; the registry refuses the excess). */
  listCaps?: { tools: number; prompts: number; resources: number };
  /** How it is shown (its declared URL template, or command line): never a `${VAR}`'s value. */
  shownUrl?: string;
  /** Values `${VAR}` put into its configuration: masked in its errors and log lines (secret-mask.ts). */
  secrets?: string[];
  /** How a stdio server's process is started: inside the OS sandbox by default (stdio-sandbox.ts). */
  launch?: StdioLauncher;
}

/** A tool call in flight: whom to ask what the server asks during it, and its clock to stop meanwhile. */
interface CallSlot {
  tool: string;
  requester?: ClientRequester;
  onLog?: LogListener;
  clock: CallClock;
  /** Requests of this call its caller has not answered yet, and when the last one was put. */
  asking: number;
  askedAt: number;
}

/** Requests a server sends at once (Promise.all) arrive within this; a call asking for longer waits on its caller. */
const TOGETHER_MS = 10;

/** The client capabilities the gateway declares when it forwards client requests (defaults applied by the SDK). */
const FORWARDED_CAPABILITIES = { elicitation: { form: { applyDefaults: true }, url: {} }, sampling: {}, roots: {} };

/** Of a caller's declared capabilities, those the gateway forwards (what a server behind it may ask that caller). */
function askable(capabilities: unknown): Record<string, unknown> {
  if (typeof capabilities !== 'object' || capabilities === null) return {};
  const declared = capabilities as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(FORWARDED_CAPABILITIES)
      .filter((k) => declared[k] !== undefined)
      .map((k) => [k, declared[k]]),
  );
}
/** The SDK's own time limit of a call whose caller may be asked things (the gateway's clock governs it). */
const SDK_BACKSTOP_MS = 24 * 3_600_000;
const DEFAULT_INPUT_TIMEOUT_MS = 300_000;

const MAX_BACKOFF_MS = 30_000;
/** A connection that stayed up this long resets the backoff. */
const STABLE_MS = 30_000;
const MAX_TOOL_PAGES = 100;
/** Time a server has to start and answer initialize. */
const START_TIMEOUT_MS = 30_000;
const STDERR_LINES = 20;
const TIMEOUT = Symbol('timeout');
/** Thrown by connect() when the server turned out to speak only 2026-07-28: the request goes that way. */
const SPEAKS_MODERN = Symbol('speaks 2026-07-28');

export class McpDownstream implements Downstream {
  readonly url: string;
  readonly port: number;
  private client?: Client;
  private connecting?: Promise<Client>;
  /** A 2026-07-28 server's v2 client (connected by server/discover), while it answers. */
  private modern?: Promise<ModernClient>;
  /** That client once connected (for the stdio child's pid). */
  private modernConnected?: ModernClient;
  /** A server not declared 2026-07-28 that turned out to be one (discoveredModern). */
  private foundModern = false;
  private failures = 0;
  private nextAttemptAt = 0;
  private connectedAt = 0;
  private lastProblem = 'not started yet';
  private readonly stderr: string[] = [];
  private restartTimer?: NodeJS.Timeout;
  private closed = false;
  /** How many times the server was started (stdio) or connected (HTTP), for /services and tests. */
  starts = 0;
  /** The progress listeners of calls in flight, by the progressToken the gateway gave each call. */
  private readonly progress = new InFlight<string, ProgressListener>();
  /** Tool calls in flight, for what the server asks its client meanwhile. */
  private readonly calls = new InFlight<number, CallSlot>();
  /** URL-mode elicitation ids this server put to callers, awaiting their completion notice (askedUrl). */
  private readonly urlElicitations = new Set<string>();
  /** Resource URIs the gateway subscribed to here (subscribed again after a restart). */
  private readonly subscribed = new Set<string>();
  /** A 2026-07-28 server's subscriptions/listen stream: what it listens for (as sent), on which client, what the server honoured. */
  private modernWatch?: { key: string; client: ModernClient; subscription: McpSubscription; honored: SubscriptionFilter };
  /** Listen streams are opened one at a time (each change of what to listen for waits for the one before). */
  private watchChain: Promise<unknown> = Promise.resolve();
  private rewatchTimer?: NodeJS.Timeout;
  /** How long after the next listen stream that ends early it is opened again (1 s doubling to 30 s; 1 s after one that lasted STABLE_MS). */
  private listenDelayMs = 1000;
  /** DOWNSTREAM_MAX_RESPONSE_BYTES counted as the server's bytes arrive, and a call's streams closed with it (stream-budget.ts). */
  private readonly budget: StreamBudget;

  constructor(
    readonly spec: McpServerSpec,
    private readonly options: McpDownstreamOptions,
  ) {
    // its secrets (what ${VAR} put in) masked in every line it logs, and in every error it answers (maskedRequest)
    if (options.secrets?.length) {
      this.options = { ...options, logger: maskingLogger(options.logger, options.secrets) };
      this.mask = maskSecrets(options.secrets);
      this.request = this.maskedRequest;
    }
    this.budget = streamBudget({ maxBytes: options.maxResponseBytes, server: options.id, logger: this.options.logger });
    if (spec.transport === 'stdio') {
      this.url =
        options.shownUrl ??
        `stdio:${[spec.command, ...spec.args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`.slice(0, 300);
      this.port = 0;
    } else {
      const u = new URL(spec.url);
      this.url = options.shownUrl ?? displayUrl(spec.url);
      this.port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    }
  }

  /** Masks the server's secrets in a text (identity when it has none). */
  private readonly mask: (text: string) => string = (text) => text;

  /** request() for a server with secrets: its error answers and failures with the secret values masked (error paths only). */
  private readonly maskedRequest = (req: DownstreamRequest): Promise<DownstreamAnswer> =>
    this.answer(req).then(
      (answer) => {
        const json = answer.json as { error?: unknown } | undefined;
        return answer.status !== 200 && json ? { ...answer, json: maskStrings(json, this.mask) } : answer;
      },
      (err: unknown) => {
        if (err instanceof DownstreamFailure) throw new DownstreamFailure(err.kind, this.mask(err.message), err.delivered);
        throw err;
      },
    );

  request(req: DownstreamRequest): Promise<DownstreamAnswer> {
    return this.answer(req);
  }

  /** The child's process id while a stdio server runs. */
  get pid(): number | undefined {
    const t = (this.client?.transport ?? this.modernConnected?.transport) as { pid?: number | null } | undefined;
    return t && 'pid' in t ? (t.pid ?? undefined) : undefined;
  }

  private async answer(req: DownstreamRequest): Promise<DownstreamAnswer> {
    if (this.speaksModern) return this.requestModern(req);
    let client: Client;
    try {
      client = await this.connected(req.timeoutMs);
    } catch (err) {
      if (err === SPEAKS_MODERN) return this.requestModern(req);
      throw err;
    }
    const { signal, clock, opts, end } = this.scope(req);
    try {
      if (req.method === 'GET' && req.path === '/health') {
        await client.ping(opts);
        return { status: 200, json: { status: 'healthy', transport: this.spec.transport } };
      }
      const listCaps = this.options.listCaps;
      if (req.method === 'GET' && req.path === '/tools/list')
        return listAnswer('tools', (c) => client.listTools(c, opts), listCaps?.tools, signal);
      if (req.method === 'GET' && req.path === '/prompts/list') {
        if (!client.getServerCapabilities()?.prompts) return { status: 200, json: { prompts: [] } };
        return listAnswer('prompts', (c) => client.listPrompts(c, opts), listCaps?.prompts, signal);
      }
      // Resources (none from a server without the capability): listed, and read by URI.
      if (req.method === 'GET' && (req.path === '/resources/list' || req.path === '/resources/templates/list')) {
        if (!client.getServerCapabilities()?.resources) return { status: 404, json: this.error('NOT_FOUND', 'no resources') };
        return req.path === '/resources/list'
          ? listAnswer('resources', (c) => client.listResources(c, opts), listCaps?.resources, signal)
          : listAnswer('resourceTemplates', (c) => client.listResourceTemplates(c, opts), listCaps?.resources, signal);
      }
      if (req.method === 'POST' && req.path === '/resources/read') {
        const { uri } = JSON.parse(req.body ?? '{}') as { uri: string };
        return { status: 200, json: await this.inFlight(`resource ${uri}`, req, clock, () => client.readResource({ uri }, opts)) };
      }
      // Resource subscriptions (the gateway's clients watching a resource of this server).
      if (req.method === 'POST' && (req.path === '/resources/subscribe' || req.path === '/resources/unsubscribe')) {
        if (!client.getServerCapabilities()?.resources?.subscribe)
          return { status: 404, json: this.error('NOT_FOUND', `${this.options.id} offers no resource subscriptions`) };
        const { uri } = JSON.parse(req.body ?? '{}') as { uri: string };
        if (req.path === '/resources/subscribe') {
          await client.subscribeResource({ uri }, opts);
          this.subscribed.add(uri);
        } else {
          this.subscribed.delete(uri);
          await client.unsubscribeResource({ uri }, opts);
        }
        return { status: 200, json: {} };
      }
      if (req.method === 'POST' && req.path === '/prompts/get') {
        const { name, arguments: args } = JSON.parse(req.body ?? '{}') as { name: string; arguments?: Record<string, string> };
        return {
          status: 200,
          json: await this.inFlight(`prompt ${name}`, req, clock, () => client.getPrompt({ name, arguments: args }, opts)),
        };
      }
      if (req.method === 'POST' && req.path === '/completion/complete') {
        // A server without the completions capability has no suggestions (not an error).
        if (!client.getServerCapabilities()?.completions) return { status: 404, json: this.error('NOT_FOUND', 'no completions') };
        return { status: 200, json: await client.complete(JSON.parse(req.body ?? '{}'), opts) };
      }
      if (req.method === 'POST' && req.path === '/tools/call') {
        const { name, arguments: args } = JSON.parse(req.body ?? '{}') as { name: string; arguments?: Record<string, unknown> };
        return this.toEnvelope(await this.inFlight(name, req, clock, () => this.callTool(client, name, args ?? {}, req.onProgress, opts)));
      }
      return { status: 404, json: this.error('NOT_FOUND', `${req.method} ${req.path} has no MCP equivalent`) };
    } catch (err) {
      return this.failure(err, signal, req);
    } finally {
      end();
    }
  }

  /**
   * A request's own time limit and abort: aborted by its caller or when its clock runs out; the
   * SDK's options for it (the gateway's clock bounds the call, stopped while its caller is asked
   * something; the SDK's is a backstop behind it). `end` releases them.
   */
  private scope(req: DownstreamRequest) {
    const controller = new AbortController();
    const clock = new CallClock(req.timeoutMs, () => controller.abort(TIMEOUT));
    const onAbort = () => controller.abort(req.signal?.reason);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const opts = { signal: controller.signal, timeout: req.onClientRequest ? SDK_BACKSTOP_MS : req.timeoutMs + 1000 };
    const end = () => {
      clock.stop();
      req.signal?.removeEventListener('abort', onAbort);
    };
    return { signal: controller.signal, clock, opts, end };
  }

  /**
   * A request to a 2026-07-28 server (downstream/rev-2026-07-28.ts): the same routes as request() on the v2 client.
   * What the server asks in an input_required result goes to the caller of this very call (no
   * attribution rule needed), keyed as the server keyed it. No ping (the revision removed it):
   * health is server/discover. Resource subscriptions and list changes come over one
   * subscriptions/listen stream (watchModern); the gateway's polling of the lists stays as well.
   */
  private async requestModern(req: DownstreamRequest): Promise<DownstreamAnswer> {
    const { signal, clock, opts: base, end } = this.scope(req);
    // the gateway polls the lists itself: the v2 client's response cache is not used
    const opts = { ...base, cacheMode: 'bypass' as const };
    const body = () => JSON.parse(req.body ?? '{}') as Record<string, unknown>;
    // every page of a list, under its key
    const listCaps = this.options.listCaps;
    const listed = (
      key: 'tools' | 'prompts' | 'resources' | 'resourceTemplates',
      page: (cursor: { cursor: string } | undefined) => Promise<object>,
    ) => listAnswer(key, page, listCaps?.[key === 'resourceTemplates' ? 'resources' : key], signal);
    const asker = (slot: CallSlot) => (method: ClientRequestMethod, params: Record<string, unknown>, key: string) =>
      this.askCaller(slot, method, params, signal, key);
    // The server learns what this caller can be asked (of what the gateway forwards), and gets the answers it sent up front.
    const caller = req.onClientRequest;
    const forwards = this.options.forwardClientRequests === true;
    // Its log messages are asked for (every level: the caller's own filter applies) only when someone listens.
    const meta = {
      _meta: {
        'io.modelcontextprotocol/clientCapabilities': askable(forwards ? caller?.capabilities : undefined),
        ...(req.onLog ? { 'io.modelcontextprotocol/logLevel': 'debug' } : {}),
      },
    };
    const first = caller?.inputResponses ? { inputResponses: caller.inputResponses } : {};
    try {
      const client = await this.modernClient(req.timeoutMs);
      const caps = client.getServerCapabilities() ?? {};
      const route = `${req.method} ${req.path}`;
      switch (route) {
        case 'GET /health':
          await client.discover(opts);
          return { status: 200, json: { status: 'healthy', transport: this.spec.transport, protocolVersion: MODERN_VERSION } };
        case 'GET /tools/list':
          return listed('tools', (c) => client.listTools(c, opts));
        case 'GET /prompts/list':
          if (!caps.prompts) return { status: 200, json: { prompts: [] } };
          return listed('prompts', (c) => client.listPrompts(c, opts));
        case 'GET /resources/list':
          if (!caps.resources) return { status: 404, json: this.error('NOT_FOUND', 'no resources') };
          return listed('resources', (c) => client.listResources(c, opts));
        case 'GET /resources/templates/list':
          if (!caps.resources) return { status: 404, json: this.error('NOT_FOUND', 'no resources') };
          return listed('resourceTemplates', (c) => client.listResourceTemplates(c, opts));
        case 'POST /resources/read': {
          const uri = String(body().uri);
          const json = await this.inFlight(`resource ${uri}`, req, clock, (slot) =>
            withInputRounds(
              `Reading ${uri}`,
              (extra) => client.readResource({ uri, ...meta, ...extra }, { ...opts, allowInputRequired: true } as never),
              asker(slot),
              first,
            ),
          );
          return { status: 200, json };
        }
        case 'POST /prompts/get': {
          const { name, arguments: args } = body() as { name: string; arguments?: Record<string, string> };
          const json = await this.inFlight(`prompt ${name}`, req, clock, (slot) =>
            withInputRounds(
              `The prompt ${name}`,
              (extra) => client.getPrompt({ name, arguments: args, ...meta, ...extra }, { ...opts, allowInputRequired: true } as never),
              asker(slot),
              first,
            ),
          );
          return { status: 200, json };
        }
        case 'POST /resources/subscribe':
        case 'POST /resources/unsubscribe': {
          if (!caps.resources?.subscribe)
            return { status: 404, json: this.error('NOT_FOUND', `${this.options.id} offers no resource subscriptions`) };
          const uri = String(body().uri);
          if (req.path === '/resources/unsubscribe') {
            this.subscribed.delete(uri);
            await this.watchModern(client, req.timeoutMs);
            return { status: 200, json: {} };
          }
          this.subscribed.add(uri);
          const honored = await this.watchModern(client, req.timeoutMs).catch((err: unknown) => {
            this.subscribed.delete(uri);
            throw err;
          });
          if (honored.resourceSubscriptions?.includes(uri)) return { status: 200, json: {} };
          this.subscribed.delete(uri);
          void this.watchModern(client).catch(() => undefined);
          return {
            status: 400,
            json: this.error('VALIDATION_ERROR', `${this.options.id} did not agree to send updates of ${uri.slice(0, 200)}`),
          };
        }
        case 'POST /completion/complete':
          if (!caps.completions) return { status: 404, json: this.error('NOT_FOUND', 'no completions') };
          return { status: 200, json: await client.complete(body() as never, opts) };
        case 'POST /tools/call': {
          const { name, arguments: args } = body() as { name: string; arguments?: Record<string, unknown> };
          // the call's own progressToken, its reports delivered as read (takeFirst), before its answer
          const progressToken = req.onProgress ? `gateway-${randomUUID()}` : undefined;
          if (progressToken) this.progress.set(progressToken, req.onProgress!);
          const params = { name, arguments: args ?? {}, _meta: { ...meta._meta, ...(progressToken ? { progressToken } : {}) } };
          try {
            const result = await this.inFlight(name, req, clock, (slot) =>
              withInputRounds<CallToolResult>(
                `The tool ${name}`,
                (extra) => client.callTool({ ...params, ...extra }, { ...opts, allowInputRequired: true } as never),
                asker(slot),
                first,
              ),
            );
            return this.toEnvelope(result);
          } finally {
            if (progressToken) this.progress.delete(progressToken);
          }
        }
        default:
          return { status: 404, json: this.error('NOT_FOUND', `${req.method} ${req.path} has no MCP equivalent at ${this.options.id}`) };
      }
    } catch (err) {
      if (err instanceof DownstreamFailure) throw err;
      return this.failure(asMcpError(err), signal, req);
    } finally {
      end();
    }
  }

  /** The protocol era this server is spoken to in: 2026-07-28 (stateless), or the 2025 era's initialize handshake. */
  get protocolEra(): '2026-07-28' | '2025-11-25' {
    return this.speaksModern ? MODERN_VERSION : '2025-11-25';
  }

  /** Declared 2026-07-28, or found to be (it refused initialize and answered server/discover). */
  private get speaksModern(): boolean {
    return this.spec.protocolVersion === MODERN_VERSION || this.foundModern;
  }

  /** Whether this server answers server/discover (then it is spoken to in 2026-07-28 from now on); `why` for the log. */
  private async discoveredModern(why: string): Promise<boolean> {
    try {
      await this.modernClient(START_TIMEOUT_MS);
    } catch {
      return false;
    }
    this.foundModern = true;
    this.options.logger.info(`${this.options.id} ${why}: it is spoken to in MCP ${MODERN_VERSION}`);
    return true;
  }

  /** The 2026-07-28 server's client, connected (server/discover) on first use and again after a failure. */
  private modernClient(timeoutMs: number): Promise<ModernClient> {
    if (this.closed) return Promise.reject(new DownstreamFailure('refused', `${this.options.id} is stopped`, false));
    if (this.modern) return this.modern;
    // connecting (every request comes here; only a new connection clears a stdio child's stderr)
    const { spec } = this;
    const capabilities = this.options.forwardClientRequests === true ? FORWARDED_CAPABILITIES : {};
    if (spec.transport === 'stdio') this.stderr.length = 0;
    const target =
      spec.transport === 'streamable-http'
        ? { url: spec.url, headers: spec.headers }
        : this.launched(spec, (run) => ({ ...run, onStderr: this.onStderr }));
    if (target instanceof DownstreamFailure) return Promise.reject(target);
    this.modern = connectModern(target, capabilities, Math.min(timeoutMs, START_TIMEOUT_MS), this.budget, this.takeFirst).then(
      (client) => {
        this.starts += 1;
        this.connectedAt = Date.now();
        this.modernConnected = client;
        const server = client.getServerVersion();
        this.options.logger.info(`${this.options.id} connected over MCP ${MODERN_VERSION}`, {
          server: server ? `${server.name} ${server.version}` : undefined,
        });
        this.hearModern(client);
        return client;
      },
      (err: Error) => {
        this.modern = undefined;
        this.lastProblem = `${err.message}${this.stderrTail()}`;
        throw new DownstreamFailure('refused', `${this.options.id} did not answer server/discover: ${this.lastProblem}`, false, {
          cause: err,
        });
      },
    );
    return this.modern;
  }

  /**
   * What a 2026-07-28 server says on the gateway's listen stream goes where a 2025 server's
   * unsolicited notifications go; the stream opens at once when the server offers list changes or
   * the gateway's clients already watch some of its resources.
   */
  private hearModern(client: ModernClient): void {
    const { id, logger } = this.options;
    for (const kind of ['tools', 'prompts', 'resources'] as const)
      client.setNotificationHandler(`notifications/${kind}/list_changed`, this.listChanged(kind));
    client.setNotificationHandler('notifications/resources/updated', (n) => this.options.onResourceUpdated?.(n.params.uri));
    if (Object.keys(this.modernFilter(client)).length > 0)
      this.watchModern(client).catch((err: Error) => {
        logger.warn(`${id}: could not listen for its changes; trying again`, { err: err.message });
        this.rewatchLater(err);
      });
  }

  /** What to do when the server says one of its lists changed (either era): read them again. */
  private listChanged(kind: 'tools' | 'prompts' | 'resources'): () => void {
    return () => {
      this.options.logger.info(`${this.options.id} says its ${kind} changed; re-reading them`);
      this.options.onToolsChanged?.();
    };
  }

  /** What the gateway listens for at a 2026-07-28 server: the list changes it offers, and updates of the resources the gateway's clients watch. */
  private modernFilter(client: ModernClient): SubscriptionFilter {
    const caps = client.getServerCapabilities() ?? {};
    return {
      ...(caps.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(caps.prompts?.listChanged ? { promptsListChanged: true } : {}),
      ...(caps.resources?.listChanged ? { resourcesListChanged: true } : {}),
      ...(caps.resources?.subscribe && this.subscribed.size > 0 ? { resourceSubscriptions: [...this.subscribed].sort() } : {}),
    };
  }

  /**
   * Opens the listen stream again when what to listen for changed (a new stream, acknowledged, then
   * the old one closed, so no update falls between them); none when there is nothing to listen for.
   * Answers what the server honoured. A stream the server ends is opened again (rewatchLater).
   */
  private watchModern(client: ModernClient, timeoutMs = START_TIMEOUT_MS): Promise<SubscriptionFilter> {
    const run = this.watchChain.then(async () => {
      const filter = this.modernFilter(client);
      const key = JSON.stringify(filter);
      const current = this.modernWatch;
      if (current?.key === key && current.client === client) return current.honored;
      let next: typeof current;
      if (Object.keys(filter).length > 0) {
        const subscription = await client.listen(filter, { timeout: timeoutMs });
        const watch = { key, client, subscription, honored: subscription.honoredFilter };
        const openedAt = Date.now();
        next = watch;
        void subscription.closed.then((how) => {
          if (how === 'local' || this.modernWatch !== watch) return;
          this.modernWatch = undefined;
          // a server (or a proxy) that ends every stream soon after it opens is asked again less and less often
          const delay = Date.now() - openedAt >= STABLE_MS ? 1000 : this.listenDelayMs;
          this.listenDelayMs = Math.min(delay * 2, MAX_BACKOFF_MS);
          this.options.logger.warn(`${this.options.id} ended the gateway's listen stream (${how}); listening again in ${delay} ms`);
          this.rewatchLater(undefined, delay);
        });
      }
      this.modernWatch = next;
      await current?.subscription.close();
      return next?.honored ?? {};
    });
    this.watchChain = run.catch(() => undefined);
    return run;
  }

  /**
   * Listens again after the stream ended or could not open, with backoff (1 s doubling to 30 s).
   * What changed meanwhile was not heard: the lists are read again and watchers of its resources told.
   */
  private rewatchLater(failure?: unknown, delayMs = 1000): void {
    if (this.closed || this.rewatchTimer) return;
    const refused = asMcpError(failure);
    if (refused instanceof McpError && refused.code === ErrorCode.MethodNotFound) {
      this.options.logger.warn(`${this.options.id} has no subscriptions/listen: its changes are found by polling only`);
      return;
    }
    this.rewatchTimer = setTimeout(() => {
      this.rewatchTimer = undefined;
      this.modernClient(START_TIMEOUT_MS)
        .then((client) => this.watchModern(client))
        .then(() => {
          this.options.onToolsChanged?.();
          for (const uri of this.subscribed) this.options.onResourceUpdated?.(uri);
        })
        .catch((err: unknown) => this.rewatchLater(err, Math.min(delayMs * 2, 30_000)));
    }, delayMs);
    this.rewatchTimer.unref();
  }

  /** A failed request: the caller's error (an MCP error as the fleet's envelope), or a DownstreamFailure for the breaker. */
  private failure(err: unknown, signal: AbortSignal, req: DownstreamRequest): DownstreamAnswer {
    // this call's answer went over DOWNSTREAM_MAX_RESPONSE_BYTES as it arrived: it alone fails, the connection stays
    if (isAnswerTooLarge(err)) return answerTooLarge(this.options.maxResponseBytes);
    if (signal.aborted) {
      if (signal.reason === TIMEOUT) throw new DownstreamFailure('timeout', `timed out after ${req.timeoutMs} ms`, true);
      throw new DownstreamFailure('aborted', 'the caller went away', true);
    }
    if (err instanceof McpError) {
      // URL elicitation required (-32042): its elicitations are this server's to complete
      if (err.code === -32042 && Array.isArray((err.data as { elicitations?: unknown } | undefined)?.elicitations))
        for (const e of (err.data as { elicitations: unknown[] }).elicitations) this.askedUrl(e);
      if (err.code === ErrorCode.ConnectionClosed) {
        this.drop(`the connection closed (${err.message})`);
        throw new DownstreamFailure('connection', `${this.options.id} closed the connection: ${this.lastProblem}`, true, { cause: err });
      }
      // The SDK's own time limit (its error carries data.timeout); a server's -32001 is its own error, passed on below.
      if (err.code === ErrorCode.RequestTimeout && typeof (err.data as { timeout?: unknown } | undefined)?.timeout === 'number')
        throw new DownstreamFailure('timeout', `timed out after ${req.timeoutMs} ms`, true);
      if (err.code === ErrorCode.InvalidParams)
        return { status: 400, json: this.error('VALIDATION_ERROR', withoutMcpErrorPrefix(err.message), err.data) };
      if (err.code === ErrorCode.MethodNotFound)
        return {
          status: 404,
          json: this.error('NOT_FOUND', `${this.options.id} does not support this: ${withoutMcpErrorPrefix(err.message)}`),
        };
      return {
        status: 502,
        // the server's JSON-RPC error as it was (a task of this call reads failed with it)
        json: this.error('UPSTREAM_ERROR', `${this.options.id} answered an MCP error ${err.code}: ${withoutMcpErrorPrefix(err.message)}`, {
          mcpError: { code: err.code, message: withoutMcpErrorPrefix(err.message), ...(err.data !== undefined ? { data: err.data } : {}) },
        }),
      };
    }
    // an answer that breaks the protocol's rules (the SDK's check of it refused it): this call's error, the server stays
    const broken = brokenAnswer(err);
    if (broken !== undefined)
      return {
        status: 502,
        json: this.error('UPSTREAM_ERROR', `${this.options.id} answered what MCP ${this.protocolEra} does not allow: ${broken}`),
      };
    // a transport failure (HTTP refused, the child gone): not delivered only when nothing was sent
    this.drop((err as Error).message);
    throw new DownstreamFailure('connection', `${this.options.id}: ${(err as Error).message}`, true, { cause: err });
  }

  /** A URL-mode elicitation this server put to a caller: its notifications/elicitation/complete is passed on, once (the newest 1000 kept). */
  private askedUrl(elicitation: unknown): void {
    const id = (elicitation as { elicitationId?: unknown } | null)?.elicitationId;
    if (typeof id !== 'string') return;
    this.urlElicitations.add(id);
    if (this.urlElicitations.size > 1000) this.urlElicitations.delete(this.urlElicitations.values().next().value!);
  }

  /** The calls in flight that can be sending a message now: those not blocked on their caller's answer (else all). */
  private sendingCalls(now: number): CallSlot[] {
    const all = this.calls.values();
    const running = all.filter((c) => c.asking === 0 || now - c.askedAt < TOGETHER_MS);
    return running.length > 0 ? running : all;
  }

  /**
   * A log message of the server (notifications/message): to the caller of the one call in flight,
   * else into the gateway's own log at debug, with the server's id. Stricter than requests: a call
   * waiting on its caller may still log, so with several in flight none is told (not the wrong one).
   */
  private serverLog(params: { level?: unknown; logger?: unknown; data?: unknown }): void {
    const calls = this.calls.values();
    const message = {
      level: String(params.level ?? 'info'),
      ...(typeof params.logger === 'string' ? { logger: params.logger } : {}),
      data: params.data,
    };
    if (calls.length === 1 && calls[0].onLog) return calls[0].onLog(message);
    this.options.logger.debug(`${this.options.id} log message`, message);
  }

  /**
   * A request in flight on this connection (a tool call, a prompt, a resource read): what the server
   * asks its client or logs meanwhile goes to that request's caller (clientRequest, serverLog).
   */
  private async inFlight<T>(what: string, req: DownstreamRequest, clock: CallClock, work: (slot: CallSlot) => Promise<T>): Promise<T> {
    const slot: CallSlot = { tool: what, requester: req.onClientRequest, onLog: req.onLog, clock, asking: 0, askedAt: 0 };
    const key = this.calls.add(slot);
    try {
      return await work(slot);
    } finally {
      this.calls.delete(key);
    }
  }

  private async callTool(
    client: Client,
    name: string,
    args: Record<string, unknown>,
    onProgress: ProgressListener | undefined,
    opts: { signal: AbortSignal; timeout: number },
  ): Promise<CallToolResult> {
    // A tool the server runs only as a (2025-11-25) task: the gateway creates it and polls it to its end.
    if ((client as unknown as { isToolTaskRequired(name: string): boolean }).isToolTaskRequired(name))
      return callThroughTask(client, name, args, opts);
    if (!onProgress) return (await client.callTool({ name, arguments: args }, undefined, opts)) as CallToolResult;
    // The call's own progressToken, its reports delivered by deliverProgressFirst.
    const progressToken = `gateway-${randomUUID()}`;
    this.progress.set(progressToken, onProgress);
    try {
      return (await client.callTool({ name, arguments: args, _meta: { progressToken } }, undefined, opts)) as CallToolResult;
    } finally {
      this.progress.delete(progressToken);
    }
  }

  /**
   * A request the server sends its client (elicitation, sampling, roots), put to the caller of the
   * tool call it belongs to. MCP ties such a request to no call over stdio (and the SDK shows none
   * over HTTP), so it goes to the one call in flight on this connection that can be sending it: a
   * call blocked on its caller's answer (asking for over TOGETHER_MS) is not, unless it is the only
   * call. With none, or several, there is no caller to ask and the server is told so. The call's
   * clock stops while its caller answers; the caller has MCP_INPUT_TIMEOUT_MS.
   */
  private async clientRequest(method: ClientRequestMethod, params: Record<string, unknown>, signal: AbortSignal) {
    const now = Date.now();
    const calls = this.sendingCalls(now);
    if (calls.length !== 1)
      throw new McpError(
        ErrorCode.InvalidRequest,
        calls.length === 0
          ? `The mcp-fleet gateway answers ${method} only during a tool call, on behalf of that call's caller.`
          : `${calls.length} tool calls are in flight on this connection and MCP does not say which one ${method} belongs to: the mcp-fleet gateway cannot tell which caller to ask.`,
      );
    return this.askCaller(calls[0], method, params, signal);
  }

  /** Puts one request of the server to the caller of `call` (its clock stopped meanwhile; MCP_INPUT_TIMEOUT_MS to answer). */
  private async askCaller(
    call: CallSlot,
    method: ClientRequestMethod,
    params: Record<string, unknown>,
    signal: AbortSignal,
    key?: string,
  ): Promise<Record<string, unknown>> {
    if (method === 'elicitation/create' && params.mode === 'url') this.askedUrl(params);
    const now = Date.now();
    if (!call.requester)
      throw new McpError(
        ErrorCode.MethodNotFound,
        `The caller of ${call.tool} cannot answer ${method}: it did not come over MCP from a client that declared the capability.`,
      );
    const limit = this.options.inputTimeoutMs ?? DEFAULT_INPUT_TIMEOUT_MS;
    const limiter = new AbortController();
    const timer = setTimeout(() => limiter.abort(), limit);
    const timeout = limiter.signal;
    call.clock.pause();
    call.asking += 1;
    call.askedAt = now;
    try {
      return await untilAborted(call.requester(method, params, AbortSignal.any([signal, timeout]), key), timeout, () =>
        this.options.logger.info(`${this.options.id}: the caller of ${call.tool} did not answer ${method} within ${limit} ms`),
      );
    } catch (err) {
      if (timeout.aborted)
        throw new McpError(ErrorCode.RequestTimeout, `The caller did not answer ${method} within ${limit} ms (MCP_INPUT_TIMEOUT_MS).`);
      throw err;
    } finally {
      clearTimeout(timer);
      call.asking -= 1;
      call.clock.resume();
    }
  }

  /** An MCP tool result as the fleet's envelope; the server's own content blocks ride along in `mcp` for MCP clients. */
  private toEnvelope(result: CallToolResult): DownstreamAnswer {
    // (its size was counted on the wire: stream-budget.ts)
    const content = Array.isArray(result.content) ? result.content : [];
    if (result.isError) {
      const text = content
        .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
        .map((c) => c.text)
        .join('\n')
        .slice(0, 2000);
      // A fleet service over MCP carries its own code (its envelope, or {code, message} as text); keep it and its status.
      const own = fleetError(result.structuredContent) ?? fleetError(parseJson(text));
      if (own) return { status: statusForCode(own.code), json: { ...this.error(own.code, own.message), mcp: { content } } };
      // SDK servers report bad arguments as a tool result that starts with the JSON-RPC code
      const invalid = /^MCP error -32602: (.*)$/s.exec(text);
      if (invalid)
        return { status: 400, json: { ...this.error('VALIDATION_ERROR', `${this.options.id}: ${invalid[1]}`), mcp: { content } } };
      return {
        status: 502,
        json: { ...this.error('UPSTREAM_ERROR', `${this.options.id}: ${text || 'the tool reported an error'}`), mcp: { content } },
      };
    }
    const structured = result.structuredContent;
    const body = structured !== undefined ? structured : contentResult(content);
    return {
      status: 200,
      json: {
        success: true,
        service: this.options.id,
        result: body,
        mcp: { content, ...(structured !== undefined ? { structuredContent: structured } : {}) },
        timestamp: new Date().toISOString(),
      },
    };
  }

  private error(code: FleetCode, message: string, details?: unknown): Record<string, unknown> {
    return {
      success: false,
      error: message,
      code,
      service: this.options.id,
      timestamp: new Date().toISOString(),
      ...(details !== undefined ? { details } : {}),
    };
  }

  private async connected(timeoutMs: number): Promise<Client> {
    if (this.client) return this.client;
    if (this.closed) throw new DownstreamFailure('refused', `${this.options.id} is stopped`, false);
    if (!this.connecting) {
      const wait = this.nextAttemptAt - Date.now();
      if (wait > 0)
        throw new DownstreamFailure('refused', `${this.options.id} is not running (${this.lastProblem}); next start in ${wait} ms`, false);
      this.connecting = this.connect().finally(() => (this.connecting = undefined));
    }
    // A slow start goes on in the background; this request (often a health probe) does not wait past its limit.
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DownstreamFailure('refused', `${this.options.id} is still starting (over ${timeoutMs} ms so far)`, false)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.connecting, limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async connect(): Promise<Client> {
    const { logger, id } = this.options;
    const forward = this.options.forwardClientRequests === true;
    const client = withInFlightTables(
      new Client({ name: 'mcp-fleet-gateway', version: VERSION }, { capabilities: forward ? FORWARDED_CAPABILITIES : {} }),
    );
    if (forward) {
      const ask = (method: ClientRequestMethod) => (request: { params?: unknown }, extra: { signal: AbortSignal }) =>
        this.clientRequest(method, (request.params ?? {}) as Record<string, unknown>, extra.signal);
      client.setRequestHandler(ElicitRequestSchema, ask('elicitation/create') as never);
      client.setRequestHandler(CreateMessageRequestSchema, ask('sampling/createMessage') as never);
      client.setRequestHandler(ListRootsRequestSchema, ask('roots/list') as never);
    }
    const transport = this.transport();
    client.setNotificationHandler(ToolListChangedNotificationSchema, this.listChanged('tools'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, this.listChanged('prompts'));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, this.listChanged('resources'));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => this.options.onResourceUpdated?.(n.params.uri));
    // An HTTP server declared to no era may speak 2026-07-28 too (a dual-era server): asked first
    // (server/discover), it is spoken to in the newer revision; one that does not answer it, in 2025.
    const undeclared = this.spec.protocolVersion === undefined;
    const probeFirst = undeclared && this.spec.transport === 'streamable-http';
    if (probeFirst && (await this.discoveredModern('answered server/discover'))) {
      await transport.close().catch(() => undefined);
      throw SPEAKS_MODERN;
    }
    this.starts += 1;
    try {
      await client.connect(transport, { timeout: START_TIMEOUT_MS });
    } catch (err) {
      await transport.close().catch(() => undefined);
      // A stdio server that answered initialize with an error may be of the stateless revision: asked
      // with server/discover, it is used as one (a process that exited or did not answer is not started again for it).
      const answered = err instanceof McpError && err.code !== ErrorCode.ConnectionClosed && err.code !== ErrorCode.RequestTimeout;
      if (undeclared && !probeFirst && answered && (await this.discoveredModern('refused initialize and answered server/discover')))
        throw SPEAKS_MODERN;
      this.failed(`it did not start: ${(err as Error).message}${this.stderrTail()}`);
      throw new DownstreamFailure('refused', `${id} did not start: ${this.lastProblem}`, false, { cause: err });
    }
    this.deliverProgressFirst(transport);
    // set after connect: a failed start is handled above, not by the close handler
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      if (this.closed) return;
      const exit = this.spec.transport === 'stdio' ? `the process exited${this.stderrTail()}` : 'the connection closed';
      this.failed(exit);
      logger.warn(`${id} stopped: ${exit}; restarting in ${this.nextAttemptAt - Date.now()} ms`);
      this.scheduleRestart();
    };
    this.client = client;
    this.connectedAt = Date.now();
    // A restarted server knows nothing of the subscriptions the gateway's clients hold.
    for (const uri of this.subscribed)
      client
        .subscribeResource({ uri })
        .catch((err: Error) => logger.warn(`${id}: could not subscribe to ${uri} again`, { err: err.message }));
    const server = client.getServerVersion();
    logger.info(`${id} connected over MCP`, {
      transport: this.spec.transport,
      server: server ? `${server.name} ${server.version}` : undefined,
      pid: this.pid,
    });
    return client;
  }

  /**
   * Progress reports reach their call's listener as they are read, in order, before the call's
   * answer. (The SDK's Client hands notifications to their handlers a microtask later but settles
   * a response at once: a report read in the same chunk as the answer, as the last one of a fast tool
   * usually is, found its call gone and was dropped.)
   */
  private deliverProgressFirst(transport: Transport): void {
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (!this.takeFirst(message)) deliver?.(message, extra);
    };
  }

  /**
   * What the gateway takes from a server's messages as they are read, before its SDK client (either
   * era): log messages, the completion of a URL elicitation, and progress reports of the gateway's
   * own tokens. True when taken.
   */
  private readonly takeFirst = (message: unknown): boolean => {
    const m = message as {
      method?: unknown;
      params?: { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown };
    };
    if (m.method === 'notifications/message' && m.params) {
      this.serverLog(m.params as Record<string, unknown>);
      return true;
    }
    if (m.method === 'notifications/elicitation/complete') {
      const id = (m.params as { elicitationId?: unknown } | undefined)?.elicitationId;
      // only for an elicitation this server put to a caller (not another server's, whose session would be told)
      if (typeof id === 'string' && this.urlElicitations.delete(id)) this.options.onElicitationComplete?.(id);
      return true;
    }
    if (m.method === 'notifications/progress' && typeof m.params?.progressToken === 'string') {
      const listener = this.progress.get(m.params.progressToken);
      if (listener && typeof m.params.progress === 'number') {
        const { progress, total, message: text } = m.params;
        listener(progress, typeof total === 'number' ? total : undefined, typeof text === 'string' ? text : undefined);
        return true;
      }
    }
    return false;
  };

  private transport(): Transport {
    const { spec } = this;
    if (spec.transport === 'streamable-http') {
      return this.budget.http(
        (fetch) => new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, fetch }),
      );
    }
    const run = this.launched(spec, (r) => r);
    if (run instanceof DownstreamFailure) throw run;
    const t = this.budget.stdio(
      new StdioClientTransport({
        ...run,
        stderr: 'pipe',
        maxBufferSize: this.budget.stdioBufferSize,
      }),
    );
    this.stderr.length = 0;
    t.stderr?.on('data', this.onStderr);
    return t;
  }

  /** The process a stdio server is started as (sandboxed by default), or why it may not start (shown in /services). */
  private launched<T>(spec: StdioServerSpec, use: (run: StdioLaunch) => T): T | DownstreamFailure {
    try {
      return use((this.options.launch ?? defaultStdioLauncher())(this.options.id, spec));
    } catch (err) {
      this.failed((err as Error).message);
      return new DownstreamFailure('refused', `${this.options.id} was not started: ${this.lastProblem}`, false, { cause: err });
    }
  }

  /** A stdio server's stderr: its last lines kept for errors, each logged at debug. */
  private readonly onStderr = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      this.stderr.push(line.slice(0, 500));
      if (this.stderr.length > STDERR_LINES) this.stderr.shift();
      this.options.logger.debug(`${this.options.id} stderr`, { line: line.slice(0, 500) });
    }
  };

  /**
   * What a stdio server wrote to stderr before it failed: its last lines go to the operator's log
   * only (they may echo its environment); the text that reaches /services, errors and sessions says
   * no more than that there were some.
   */
  private stderrTail(): string {
    if (this.stderr.length === 0) return '';
    this.options.logger.warn(`${this.options.id} wrote to stderr before it stopped`, { stderr: this.stderr.slice(-5) });
    return ` (${this.stderr.length} line${this.stderr.length === 1 ? '' : 's'} on its stderr: see the gateway's log)`;
  }

  private failed(problem: string): void {
    if (this.connectedAt && Date.now() - this.connectedAt > STABLE_MS) this.failures = 0;
    this.connectedAt = 0;
    this.failures += 1;
    this.lastProblem = problem;
    const base = this.options.restartBackoffMs ?? 1000;
    this.nextAttemptAt = Date.now() + Math.min(MAX_BACKOFF_MS, base * 2 ** (this.failures - 1));
  }

  /** A stdio server that died is started again after its backoff, without waiting for a call. */
  private scheduleRestart(): void {
    if (this.spec.transport !== 'stdio' || this.restartTimer || this.closed) return;
    this.restartTimer = setTimeout(
      () => {
        this.restartTimer = undefined;
        this.connected(START_TIMEOUT_MS).catch(() => this.scheduleRestart());
      },
      Math.max(0, this.nextAttemptAt - Date.now()),
    );
    this.restartTimer.unref();
  }

  /** Forget a broken connection so the next request connects again. */
  private drop(problem: string): void {
    void this.closeModern();
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    this.lastProblem = problem;
    void client.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.rewatchTimer) clearTimeout(this.rewatchTimer);
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    await client?.close().catch(() => undefined);
    await this.closeModern();
  }

  /** Forgets the 2026-07-28 server's client (the next request connects again) and closes it. */
  private async closeModern(): Promise<void> {
    const modern = this.modern;
    const watch = this.modernWatch;
    this.modern = undefined;
    this.modernConnected = undefined;
    this.modernWatch = undefined;
    await watch?.subscription.close().catch(() => undefined);
    const client = await modern?.catch(() => undefined);
    await client?.close().catch(() => undefined);
  }

  destroy(): Promise<void> {
    return this.close();
  }
}

/** The SDK Protocol's tables of requests in flight (TypeScript-private fields of SDK 1.x). */
const SDK_REQUEST_TABLES = ['_responseHandlers', '_progressHandlers', '_timeoutInfo', '_requestHandlerAbortControllers'];

/**
 * The client with its Protocol's tables of requests in flight as the kit's InFlight instead of
 * Maps: a Map churned by requests keeps every finished request's handlers, and through them its
 * whole call, alive through scavenges once one of its tables is old (docs/gateway.md, "What kept
 * every call's objects alive"). The SDK reads them with get, set, delete, clear and values, all of
 * which InFlight has. A field that is missing or not an empty Map (another SDK version) is left alone.
 */
export function withInFlightTables<T extends object>(client: T): T {
  const fields = client as unknown as Record<string, unknown>;
  for (const name of SDK_REQUEST_TABLES) {
    const table = fields[name];
    if (table instanceof Map && table.size === 0) fields[name] = new InFlight();
  }
  return client;
}

/** The tool's answer for REST callers when it has no structuredContent: its text, parsed if it is JSON. */
function contentResult(content: CallToolResult['content']): unknown {
  if (content.length === 1 && content[0].type === 'text') {
    const text = content[0].text;
    try {
      return JSON.parse(text);
    } catch {
      return { text };
    }
  }
  return { content };
}

/**
 * tools/call of a tool whose execution.taskSupport is "required": task-augmented, polled through the
 * SDK until its result. An abort (the caller's cancel, the time limit) cancels the server's task too.
 */
async function callThroughTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  opts: { signal: AbortSignal; timeout: number },
): Promise<CallToolResult> {
  let taskId: string | undefined;
  const cancel = () => {
    if (taskId) void client.experimental.tasks.cancelTask(taskId).catch(() => undefined);
  };
  opts.signal.addEventListener('abort', cancel, { once: true });
  try {
    for await (const message of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, opts)) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      else if (message.type === 'result') return message.result as CallToolResult;
      else if (message.type === 'error') throw message.error;
    }
    throw new McpError(ErrorCode.InternalError, `${name}: the task ended without a result`);
  } finally {
    opts.signal.removeEventListener('abort', cancel);
  }
}

/**
 * Every page of an MCP list (tools/list, prompts/list, ...) under its key, up to MAX_TOOL_PAGES
 * pages; once more than `max` items are read, the pages left are not (`more`: the registry refuses
 * the excess and says so).
 */
async function listAnswer(
  key: string,
  list: (params: { cursor: string } | undefined) => Promise<object>,
  max = Infinity,
  signal?: AbortSignal,
): Promise<DownstreamAnswer> {
  // every page's request listens on the one signal (more than Node's default of 10 is no leak here)
  if (signal) setMaxListeners(MAX_TOOL_PAGES + 10, signal);
  let out: unknown[] = [];
  let cursor: string | undefined;
  let more = false;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const res = (await list(cursor ? { cursor } : undefined)) as Record<string, unknown> & { nextCursor?: string };
    const items = Array.isArray(res[key]) ? (res[key] as unknown[]) : [];
    out = out.length ? out.concat(items) : items;
    cursor = res.nextCursor;
    if (!cursor) break;
    if (out.length > max) {
      more = true;
      break;
    }
  }
  return { status: 200, json: { [key]: out, ...(more ? { more: true } : {}) } };
}

/** The v2 client's codes for an answer it refused (the server sent it; the connection is fine). */
const REFUSED_ANSWER_CODES: ReadonlySet<string> = new Set(['INVALID_RESULT', 'UNSUPPORTED_RESULT_TYPE', 'INPUT_REQUIRED_ROUNDS_EXCEEDED']);

/**
 * Why the SDK refused an answer the server sent (either client: the v2 client's SdkError, the v1
 * client's schema check, a ZodError), or undefined for any other failure.
 */
function brokenAnswer(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const { code, issues } = err as Error & { code?: unknown; issues?: unknown };
  if (typeof code === 'string' && REFUSED_ANSWER_CODES.has(code)) return err.message.slice(0, 500);
  if (Array.isArray(issues)) return `an answer that does not match the MCP schema (${err.message.replace(/\s+/g, ' ').slice(0, 400)})`;
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `{code, error}` (the fleet's envelope) or `{code, message}` with a code of the fleet's table. */
function fleetError(v: unknown): { code: FleetCode; message: string } | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as { code?: unknown; error?: unknown; message?: unknown };
  if (!isErrorCode(o.code)) return undefined;
  const message = typeof o.error === 'string' ? o.error : typeof o.message === 'string' ? o.message : undefined;
  return message === undefined ? undefined : { code: o.code, message };
}

/** A call's time limit that stops while its caller is being asked something, and goes on after. */
class CallClock {
  private timer?: NodeJS.Timeout;
  private left: number;
  private since = 0;
  private paused = 0;
  private stopped = false;

  constructor(
    ms: number,
    private readonly onTimeout: () => void,
  ) {
    this.left = ms;
    this.run();
  }

  private run(): void {
    this.since = Date.now();
    this.timer = setTimeout(this.onTimeout, Math.max(0, this.left));
  }

  pause(): void {
    if (this.stopped || this.paused++ > 0) return;
    clearTimeout(this.timer);
    this.left -= Date.now() - this.since;
  }

  resume(): void {
    if (this.stopped || --this.paused > 0) return;
    this.run();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

/** The promise's outcome, or a rejection as soon as the signal aborts (the caller may never answer). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, onAbort: () => void): Promise<T> {
  const { answer, settle } = awaitAnswer<T>(signal, onAbort);
  promise.then(settle.resolve, settle.reject);
  return answer;
}
