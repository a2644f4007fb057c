import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { errorEnvelope } from './envelope';
import { AppError, toAppError } from './errors';
import type { Logger } from './logger';
import type { ServiceMetrics } from './metrics';

/** HTTP plumbing shared by every service app and the gateway. */

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The caller's X-Request-Id when it is sane (1-128 of word, dot, colon, dash), else a new UUID. */
export function requestIdFrom(incoming: unknown): string {
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** Buckets (seconds) of every HTTP and tool-duration histogram in the fleet. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type HttpMetrics = Pick<ServiceMetrics, 'httpRequests' | 'httpDuration'>;

export interface RequestContextOptions {
  metrics: HttpMetrics;
  /** Called when the answer is finished, with its route label (e.g. to end a span or count a request). */
  onFinish?: (req: Request, res: Response, route: string) => void;
  /** Called first, after the request id is set (e.g. to start a span). */
  onStart?: (req: Request, res: Response) => void;
}

/**
 * Sets res.locals.requestId and X-Request-Id, and counts and times every request by route (the
 * Express route, or `res.locals.route` set by a handler that answers before the router).
 */
export function requestContext(options: RequestContextOptions): RequestHandler {
  const { httpRequests, httpDuration } = options.metrics;
  return (req, res, next) => {
    const requestId = requestIdFrom(req.headers['x-request-id']);
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    options.onStart?.(req, res);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = (res.locals.route as string | undefined) ?? (req.route?.path ? String(req.baseUrl + req.route.path) : 'unmatched');
      httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      httpDuration.observe({ method: req.method, route }, Number(process.hrtime.bigint() - started) / 1e9);
      options.onFinish?.(req, res, route);
    });
    next();
  };
}

export type SendError = (res: Response, err: unknown) => void;

/**
 * The error sender: anything thrown becomes the error envelope with its status (and Retry-After);
 * 5xx are logged as errors with their cause, the rest at debug. `onError` sees every error first
 * (metrics, spans).
 */
export function makeSendError(service: string, logger: Logger, onError?: (res: Response, err: AppError) => void): SendError {
  return (res, err) => {
    const appErr = toAppError(err);
    const log: Logger = res.locals.logger ?? logger;
    onError?.(res, appErr);
    if (appErr.status >= 500) {
      log.error(appErr.message, { code: appErr.code, requestId: res.locals.requestId, err: appErr.cause ?? appErr });
    } else {
      log.debug(appErr.message, { code: appErr.code, requestId: res.locals.requestId });
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    if (appErr.retryAfter !== undefined) res.setHeader('Retry-After', String(appErr.retryAfter));
    res.status(appErr.status).json(errorEnvelope(service, appErr));
  };
}

/** Aborted when the client disconnects before the answer is sent. */
export function abortOnClose(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new AppError('TIMEOUT', 'The client closed the connection.'));
  });
  return controller.signal;
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Browsers send Origin on cross-site requests; an MCP endpoint runs tools, so only local pages and
 * the origins in ALLOWED_ORIGINS may POST to it (MCP's DNS-rebinding rule: an invalid Origin is
 * refused with 403). Requests without Origin (curl, SDK clients, services) are not affected.
 */
export function originGuard(allowed: readonly string[], sendError: SendError): RequestHandler {
  const allow = new Set(allowed.map((o) => o.replace(/\/+$/, '')));
  return (req: Request, res: Response, next: NextFunction) => {
    const origin = req.headers.origin;
    if (origin === undefined || allow.has(origin)) return next();
    let host = '';
    try {
      host = new URL(origin).hostname;
    } catch {
      // "null" and other opaque origins are refused below
    }
    if (LOCAL_HOSTS.has(host)) return next();
    sendError(
      res,
      new AppError(
        'FORBIDDEN',
        `Requests from origin ${origin.slice(0, 100)} are not allowed; add it to ALLOWED_ORIGINS to let that page call this service.`,
      ),
    );
  };
}
