import type { IncomingMessage, RequestListener } from 'node:http';
import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError, hostOriginRule, requestContext, requestGuard, withFastPath, type Logger } from '@mcp-fleet/kit';
import type { ServiceEntry } from '@mcp-fleet/inventory';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { defaultDownstreams, INVENTORY, SERVICE_ID, VERSION, type Config } from '../core/config';
import { Dispatcher } from '../core/dispatch';
import { gatewayContext, gatewaySendError } from './middleware';
import { McpSessionTransport } from '../mcp/rev-2025-11-25/session-transport';
import { createMcpServer } from '../mcp/rev-2025-11-25/sdk-server';
import { contextOfSession } from '../mcp/rev-2025-11-25/codec';
import { runMethod } from '../mcp/methods';
import { paramHeaderScans } from '../mcp/rev-2026-07-28/param-headers';
import type { McpContext } from '../mcp/context';
import { InputExchanges } from '../mcp/client-requests';
import { ResourceWatch } from '../downstream/resource-watch';
import { schemaValidator } from '../downstream/mcp/schema-validator';
import { ListenStreams } from '../mcp/subscriptions';
import { Providers } from '../downstream/providers';
import { MemoryRateStore, rateLimiter, RedisRateStore, type RateStore } from './rate-limit';
import { Registry, type ResourceUpdate, type ServiceChange } from '../core/registry';
import { AuditLog, Authorizer, principalOf } from '../auth/auth';
import type { JWTVerifyGetKey } from 'jose';
import { ToolResolver } from '../core/tool-resolver';
import { registerCatalogRoutes } from './routes/catalog';
import { registerDebugRoutes } from './routes/debug';
import { registerAdminRoutes } from './routes/admin';
import { PinStore } from '../core/pins';
import { registerNativeRoutes } from './routes/native';
import { LegacySseEndpoint } from '../mcp/rev-2025-11-25/legacy-sse';
import { countedAfterBody, mcpHandlers, mcpHotPath, methodNotAllowed, registerMcpRoutes, wantsJsonRpc } from './routes/mcp';
import { mcpCors } from './cors';
import { registerProxyRoute } from './routes/proxy';
import { registerStatusRoutes } from './routes/status';
import { registerStatusPage } from './routes/status-page';
import { registerConsole } from './console';
import { failureHandler } from './errors';
import { readDefinitionFile, VirtualServers } from './virtual-servers';
import { registerVirtualServerRoutes } from './virtual-servers/routes';
import { CallHistory } from '../history/call-history';
import { createDiscovery } from '../core/discovery';
import { GatewayStats } from '../core/stats';
import { TaskManager } from '../core/tasks';
import { RESOURCES_CHANGED_BY } from '../core/views';
import { stdioLauncher } from '../downstream/stdio-sandbox';
import type { DownstreamSpec } from '../core/types';

export interface GatewayDeps {
  config: Config;
  logger: Logger;
  /** The downstream registry; defaults to config.downstreams (built from the inventory by readConfig). */
  services?: DownstreamSpec[];
  /** The inventory shown by GET /services; defaults to the fleet's. */
  inventory?: readonly ServiceEntry[];
  /** Start polling at once (default true). */
  autoStart?: boolean;
  /** Process-level default metrics (off in tests that build many apps). */
  defaultMetrics?: boolean;
  /** Tests: verify access tokens with this key set instead of the issuer's JWKS. */
  authKeySet?: JWTVerifyGetKey;
}

export interface Gateway {
  /** The server's request listener: POST /mcp answered before Express when nothing guards it, the rest by the Express app. */
  app: RequestListener;
  ctx: McpContext;
  registry: Registry;
  /** The call history and contexts store. */
  history: CallHistory;
  mcp: McpSessionTransport;
  /** Poll every downstream now and rebuild the catalog. */
  refresh(): Promise<void>;
  /** Close sessions, flush the session store, stop polling, release pools. */
  close(): Promise<void>;
}

/** TRUST_PROXY as Express takes it: true/false, a hop count, or addresses and subnet names. */
function trustProxy(value: string): boolean | number | string {
  const v = value.trim();
  if (v === 'true' || v === 'false') return v === 'true';
  return /^\d+$/.test(v) ? Number(v) : v;
}
/**
 * The gateway's parts, built from its configuration: the registry of downstreams, the resolver,
 * the call history, authorization and the audit log, the dispatcher, tasks, the protocol's shared
 * parts (McpContext), and the virtual servers' definitions (read first: a bad file stops the start).
 */
function buildParts(deps: GatewayDeps) {
  const { config, logger } = deps;
  const specs = deps.services ?? config.downstreams ?? defaultDownstreams({});
  const dataDir = config.DATA_DIR;
  // Virtual servers' definitions first: a bad file stops the start, naming its line (src/virtual-servers/).
  const virtualFile = config.VIRTUAL_SERVERS_FILE ?? path.join(dataDir, 'gateway', 'virtual-servers.yaml');
  const virtualDefinitions = readDefinitionFile(virtualFile);

  const stats = new GatewayStats(SERVICE_ID, deps.defaultMetrics ?? false);
  const registry = new Registry(specs, {
    pollMs: config.HEALTH_POLL_MS,
    healthTimeoutMs: config.HEALTH_TIMEOUT_MS,
    connections: config.DOWNSTREAM_CONNECTIONS,
    channel: config.DOWNSTREAM_CHANNEL,
    channelSocketDir: config.CHANNEL_SOCKET_DIR,
    maxResponseBytes: config.DOWNSTREAM_MAX_RESPONSE_BYTES,
    breakerFailures: config.BREAKER_FAILURES,
    breakerCooldownMs: config.BREAKER_COOLDOWN_MS,
    mcpRestartBackoffMs: config.MCP_RESTART_BACKOFF_MS,
    stdioLauncher: stdioLauncher({ mode: config.MCP_STDIO_SANDBOX, dataDir, logger }),
    forwardClientRequests: config.MCP_FORWARD_CLIENT_REQUESTS,
    inputTimeoutMs: config.MCP_INPUT_TIMEOUT_MS,
    progressMaxMs: config.DOWNSTREAM_PROGRESS_MAX_MS,
    listTimeoutMs: config.DOWNSTREAM_TIMEOUT_MS,
    inventory: deps.inventory ?? INVENTORY,
    listLimits: {
      tools: config.DOWNSTREAM_MAX_TOOLS,
      prompts: config.DOWNSTREAM_MAX_PROMPTS,
      resources: config.DOWNSTREAM_MAX_RESOURCES,
      descriptionBytes: config.DOWNSTREAM_MAX_DESCRIPTION_BYTES,
      schemaBytes: config.DOWNSTREAM_MAX_SCHEMA_BYTES,
    },
    logger,
  });
  for (const reason of config.skippedServers ?? []) logger.warn(`stdio server not started: ${reason}`);
  if (config.MCP_INSTANCE_URL && !config.MCP_STATE_SECRET)
    logger.warn(
      "MCP_INSTANCE_URL is set without MCP_STATE_SECRET: other instances cannot check this one's requestState, so they refuse the retries of its input_required calls instead of forwarding them; set one MCP_STATE_SECRET on every instance",
    );
  const inventory = deps.inventory ?? INVENTORY;
  const resolver = new ToolResolver(registry, inventory, Math.max(1, Math.ceil(config.HEALTH_POLL_MS / 1000)), config.MCP_FORWARD_UNLISTED);
  const history = new CallHistory({
    file: config.SESSION_DB ?? path.join(dataDir, 'gateway', 'contexts.sqlite'),
    databaseUrl: config.SESSION_DATABASE_URL,
    maxCallsPerSession: config.SESSION_MAX_CALLS,
    flushMs: config.SESSION_FLUSH_MS,
    retentionHours: config.SESSION_RETENTION_HOURS,
    logger,
  });
  // third-party tool definitions pinned in the same store (pins.ts)
  registry.usePins(new PinStore(() => history.database(), logger));
  const auth = new Authorizer({
    issuer: config.AUTH_ISSUER,
    jwksUrl: config.AUTH_JWKS_URL,
    // PORT unset: the port server.ts listens on, the gateway's documented one (not "undefined", which no URL parses)
    resource: config.AUTH_RESOURCE ?? `http://127.0.0.1:${config.PORT ?? INVENTORY.find((s) => s.id === SERVICE_ID)!.port}/mcp`,
    apiKeysFile: config.API_KEYS_FILE,
    logger,
    keySet: deps.authKeySet,
  });
  const auditFile =
    config.AUDIT_LOG_FILE === 'off'
      ? undefined
      : (config.AUDIT_LOG_FILE ?? (auth.enabled ? path.join(dataDir, 'gateway', 'audit.jsonl') : undefined));
  const audit = new AuditLog(auditFile, logger);
  if (auth.enabled)
    logger.info('authorization is on', { issuer: config.AUTH_ISSUER, apiKeys: Boolean(config.API_KEYS_FILE), audit: auditFile });
  const dispatcher = new Dispatcher(registry, resolver, stats, history, {
    service: SERVICE_ID,
    timeoutMs: config.DOWNSTREAM_TIMEOUT_MS,
    audit,
    logger,
  });

  const ctx: McpContext = {
    config,
    logger,
    inventory,
    registry,
    resolver,
    dispatcher,
    stats,
    history,
    providers: new Providers(config),
    auth: auth.enabled ? auth : undefined,
    tasks: new TaskManager({
      history,
      logger,
      enabled: config.MCP_TASKS,
      toolNames: config.MCP_TASK_TOOLS,
      ttlMs: config.MCP_TASK_TTL_MS,
      timeoutMs: config.MCP_TASK_TIMEOUT_MS,
      pollMs: config.MCP_TASK_POLL_MS,
      maxTasks: config.MCP_MAX_TASKS,
      maxPerCaller: config.MCP_TASK_MAX_PER_CALLER,
      maxResultBytes: config.MCP_TASK_MAX_RESULT_BYTES,
      leaseMs: config.MCP_TASK_LEASE_MS,
      instanceUrl: config.MCP_INSTANCE_URL,
    }),
    inputs: new InputExchanges({
      ttlMs: config.MCP_INPUT_TIMEOUT_MS,
      logger,
      instanceUrl: config.MCP_INSTANCE_URL,
      secret: config.MCP_STATE_SECRET,
    }),
    watch: new ResourceWatch(registry, { timeoutMs: config.DOWNSTREAM_TIMEOUT_MS, logger }),
    listen: new ListenStreams({
      maxStreams: config.MCP_MAX_LISTEN_STREAMS,
      keepAliveMs: config.MCP_LISTEN_KEEPALIVE_MS,
      logger,
      serverInfo: { name: SERVICE_ID, version: VERSION },
    }),
    // set once the MCP endpoint exists (createApp)
    mcpSessionCount: () => 0,
    // a tool the MCP listing leaves out (invalid x-mcp-header declarations) is not found either
    discovery: createDiscovery(config, logger, registry, (catalog, name) => paramHeaderScans(catalog, logger).get(name)?.valid === false),
  };
  stats.watchDownstreams(() =>
    registry.services.map((s) => ({
      id: s.id,
      up: s.healthy,
      breakerOpen: s.breaker.snapshot().state !== 'closed',
      tools: s.tools.length,
    })),
  );

  stats.watchHistoryQueue(() => ({ length: history.queued, capacity: history.capacity, dropped: history.dropped }));

  return { ctx, registry, history, stats, auth, audit, auditFile, virtualFile, virtualDefinitions };
}

/** The SDK Server of a 2025-era session (Streamable HTTP or HTTP+SSE) or of one sessionless request, around a context. */
function serverBuilder(config: Config, validator: jsonSchemaValidator, ctx: McpContext) {
  return (sessionId: () => string | undefined, session: boolean) =>
    createMcpServer({
      ctx,
      validator,
      pageSize: config.MCP_PAGE_SIZE,
      sessionId,
      // a session's 2025-11-25 tasks (in memory, with the session)
      ...(session && config.MCP_TASKS
        ? {
            sessionTasks: {
              ttlMs: config.MCP_TASK_TTL_MS,
              pollMs: config.MCP_TASK_POLL_MS,
              maxUnfinished: config.MCP_TASK_MAX_PER_CALLER,
            },
          }
        : {}),
    });
}

/** The MCP session transport around a context: the gateway's (/mcp), or a virtual server's view of it (/servers/{name}/mcp). */
function sessionTransports(
  config: Config,
  logger: Logger,
  /** One JSON Schema validator for every MCP server (building an Ajv per request would dominate its cost). */
  validator: jsonSchemaValidator,
  clientAddress: (req: IncomingMessage) => string,
): (ctx: McpContext) => McpSessionTransport {
  return (ctx) =>
    new McpSessionTransport({
      buildServer: serverBuilder(config, validator, ctx),
      // the session's hot path: tools/call, prompts/get and resources/read straight to the method table
      answer: (method, params, call) => runMethod(ctx, method, params, contextOfSession(call, principalOf(call.res), config.MCP_PAGE_SIZE)),
      idleMs: config.MCP_SESSION_IDLE_MS,
      sseRetryMs: config.MCP_SSE_RETRY_MS,
      sseEventsPerStream: config.MCP_SSE_EVENTS_PER_STREAM,
      sseBytesPerSession: config.MCP_SSE_BYTES_PER_SESSION,
      maxSessions: config.MCP_MAX_SESSIONS,
      maxSessionsPerOwner: config.MCP_MAX_SESSIONS_PER_OWNER,
      clientAddress,
      listen: ctx.listen,
      logger,
    });
}

/**
 * What the gateway's clients are told as it happens: list changes reach 2025-era sessions (their GET
 * stream) and 2026-era subscriptions/listen streams; resource updates of one refresh (health and
 * catalog change together) go out once per URI; tasks followed by a listen stream.
 */
function announceChanges(ctx: McpContext, mcp: McpSessionTransport, virtualServers: VirtualServers, logger: Logger): void {
  const { registry } = ctx;
  const changedResources = new Set<string>();
  const resourcesChanged = (uris: readonly string[]) => {
    if (changedResources.size === 0)
      setImmediate(() => {
        const list = [...changedResources];
        changedResources.clear();
        mcp.notifyResourcesUpdated(list);
        ctx.listen.notifyResources(list);
      });
    for (const uri of uris) changedResources.add(uri);
  };
  registry.on('catalog', () => {
    mcp.notifyToolsChanged();
    ctx.listen.notify('tools');
    resourcesChanged(RESOURCES_CHANGED_BY.catalog);
  });
  registry.on('health', () => resourcesChanged(RESOURCES_CHANGED_BY.health));
  // A resource of an MCP server that someone watches changed; the served resource list changed.
  // Provenance: only the server the gateway subscribed to a URI at may say it changed (never another's URI, never mega://).
  registry.on('resource-updated', ({ uri, service }: ResourceUpdate) => {
    if (ctx.watch.servedBy(uri) === service) return resourcesChanged([uri]);
    const from = registry.get(service);
    if (from) from.provenance.refusedUpdates += 1;
    logger.debug(`${service} announced an update of a resource it does not serve here; not passed on`, { uri: uri.slice(0, 200) });
  });
  // A URL-mode elicitation an MCP server put to a session's client finished out of band.
  registry.on('elicitation-complete', (elicitationId: string) => mcp.notifyElicitationComplete(elicitationId));
  registry.on('resources', () => {
    mcp.notifyResourcesListChanged();
    ctx.listen.notify('resources');
  });
  // 2025-era sessions hear when a downstream leaves or rejoins (notifications/message).
  registry.on('service', (change: ServiceChange) => {
    if (change.healthy) mcp.notifyLog('notice', { event: 'service_healthy', service: change.service, tools: change.tools });
    else mcp.notifyLog('warning', { event: 'service_unhealthy', service: change.service, reason: change.reason });
  });
  // notifications/tasks: a followed task changed on this instance, or (PostgreSQL) on another one.
  ctx.tasks.follow(virtualServers.followers(ctx.listen.followedTasks));
  ctx.tasks.on('task', ({ task }: { task: { taskId: string } & Record<string, unknown> }) => ctx.listen.notifyTask(task));
  registry.on('prompts', () => {
    mcp.notifyPromptsChanged();
    ctx.listen.notify('prompts');
  });
}

/**
 * The composition root: builds the parts, the MCP endpoint's transports and the virtual servers,
 * wires what clients are told, and mounts the routers. POST /mcp's routing is routes/mcp.ts, every
 * failure's answer errors.ts.
 */
export function createApp(deps: GatewayDeps): Gateway {
  const { config, logger } = deps;
  const { ctx, registry, history, stats, auth, audit, auditFile, virtualFile, virtualDefinitions } = buildParts(deps);
  const sendError = gatewaySendError(SERVICE_ID, logger);
  // DNS rebinding: the kit's rule of every service, on every route (the hot POST /mcp checks it in mcpHotPath).
  const refused = hostOriginRule({ listenHost: config.HOST, allowedHosts: config.ALLOWED_HOSTS, allowedOrigins: config.ALLOWED_ORIGINS });
  const context = gatewayContext(stats);

  const app = express();
  app.disable('x-powered-by');
  if (config.TRUST_PROXY !== undefined) app.set('trust proxy', trustProxy(config.TRUST_PROXY));
  // The address a session without authorization counts against (MCP_MAX_SESSIONS_PER_OWNER): Express's
  // reading of it (TRUST_PROXY), also for a request the hot path served before Express.
  const ipOf = Object.getOwnPropertyDescriptor(express.request, 'ip')?.get;
  const clientAddress = (req: IncomingMessage): string => {
    const read = (req as Partial<Request>).ip;
    if (typeof read === 'string') return read;
    if (config.TRUST_PROXY !== undefined && ipOf) return String(ipOf.call(Object.assign(Object.create(req) as object, { app })));
    return req.socket.remoteAddress ?? 'unknown';
  };

  const validator = schemaValidator(logger);
  const sessionTransport = sessionTransports(config, logger, validator, clientAddress);
  const mcp = sessionTransport(ctx);
  // clients of the older HTTP+SSE transport (GET /sse, POST /messages)
  const buildServer = serverBuilder(config, validator, ctx);
  const legacySse = new LegacySseEndpoint({
    buildServer: (sessionId) => buildServer(sessionId, true),
    maxSessions: config.MCP_MAX_SESSIONS,
    maxSessionsPerOwner: config.MCP_MAX_SESSIONS_PER_OWNER,
    logger,
  });
  ctx.mcpSessionCount = () => mcp.count;
  // Virtual servers (/servers/{name}/mcp): views of this context with sessions and listen streams of their own.
  const virtualServers = new VirtualServers({
    ctx,
    file: virtualFile,
    initial: virtualDefinitions,
    transport: sessionTransport,
    validator,
  });
  ctx.virtualServers = virtualServers;
  virtualServers.watch();
  announceChanges(ctx, mcp, virtualServers, logger);

  app.set('query parser', 'simple');
  app.use(requestContext(context));
  app.use(requestGuard(refused, sendError));
  // CORS on the MCP endpoints for the listed origins only (cors.ts); a preflight is answered before authorization, which it cannot carry
  const cors = mcpCors(config.ALLOWED_ORIGINS);
  if (cors) app.use((req, res, next) => (cors.handle(req, res) ? undefined : next()));
  // The console for people (http/console/): its own login and guards, so before the bearer middleware.
  const consoleRoutes = express.Router();
  app.use('/console', consoleRoutes);
  // Authorization (off by default): metadata, health and metrics stay open; everything else needs a token.
  app.get(['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/*rest'], auth.routes());
  // off by default: then not even a pass-through on the hot path
  if (auth.enabled) app.use(auth.middleware(sendError, (p) => p === '/health' || p === '/metrics' || p.startsWith('/.well-known/')));
  // Rate limits (off by default): counted after authorization, so a token's subject is the caller.
  const rateStore: RateStore | undefined =
    config.RATE_LIMIT_PER_MINUTE > 0
      ? config.REDIS_URL
        ? new RedisRateStore(config.REDIS_URL, config.RATE_LIMIT_PREFIX, config.RATE_LIMIT_REDIS_TIMEOUT_MS)
        : new MemoryRateStore()
      : undefined;
  const limiter = rateStore
    ? rateLimiter({
        limit: config.RATE_LIMIT_PER_MINUTE,
        windowMs: 60_000,
        store: rateStore,
        logger,
        sendError,
        wantsJsonRpc,
        onStoreError: stats.watchRateStore(),
      })
    : undefined;
  if (rateStore && limiter) {
    logger.info('rate limits are on', { perMinute: config.RATE_LIMIT_PER_MINUTE, store: rateStore.kind });
    // POST /mcp is counted once its body is read (routes/mcp.ts), so that notifications go free; the rest here.
    app.use((req, res, next) => (countedAfterBody(req) ? next() : limiter(req, res, next)));
  }

  const handlers = mcpHandlers(ctx, mcp);
  const hot = mcpHotPath({ config, refused, cors, handlers, limiter });
  app.use(hot.middleware);
  // Passthrough first: its bodies stream to the downstream unparsed.
  const proxy = registerProxyRoute(app, ctx, sendError);
  // Any Content-Type is read as JSON on POST, so `curl -d '{...}'` works without -H.
  app.use(express.json({ limit: config.BODY_LIMIT, strict: true, type: () => true }));

  registerMcpRoutes(app, mcp, { ...handlers, postMcp: hot.postMcp });
  app.get('/sse', (req, res) => legacySse.open(req, res));
  app.post('/messages', (req, res) => legacySse.post(req, res));
  app.all('/sse', methodNotAllowed('GET'));
  app.all('/messages', methodNotAllowed('POST'));
  registerNativeRoutes(app, ctx, handlers.native);
  registerVirtualServerRoutes(app, ctx, virtualServers);
  registerStatusRoutes(app, ctx);
  registerCatalogRoutes(app, ctx);
  registerDebugRoutes(app, ctx);
  registerAdminRoutes(app, ctx);
  registerStatusPage(app, ctx);
  registerConsole(consoleRoutes, ctx, { native: handlers.native, sendError, limiter, auditFile });

  app.use((req: Request, res: Response) => {
    sendError(
      res,
      new AppError(
        'NOT_FOUND',
        `No route ${req.method} ${req.path.slice(0, 200)} on ${SERVICE_ID}; GET /tools/list shows the tools, POST /mcp calls one, GET /services lists the services.`,
      ),
    );
  });
  /** The answer to an error of any route, the hot one before Express included. */
  const failure = failureHandler({ bodyLimit: config.BODY_LIMIT, sendError });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => failure(err, req, res));

  // Authorization and rate limits live in the app: with either on, every request goes through it.
  const listener: RequestListener =
    auth.enabled || limiter
      ? app
      : withFastPath({ app, context, route: (req) => (hot.isPlainMcpPost(req) ? hot.fast : undefined), onError: failure });

  if (deps.autoStart !== false) registry.start();

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await virtualServers.close();
      await mcp.close();
      await legacySse.close();
      ctx.inputs.close();
      // before the history: running tasks are marked failed in the same database
      await ctx.tasks.close();
      await registry.close();
      proxy.close();
      await history.close();
      await audit.close();
      await rateStore?.close();
    })());

  return { app: listener, ctx, registry, history, mcp, refresh: () => registry.refresh(), close };
}
