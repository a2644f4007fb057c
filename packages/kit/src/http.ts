import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { errorEnvelope } from './envelope';
import { AppError, toAppError } from './errors';
import { sendJson } from './fast-json';
import type { Logger } from './logger';
import type { ServiceMetrics } from './metrics';

/**
 * HTTP plumbing shared by every service app and the gateway. It works on Node's request and
 * response, which Express's request and response extend, so the same code serves a request inside
 * an Express app and one answered before it (withFastPath).
 */

/** A request whose body may already be parsed (by Express's body parser or a hot path). */
export type HttpRequest = IncomingMessage & { body?: unknown };

/** A response with Express's `res.locals`: what an Express response is, and what withFastPath makes of Node's. */
export type HttpResponse = ServerResponse & Pick<Response, 'locals'>;

/** A request header as one string, as Express's req.get gives it (`name` in lower case). */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The request's path without its query: Express's req.path once Express has the request, else the URL's. */
export function pathOf(req: IncomingMessage): string {
  const expressPath = (req as Partial<Request>).path;
  if (expressPath !== undefined) return expressPath;
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The caller's X-Request-Id when it is sane (1-128 of word, dot, colon, dash), else a new UUID. */
export function requestIdFrom(incoming: unknown): string {
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

export type HttpMetrics = Pick<ServiceMetrics, 'httpRequests' | 'httpDuration'>;

export interface RequestContextOptions {
  metrics: HttpMetrics;
  /** Called when the answer is finished, with its route label (e.g. to end a span or count a request). */
  onFinish?: (req: IncomingMessage, res: HttpResponse, route: string) => void;
  /** Called first, after the request id is set (e.g. to start a span). */
  onStart?: (req: IncomingMessage, res: HttpResponse) => void;
}

/** The route label: `res.locals.route` when a handler set it, else the Express route that matched. */
function routeOf(req: IncomingMessage, res: HttpResponse): string {
  const matched = req as Partial<Request>;
  return (
    (res.locals.route as string | undefined) ??
    (matched.route?.path ? String(`${matched.baseUrl ?? ''}${matched.route.path}`) : 'unmatched')
  );
}

/**
 * A request's context: sets res.locals.requestId and X-Request-Id, and counts and times the request
 * by route (the Express route, or `res.locals.route` set by a handler that answers before the router).
 */
export function trackRequest(req: IncomingMessage, res: HttpResponse, options: RequestContextOptions): void {
  const requestId = requestIdFrom(req.headers['x-request-id']);
  res.locals.requestId = requestId;
  res.setHeader('X-Request-Id', requestId);
  options.onStart?.(req, res);
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const route = routeOf(req, res);
    recordRequest(options.metrics, req.method, route, res.statusCode, started);
    options.onFinish?.(req, res, route);
  });
}

/** Counts and times one answered request under its route (the HTTP routes, and the channel's calls as POST /tools/call). */
export function recordRequest(metrics: HttpMetrics, method: string | undefined, route: string, status: number, started: bigint): void {
  metrics.httpRequests.inc({ method, route, status: String(status) });
  metrics.httpDuration.observe({ method, route }, Number(process.hrtime.bigint() - started) / 1e9);
}

/** trackRequest as the first Express middleware. */
export function requestContext(options: RequestContextOptions): RequestHandler {
  return (req, res, next) => {
    trackRequest(req, res, options);
    next();
  };
}

/** The handler of a request answered before Express. Whatever it throws goes to FastPathOptions.onError. */
export type FastRoute = (req: HttpRequest, res: HttpResponse) => Promise<void>;

export interface FastPathOptions {
  /** The Express app: it answers every request the fast path does not take. */
  app: RequestListener;
  /** The options of the app's requestContext middleware: a fast request gets the same context. */
  context: RequestContextOptions;
  /** The handler of a request the fast path answers, or undefined to leave it to the app (decided on the request line and headers). */
  route: (req: IncomingMessage) => FastRoute | undefined;
  /** Answers an error as the app's error handler does. */
  onError: (err: unknown, req: HttpRequest, res: HttpResponse) => void;
}

/**
 * The server's request listener: the hot routes are answered here, before Express (no app.handle,
 * router, prototype swap or middleware chain), with the same request context as the app gives;
 * every other request goes to the app. Only for routes that no middleware of the app guards.
 */
export function withFastPath(options: FastPathOptions): RequestListener {
  const { app, context, route, onError } = options;
  return (req, res) => {
    const handle = route(req);
    if (!handle) return app(req, res);
    const scoped = res as HttpResponse;
    // As Express's app.handle does
    scoped.locals ??= Object.create(null) as HttpResponse['locals'];
    trackRequest(req, scoped, context);
    handle(req, scoped).catch((err: unknown) => onError(err, req, scoped));
  };
}

export type SendError = (res: HttpResponse, err: unknown) => void;

/**
 * A failed request's error in the log: a fault of the service (INTERNAL) as an error with its cause
 * and stack; a backend that is missing, failing or slow (NOT_CONFIGURED, UPSTREAM_*, TIMEOUT) as a
 * warning with its cause's message and no stack (it is a state the message explains, and a caller
 * repeating the call must not grow the log by a stack trace each time); a caller's mistake at debug.
 */
export function logAppError(log: Logger, appErr: AppError, requestId: string | undefined): void {
  if (appErr.code === 'INTERNAL') log.error(appErr.message, { code: appErr.code, requestId, err: appErr.cause ?? appErr });
  else if (appErr.status >= 500) {
    const cause = appErr.cause instanceof Error ? appErr.cause.message : appErr.cause === undefined ? undefined : String(appErr.cause);
    log.warn(appErr.message, { code: appErr.code, requestId, ...(cause !== undefined && cause !== appErr.message ? { cause } : {}) });
  } else log.debug(appErr.message, { code: appErr.code, requestId });
}

/**
 * The error sender: anything thrown becomes the error envelope with its status (and Retry-After);
 * 5xx are logged as errors with their cause, the rest at debug. `onError` sees every error first
 * (metrics, spans). Written with sendJson, inside Express or not (so without an ETag, which no
 * error answer can use).
 */
export function makeSendError(service: string, logger: Logger, onError?: (res: HttpResponse, err: AppError) => void): SendError {
  return (res, err) => {
    const appErr = toAppError(err);
    const log: Logger = res.locals.logger ?? logger;
    onError?.(res, appErr);
    logAppError(log, appErr, res.locals.requestId as string | undefined);
    if (res.headersSent) {
      res.end();
      return;
    }
    if (appErr.retryAfter !== undefined) res.setHeader('Retry-After', String(appErr.retryAfter));
    sendJson(res, appErr.status, errorEnvelope(service, appErr));
  };
}

/** Aborted when the client disconnects before the answer is sent. */
export function abortOnClose(res: ServerResponse): AbortSignal {
  return controllerOnClose(res).signal;
}

/** abortOnClose's controller, for a caller that hands it on as the request's own (CallOptions.controller). */
export function controllerOnClose(res: ServerResponse): AbortController {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new AppError('TIMEOUT', 'The client closed the connection.'));
  });
  return controller;
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Loopback names a browser resolves to this machine and no DNS answer can rebind (RFC 6761 `.localhost` too). */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);
/** A `.localhost` subdomain: DNS labels only, so that nothing else can ride on the suffix. */
const LOCALHOST_SUBDOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+localhost$/;
/** Interfaces that are every address: no one name of them is the service's own. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);
const PORT = /^[0-9]{1,5}$/;

/**
 * The host name of an authority (a Host header, an origin without its scheme), lower-cased, without
 * its port; undefined when it is not `name`, `name:port`, `[v6]` or `[v6]:port`.
 */
export function hostNameOf(authority: string): string | undefined {
  let end: number;
  if (authority.charCodeAt(0) === 91 /* [ */) {
    end = authority.indexOf(']') + 1;
    if (end === 0) return undefined;
  } else {
    end = authority.indexOf(':');
    if (end < 0) end = authority.length;
  }
  if (end === 0) return undefined;
  if (end < authority.length && (authority.charCodeAt(end) !== 58 /* : */ || !PORT.test(authority.slice(end + 1)))) return undefined;
  return authority.slice(0, end).toLowerCase();
}

/** Whether a host name (from hostNameOf) is a loopback name: localhost, 127.0.0.1, [::1] or a `.localhost` name. */
export function isLoopbackName(name: string): boolean {
  return LOOPBACK_NAMES.has(name) || (name.endsWith('.localhost') && LOCALHOST_SUBDOMAIN.test(name));
}

/** Whether a listening address (HOST) is on loopback only: 127.x, ::1 or localhost. */
export function isLoopbackInterface(host: string): boolean {
  const h = host.toLowerCase();
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

export interface HostOriginOptions {
  /** The interface the service listens on (HOST; default 127.0.0.1): on loopback, a request without Host is let in. */
  listenHost?: string;
  /** Host names (any port) answered besides the loopback names and the listen address (ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** Browser origins let in besides local pages and the service's own origin (ALLOWED_ORIGINS). */
  allowedOrigins?: readonly string[];
}

/** Why a request was refused, or undefined to let it in. */
export type RequestRule = (req: IncomingMessage) => AppError | undefined;

/** An origin as ALLOWED_ORIGINS lists it and as it is compared: trimmed, without a trailing slash, lower case. */
export const normalOrigin = (o: string) => o.trim().replace(/\/+$/, '').toLowerCase();

/** The origin's authority (after http:// or https://), or undefined for another scheme or an opaque origin ("null"). */
function authorityOf(origin: string): string | undefined {
  const lower = origin.slice(0, 8).toLowerCase();
  if (lower.startsWith('http://')) return origin.slice(7);
  if (lower === 'https://') return origin.slice(8);
  return undefined;
}

/**
 * Whether a browser page of this origin may call: no Origin (curl, SDKs, services), an origin in
 * `allowed`, a local page (http(s) on a loopback name) or the page's own origin (its authority is the
 * request's Host, already accepted).
 */
function originRefusal(origin: string | undefined, host: string | undefined, allowed: ReadonlySet<string>): AppError | undefined {
  if (origin === undefined || allowed.has(origin) || allowed.has(normalOrigin(origin))) return undefined;
  const authority = authorityOf(origin);
  if (authority !== undefined) {
    const name = hostNameOf(authority);
    if (name !== undefined && (isLoopbackName(name) || (host !== undefined && authority.toLowerCase() === host.toLowerCase())))
      return undefined;
  }
  return new AppError(
    'FORBIDDEN',
    `Requests from origin ${origin.slice(0, 100)} are not allowed (a page on another site); add it to ALLOWED_ORIGINS to let that page call this service.`,
  );
}

/**
 * The fleet's DNS-rebinding rule, applied to every request of every service (MCP's rule for its
 * HTTP transport): the Host must name this machine's loopback (localhost, *.localhost, 127.0.0.1,
 * [::1], any port), the address the service listens on, or a name in ALLOWED_HOSTS; a request
 * without Host only on a loopback listener. A request carrying an Origin must come from a local
 * page, the service's own origin or one in ALLOWED_ORIGINS. A web page rebinding its own name to
 * 127.0.0.1 sends its own name as Host (and its own Origin), and is refused with FORBIDDEN (403).
 * The common request (an accepted Host seen before, no Origin) costs a set lookup.
 */
export function hostOriginRule(options: HostOriginOptions = {}): RequestRule {
  const listenHost = (options.listenHost ?? '127.0.0.1').toLowerCase();
  const onLoopback = isLoopbackInterface(listenHost);
  const names = new Set(
    (options.allowedHosts ?? [])
      .map((h) => h.trim())
      .filter(Boolean)
      .map((h) => hostNameOf(h) ?? h.toLowerCase()),
  );
  if (!WILDCARD_HOSTS.has(listenHost)) names.add(listenHost.includes(':') && !listenHost.startsWith('[') ? `[${listenHost}]` : listenHost);
  const origins = new Set((options.allowedOrigins ?? []).map(normalOrigin));
  // Host values accepted before, as sent: the hot path's one lookup (bounded: every spelling of a name could be sent).
  const seen = new Set<string>();
  const hostRefusal = (host: string | undefined): AppError | undefined => {
    if (host === undefined || host === '') {
      if (onLoopback) return undefined;
      return new AppError(
        'FORBIDDEN',
        'A request without a Host header is answered only on a loopback listener; send Host with a name in ALLOWED_HOSTS.',
      );
    }
    if (seen.has(host)) return undefined;
    const name = hostNameOf(host);
    if (name !== undefined && (isLoopbackName(name) || names.has(name))) {
      if (seen.size < 64) seen.add(host);
      return undefined;
    }
    const what = onLoopback
      ? 'call this service at localhost, 127.0.0.1 or [::1], or add the name to ALLOWED_HOSTS'
      : `add the name clients call this service by to ALLOWED_HOSTS (it listens on ${listenHost})`;
    return new AppError('FORBIDDEN', `Requests for host ${host.slice(0, 100)} are not allowed (DNS-rebinding protection); ${what}.`);
  };
  return (req) => {
    const host = req.headers.host;
    return hostRefusal(host) ?? originRefusal(req.headers.origin, host, origins);
  };
}

/** A RequestRule (hostOriginRule) as middleware (Express or withFastPath): a refused request gets its error envelope. */
export function requestGuard(
  refused: RequestRule,
  sendError: SendError,
): (req: IncomingMessage, res: HttpResponse, next: () => void) => void {
  return (req, res, next) => {
    const err = refused(req);
    if (err) return sendError(res, err);
    next();
  };
}
