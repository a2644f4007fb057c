import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type ExpressModule from 'express';
import type { Express, NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import type { BaseConfig } from './config';
import { errorEnvelope, successEnvelope } from './envelope';
import { AppError, statusForCode, toAppError } from './errors';
import { runHealthChecks, type HealthCheck } from './health';
import { byteLimit, isPlainJsonRequest, readJsonBody, sendJson, sendJsonText } from './fast-json';
import {
  controllerOnClose,
  header,
  hostOriginRule,
  isPlainObject,
  logAppError,
  makeSendError,
  requestGuard,
  pathOf,
  recordRequest,
  requestIdFrom,
  requestContext,
  withFastPath,
  type FastRoute,
  type HttpResponse,
  type RequestContextOptions,
} from './http';
import { lazy } from './lazy';
import type { Logger } from './logger';
import { createMetrics, type ServiceMetrics } from './metrics';
import { getPromptOf, listPromptsOf, promptGetBody, type PromptSource } from './prompt';
import { BUDGET_HEADER, budgetFrom, invokeTool, toolToJson, type ToolDefinition } from './tool';
import { getProcessTracer, type FleetSpan, type FleetTracer } from './tracing';
import { parseOrThrow } from './validation';
import { isChannelUpgrade, serveChannel, UPGRADE, type ChannelAnswer, type ChannelCall, type UpgradableListener } from './channel';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * Express, loaded when a service's app is first needed: at creation for a service whose `extend`
 * mounts routes of its own, else at the first request the kit's fast routes do not answer (the
 * gateway's polls of /health, /tools/list and /prompts/list and its tool calls never need it).
 * Measured on a built service: 3.3 MiB of heap and 80-95 ms of CPU at start.
 */
const loadExpress = lazy(() => require('express') as typeof ExpressModule);
/* eslint-enable @typescript-eslint/no-require-imports */

/** Express's default ETag of a JSON answer (the `etag` package, weak: W/"<length in hex>-<sha1 base64, 27 chars>"). */
export function weakEtag(text: string): string {
  const length = Buffer.byteLength(text);
  if (length === 0) return 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"';
  return `W/"${length.toString(16)}-${createHash('sha1').update(text, 'utf8').digest('base64').slice(0, 27)}"`;
}

/** A JSON answer to a GET as Express's res.json writes it to a request without conditional headers: its Content-Type, Content-Length and weak ETag. */
function sendJsonWithEtag(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.setHeader('ETag', weakEtag(text));
  sendJsonText(res, status, text);
}

export interface RouteOptions {
  /** Path parameters renamed to the tool's argument names, e.g. `{ repo: 'path' }` for `/git/*repo/status`. */
  rename?: Record<string, string>;
}

export interface RouteBuilder {
  /**
   * A documented REST route served by a tool's handler. By default GET/DELETE take the query string
   * (coerced by the tool's JSON Schema) and the rest take the JSON body, both merged with the path
   * parameters (a wildcard's segments joined by "/"), which `rename` can give the tool's argument
   * names. A function instead turns the whole request into the tool's arguments.
   */
  tool(method: HttpMethod, path: string, toolName: string, map?: ((req: Request) => unknown) | RouteOptions): void;
}

export interface ServiceAppOptions {
  service: string;
  version?: string;
  /** HOST, ALLOWED_HOSTS and ALLOWED_ORIGINS set the Host and Origin rule of every route (hostOriginRule; loopback and local pages when unset). */
  config: Pick<BaseConfig, 'BODY_LIMIT' | 'TOOL_TIMEOUT_MS'> & Partial<Pick<BaseConfig, 'HOST' | 'ALLOWED_HOSTS' | 'ALLOWED_ORIGINS'>>;
  logger: Logger;
  tools: ToolDefinition[];
  healthChecks?: HealthCheck[];
  routes?: (routes: RouteBuilder) => void;
  /** MCP prompts this service offers (GET /prompts/list, POST /prompts/get); without it both answer 404. */
  prompts?: PromptSource;
  /**
   * Raw routes that are not tools (e.g. inbound webhooks). Registered before the JSON parser; the
   * tool routes, hot ones included, stay behind whatever middleware this mounts. Middleware (any
   * app.use) or a route under /tools also turns off the hot path before Express and the gateway's
   * channel (both would go around it); routes elsewhere change neither.
   */
  extend?: (app: Express, kit: KitHandle) => void;
  /** Released on close: pools, files, timers. */
  onClose?: () => Promise<void> | void;
  /** Process-level default metrics; on unless turned off (e.g. by a test that builds many apps). */
  defaultMetrics?: boolean;
  /** Spans per request (W3C traceparent); the process tracer set at boot by default. */
  tracer?: FleetTracer;
}

/** Request header asking /tools/call to stream progress as NDJSON before the envelope. */
export const PROGRESS_HEADER = 'x-progress';

export interface CallOptions {
  requestId?: string;
  signal?: AbortSignal;
  /**
   * The call's own controller (its signal is the call's signal), when the caller made one for this
   * call alone: the tool's time limit aborts it instead of a second controller that follows it.
   */
  controller?: AbortController;
  /** The caller's Authorization header, handed to the tool as ctx.authorization. */
  authorization?: string;
  /** The request's logger (with trace_id and span_id) for the tool's log lines. */
  logger?: Logger;
  /** The request span's traceparent, for tools that call further services. */
  traceparent?: string;
  /** Receives the tool's progress reports. */
  progress?: (progress: number, total?: number, message?: string) => void;
  /** The caller's time budget (BUDGET_HEADER, checked by budgetFrom): shortens the tool's time limit, never lengthens it. */
  budgetMs?: number;
}

export interface KitHandle {
  service: string;
  logger: Logger;
  metrics: ServiceMetrics;
  callTool(name: string, args: unknown, options?: CallOptions): Promise<unknown>;
  /** Sends the error envelope for anything thrown. */
  sendError(res: HttpResponse, err: unknown): void;
}

export interface ServiceApp extends KitHandle {
  /** The server's request listener: the hot routes answered before Express (see createServiceApp), the rest by the Express app. */
  app: RequestListener;
  tools: ReadonlyMap<string, ToolDefinition>;
  close(): Promise<void>;
}

const toolCallBody = z.object({
  name: z.string().min(1).max(64),
  arguments: z.record(z.string(), z.unknown()).optional().default({}),
});

/**
 * A tool call's access line: one per call, at info (on by default), so every call, its trace id (the
 * request logger's trace_id and span_id), status and duration are in its service's log
 * (docs/observability.md). One log call and its fields: the only cost on the hot path.
 */
function accessLine(log: Logger, tool: string, err: AppError | undefined, started: number, requestId: string | undefined): void {
  const durationMs = Math.round(performance.now() - started);
  if (err) log.info('tool call', { tool, status: err.status, code: err.code, durationMs, requestId });
  else log.info('tool call', { tool, status: 200, durationMs, requestId });
}

/** Strings from a query string become numbers, booleans and arrays where the tool's schema says so. */
export function coerceQuery(query: Record<string, unknown>, inputSchema: Record<string, unknown>): Record<string, unknown> {
  const props = (inputSchema.properties ?? {}) as Record<string, { type?: string | string[] }>;
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(query)) {
    const types = ([] as string[]).concat(props[key]?.type ?? []);
    const one = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (types.includes('array')) {
      out[key] = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',').filter(Boolean) : raw;
    } else if (
      (types.includes('integer') || types.includes('number')) &&
      typeof one === 'string' &&
      one.trim() !== '' &&
      !Number.isNaN(Number(one))
    ) {
      out[key] = Number(one);
    } else if (types.includes('boolean') && (one === 'true' || one === 'false')) {
      out[key] = one === 'true';
    } else {
      out[key] = one;
    }
  }
  return out;
}

function flattenParams(params: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) out[k] = Array.isArray(v) ? v.join('/') : v;
  return out;
}

export function createServiceApp(options: ServiceAppOptions): ServiceApp {
  const { service, logger } = options;
  const version = options.version ?? '0.1.0';
  const startedAt = Date.now();
  // Process metrics (CPU, memory, event loop, GC) for every service unless a test turns them off.
  const metrics = createMetrics(service, options.defaultMetrics ?? true);
  const tracer = options.tracer ?? getProcessTracer();
  const tools = new Map<string, ToolDefinition>();
  for (const t of options.tools) {
    if (tools.has(t.name)) throw new Error(`${service}: tool ${t.name} is declared twice`);
    tools.set(t.name, t);
  }

  const sendError = makeSendError(service, logger, (res, appErr) =>
    (res.locals.span as FleetSpan | undefined)?.fail(appErr.code, appErr.message),
  );

  const callTool = async (name: string, args: unknown, call: CallOptions = {}) => {
    const tool = tools.get(name);
    const started = performance.now();
    // the request's logger carries its trace_id and span_id
    const log = call.logger ?? logger;
    if (!tool) {
      const unknown = new AppError('UNKNOWN_TOOL', `${service} has no tool named "${name}"; GET /tools/list shows the tools it offers.`);
      accessLine(log, name.slice(0, 200), unknown, started, call.requestId);
      throw unknown;
    }
    const end = metrics.toolDuration.startTimer({ tool: name });
    try {
      const result = await invokeTool(tool, args, {
        service,
        logger: log,
        traceparent: call.traceparent,
        requestId: call.requestId ?? randomUUID(),
        defaultTimeoutMs: options.config.TOOL_TIMEOUT_MS,
        budgetMs: call.budgetMs,
        signal: call.signal,
        controller: call.controller,
        authorization: call.authorization,
        progress: call.progress,
      });
      metrics.toolCalls.inc({ tool: name, outcome: 'ok' });
      accessLine(log, name, undefined, started, call.requestId);
      return result;
    } catch (err) {
      const appErr = toAppError(err);
      metrics.toolCalls.inc({ tool: name, outcome: appErr.code });
      accessLine(log, name, appErr, started, call.requestId);
      throw appErr;
    } finally {
      end();
    }
  };

  const kit: KitHandle = { service, logger, metrics, callTool, sendError };

  /** A request's span (a child of the caller's traceparent, the gateway's span) and its logger; both the HTTP routes and the channel use them. */
  const startRequestSpan = (name: string, traceparent: string | undefined, attributes: Record<string, string> = {}) => {
    const span = tracer.startSpan(name, { traceparent, attributes: { 'mcp_fleet.service': service, ...attributes } });
    return { span, logger: logger.child({ trace_id: span.traceId, span_id: span.spanId }) };
  };
  const endRequestSpan = (span: FleetSpan, route: string, status: number) => {
    span.setAttribute('http.route', route);
    span.setAttribute('http.response.status_code', status);
    span.end();
  };

  const context: RequestContextOptions = {
    metrics,
    // One span per request: a child of the caller's traceparent (the gateway's span) when sent.
    onStart: (req, res) => {
      const started = startRequestSpan(`${req.method} ${pathOf(req)}`, header(req, 'traceparent'));
      res.locals.span = started.span;
      res.locals.logger = started.logger;
    },
    onFinish: (_req, res, route) => endRequestSpan(res.locals.span as FleetSpan, route, res.statusCode),
  };
  // DNS rebinding: every route, those extend adds included, answers only this machine's names and local pages.
  const refused = hostOriginRule({
    listenHost: options.config.HOST,
    allowedHosts: options.config.ALLOWED_HOSTS,
    allowedOrigins: options.config.ALLOWED_ORIGINS,
  });

  const callOptions = (req: IncomingMessage, res: HttpResponse): CallOptions => {
    const controller = controllerOnClose(res);
    return {
      requestId: res.locals.requestId,
      controller,
      signal: controller.signal,
      authorization: req.headers.authorization,
      logger: res.locals.logger,
      traceparent: (res.locals.span as FleetSpan).traceparent,
      budgetMs: budgetFrom(req.headers[BUDGET_HEADER]),
    };
  };

  // The hot route: POST /tools/call and POST /tools/<name> with a plain JSON body, answered by one
  // handler without the router and the body parser (and without an ETag on the answer); the routes
  // below serve the same requests identically for everything else (progress streams, other encodings).
  const limit = byteLimit(options.config.BODY_LIMIT);
  const callFromBody = (tool: string): FastRoute => {
    const route = tool === 'call' ? '/tools/call' : '/tools/:tool';
    return async (req, res) => {
      res.locals.route = route;
      const body = await readJsonBody(req, limit);
      let name: string;
      let args: unknown = body;
      if (tool === 'call') {
        const parsed = parseOrThrow(toolCallBody, body, 'tool call; send {"name": "<tool>", "arguments": {...}}');
        name = parsed.name;
        args = parsed.arguments;
      } else {
        name = decodeURIComponent(tool);
      }
      sendJson(res, 200, successEnvelope(service, await callTool(name, args, callOptions(req, res))));
    };
  };
  /** One call of the gateway's channel: what POST /tools/call does for it (span, logger, counters, envelope). */
  const channelCall = async (frame: ChannelCall, controller: AbortController): Promise<ChannelAnswer> => {
    const started = process.hrtime.bigint();
    const { span, logger: log } = startRequestSpan(
      'POST /tools/call',
      typeof frame.traceparent === 'string' ? frame.traceparent : undefined,
      { 'mcp_fleet.transport': 'channel' },
    );
    let status = 200;
    try {
      const parsed = parseOrThrow(toolCallBody, frame.call, 'tool call; send {"name": "<tool>", "arguments": {...}}');
      const requestId = requestIdFrom(frame.requestId);
      const result = await callTool(parsed.name, parsed.arguments, {
        requestId,
        controller,
        logger: log,
        traceparent: span.traceparent,
        budgetMs: budgetFrom(frame.budgetMs),
      });
      return { status, body: successEnvelope(service, result) };
    } catch (err) {
      const appErr = toAppError(err);
      status = appErr.status;
      span.fail(appErr.code, appErr.message);
      logAppError(log, appErr, frame.requestId);
      return { status, body: errorEnvelope(service, appErr) };
    } finally {
      recordRequest(metrics, 'POST', '/tools/call', status, started);
      endRequestSpan(span, '/tools/call', status);
    }
  };

  const hotRoute = (req: IncomingMessage): FastRoute | undefined => {
    const url = req.url ?? '';
    if (req.method !== 'POST' || !url.startsWith('/tools/') || req.headers[PROGRESS_HEADER] !== undefined) return undefined;
    if (!isPlainJsonRequest(req)) return undefined;
    const query = url.indexOf('?');
    const tool = url.slice(7, query < 0 ? undefined : query);
    // a refused request goes to the app, whose guard answers it
    return tool.length === 0 || tool.includes('/') || refused(req) ? undefined : callFromBody(tool);
  };
  // The REST routes a service declares: checked now (a route naming an unknown tool stops the start), mounted with the app.
  const restRoutes: { method: HttpMethod; path: string; toolName: string; map?: ((req: Request) => unknown) | RouteOptions }[] = [];
  options.routes?.({
    tool(method, path, toolName, map) {
      if (!tools.has(toolName)) throw new Error(`${service}: route ${method.toUpperCase()} ${path} names unknown tool ${toolName}`);
      restRoutes.push({ method, path, toolName, map });
    },
  });

  const notFound = (method: string | undefined, path: string) =>
    new AppError('NOT_FOUND', `No route ${method} ${path} on ${service}; GET /tools/list shows its tools, POST /tools/call runs one.`);

  const health = async () => {
    const report = await runHealthChecks(service, version, startedAt, tools.size, options.healthChecks ?? []);
    return { status: report.status === 'unhealthy' ? 503 : 200, report };
  };
  const toolList = () => ({ service, tools: [...tools.values()].map(toolToJson) });
  const prompts = options.prompts;

  /**
   * The Express app: every route, the REST routes, what extend mounts. Made at creation for a
   * service with an extend (which mounts on it), else at the first request the fast path leaves to it.
   */
  const buildApp = (): { app: Express; guarded: boolean } => {
    const express = loadExpress();
    const app = express();
    app.disable('x-powered-by');
    app.set('query parser', 'extended');
    app.use(requestContext(context));
    app.use(requestGuard(refused, sendError));

    const mountedBefore = app.router.stack.length;
    options.extend?.(app, kit);
    const guarded = options.extend !== undefined && extendGuardsTools(app, mountedBefore);

    // A service whose extend mounts middleware (authorization, a readiness gate) keeps the hot route
    // behind it, in the app; the others answer it before Express (the listener below).
    if (guarded) {
      app.use((req: Request, res: Response, next: NextFunction) => {
        const handle = hotRoute(req);
        if (!handle) return next();
        handle(req, res).catch((err: unknown) => sendError(res, err));
      });
    }

    app.use(express.json({ limit: options.config.BODY_LIMIT, strict: true, type: ['application/json', 'application/*+json'] }));

    const runAndSend = async (req: Request, res: Response, name: string, args: unknown) => {
      const call = callOptions(req, res);
      if (req.get(PROGRESS_HEADER) !== 'ndjson') {
        res.json(successEnvelope(service, await callTool(name, args, call)));
        return;
      }
      // The caller (the gateway, for an MCP client that sent a progressToken) reads progress as it comes:
      // NDJSON lines {"progress", "total"?, "message"?}, then {"status", "envelope"} with the real status.
      res.status(200).setHeader('Content-Type', 'application/x-ndjson');
      res.flushHeaders();
      const line = (v: unknown) => {
        if (!res.writableEnded) res.write(`${JSON.stringify(v)}\n`);
      };
      call.progress = (progress, total, message) =>
        line({ progress, ...(total !== undefined ? { total } : {}), ...(message ? { message: message.slice(0, 500) } : {}) });
      try {
        line({ status: 200, envelope: successEnvelope(service, await callTool(name, args, call)) });
      } catch (err) {
        const appErr = toAppError(err);
        if (appErr.code === 'INTERNAL') logger.error(appErr.message, { err: appErr.cause ?? appErr, requestId: call.requestId });
        line({ status: statusForCode(appErr.code), envelope: errorEnvelope(service, appErr) });
      }
      res.end();
    };

    app.get('/health', async (_req, res) => {
      const { status, report } = await health();
      res.status(status).json(report);
    });

    app.get('/metrics', async (_req, res) => {
      res.setHeader('Content-Type', metrics.registry.contentType);
      res.send(await metrics.registry.metrics());
    });

    app.get('/tools/list', (_req, res) => {
      res.json(toolList());
    });

    app.post('/tools/call', async (req, res) => {
      const body = parseOrThrow(toolCallBody, req.body ?? {}, 'tool call; send {"name": "<tool>", "arguments": {...}}');
      await runAndSend(req, res, body.name, body.arguments);
    });

    app.post('/tools/:tool', async (req, res) => {
      await runAndSend(req, res, String(req.params.tool), req.body ?? {});
    });

    if (prompts) {
      app.get('/prompts/list', async (_req, res) => {
        res.json({ service, prompts: await listPromptsOf(prompts) });
      });
      app.post('/prompts/get', async (req, res) => {
        const body = parseOrThrow(promptGetBody, req.body ?? {}, 'prompt; send {"name": "<prompt>", "arguments": {"<name>": "<text>"}}');
        const call = callOptions(req, res);
        res.json(
          await getPromptOf(prompts, service, body.name, body.arguments, {
            requestId: call.requestId ?? randomUUID(),
            logger: call.logger ?? logger,
            signal: call.signal!,
            authorization: call.authorization,
          }),
        );
      });
    }

    for (const { method, path, toolName, map } of restRoutes) {
      const schema = toolToJson(tools.get(toolName)!).inputSchema;
      const rename = typeof map === 'object' ? (map.rename ?? {}) : {};
      const defaultMap = (req: Request) => {
        const params = flattenParams(req.params as Record<string, unknown>);
        for (const [from, to] of Object.entries(rename)) {
          if (!(from in params)) continue;
          params[to] = params[from];
          delete params[from];
        }
        if (method === 'get' || method === 'delete') {
          return { ...coerceQuery(req.query as Record<string, unknown>, schema), ...params };
        }
        const body = isPlainObject(req.body) ? req.body : {};
        return { ...body, ...params };
      };
      app[method](path, async (req: Request, res: Response) => {
        await runAndSend(req, res, toolName, (typeof map === 'function' ? map : defaultMap)(req));
      });
    }

    app.use((req: Request, res: Response) => sendError(res, notFound(req.method, req.path)));

    app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => sendError(res, err));
    return { app, guarded };
  };

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await options.onClose?.();
  };

  let built = options.extend ? buildApp() : undefined;
  const guarded = built?.guarded ?? false;
  // Built at the first request that needs it. A route Express cannot take (a malformed path) shows
  // then, as a 500 with the cause in the log on every such request, not as an uncaught exception.
  const expressApp: RequestListener = (req, res) => {
    try {
      built ??= buildApp();
    } catch (err) {
      const scoped = res as HttpResponse;
      scoped.locals ??= Object.create(null) as HttpResponse['locals'];
      return sendError(scoped, new AppError('INTERNAL', `${service} could not set up its routes.`, { cause: err }));
    }
    built.app(req, res);
  };

  /**
   * The GETs the gateway polls every few seconds (/health, /tools/list, /prompts/list), answered
   * before Express as its routes answer them (the same JSON, Content-Type and weak ETag; a missing
   * prompt list the not-found envelope), so an idle service never loads Express. Only for a service
   * without an extend (whose routes could stand in front of these) and a request without
   * If-None-Match or If-Modified-Since (Express answers those, a 304 where the ETag matches).
   */
  const polledGets: Record<string, FastRoute> = {
    '/health': async (_req, res) => {
      res.locals.route = '/health';
      const { status, report } = await health();
      sendJsonWithEtag(res, status, report);
    },
    '/tools/list': async (_req, res) => {
      res.locals.route = '/tools/list';
      sendJsonWithEtag(res, 200, toolList());
    },
    '/prompts/list': prompts
      ? async (_req, res) => {
          res.locals.route = '/prompts/list';
          sendJsonWithEtag(res, 200, { service, prompts: await listPromptsOf(prompts) });
        }
      : async (req, res) => sendError(res, notFound(req.method, pathOf(req))),
  };
  const polledGet = (req: IncomingMessage): FastRoute | undefined => {
    if (
      options.extend ||
      req.method !== 'GET' ||
      req.headers['if-none-match'] !== undefined ||
      req.headers['if-modified-since'] !== undefined
    )
      return undefined;
    const handle = Object.hasOwn(polledGets, pathOf(req)) ? polledGets[pathOf(req)] : undefined;
    // a refused request goes to the app, whose guard answers it
    return handle && !refused(req) ? handle : undefined;
  };

  const listener: UpgradableListener = guarded
    ? built!.app
    : withFastPath({
        app: expressApp,
        context,
        route: (req) => hotRoute(req) ?? polledGet(req),
        onError: (err, _req, res) => sendError(res, err),
      });
  // The gateway's channel (channel.ts): the hot route's calls without an HTTP request each. Not for a
  // service whose extend mounts middleware: the channel would go around it.
  if (!guarded) {
    const maxLine = limit;
    listener[UPGRADE] = (req, socket, head) => {
      if (!isChannelUpgrade(req) || refused(req)) {
        socket.destroy();
        return undefined;
      }
      return serveChannel(socket, head, channelCall, maxLine);
    };
  }
  return { app: listener, tools, close, ...kit };
}

/**
 * Whether what a service's extend mounted stands in front of its tool routes: middleware (any
 * app.use: authorization, a readiness gate) or a route of its own under /tools. Such a service
 * keeps its hot route in the app, behind them, and offers no channel (it would go around them); one
 * that only adds routes elsewhere (a webhook, an MCP endpoint, a page) keeps both.
 */
function extendGuardsTools(app: Express, from: number): boolean {
  const stack = (app as unknown as { router: { stack: { route?: { path?: unknown } }[] } }).router.stack;
  return stack.slice(from).some((layer) => !layer.route || String(layer.route.path).startsWith('/tools'));
}
