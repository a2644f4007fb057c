import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, errorEnvelope, toAppError, type Logger } from '@mcp-fleet/kit';
import type { GatewayStats } from './stats';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** X-Request-Id (kept when the caller's is sane) and HTTP metrics, like the kit's service apps. */
export function requestContext(stats: GatewayStats): RequestHandler {
  const { httpRequests, httpDuration } = stats.metrics;
  return (req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = req.route?.path ? String(req.baseUrl + req.route.path) : 'unmatched';
      httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      httpDuration.observe({ method: req.method, route }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}

export function makeSendError(service: string, logger: Logger, stats: GatewayStats) {
  return (res: Response, err: unknown): void => {
    const appErr = toAppError(err);
    stats.error(appErr.code);
    if (appErr.status >= 500)
      logger.error(appErr.message, { code: appErr.code, requestId: res.locals.requestId, err: appErr.cause ?? appErr });
    else logger.debug(appErr.message, { code: appErr.code, requestId: res.locals.requestId });
    if (res.headersSent) {
      res.end();
      return;
    }
    if (appErr.retryAfter !== undefined) res.setHeader('Retry-After', String(appErr.retryAfter));
    res.status(appErr.status).json(errorEnvelope(service, appErr));
  };
}

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Browsers send Origin on cross-site requests; the gateway runs tools, so only local pages and the
 * origins in ALLOWED_ORIGINS may POST to it (MCP's DNS-rebinding rule). Requests without Origin
 * (curl, SDK clients, services) are not affected.
 */
export function originGuard(allowed: readonly string[], sendError: (res: Response, err: unknown) => void): RequestHandler {
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
        `Requests from origin ${origin.slice(0, 100)} are not allowed; add it to ALLOWED_ORIGINS to let that page call the gateway.`,
      ),
    );
  };
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Aborted when the client disconnects before the answer is sent. */
export function abortOnClose(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort(new AppError('TIMEOUT', 'The client closed the connection.'));
  });
  return controller.signal;
}
