import type { IncomingMessage } from 'node:http';
import { AppError, makeSendError, type HttpResponse, type Logger, type RequestContextOptions, type SendError } from '@mcp-fleet/kit';
import type { GatewayStats } from './stats';
import type { Transport } from './types';

/**
 * The gateway's request context: the kit's (X-Request-Id, HTTP metrics) on the gateway's registry,
 * and the one place requests and errors are counted: when a response is done, the transport a
 * route named in `res.locals.transport` is counted with its outcome (`res.locals.ok`, else status
 * < 400), and the code in `res.locals.errorCode` (set by the error senders) as an error. The app's
 * requestContext middleware and its hot path (withFastPath) both use it.
 */
export function gatewayContext(stats: GatewayStats): RequestContextOptions {
  return {
    metrics: stats.metrics,
    onStart: (_req, res) => {
      // 'close' follows 'finish' on every answer, and also ends one the client abandoned.
      res.on('close', () => {
        const transport = res.locals.transport as Transport | undefined;
        if (transport) stats.request(transport, (res.locals.ok as boolean | undefined) ?? res.statusCode < 400);
        if (typeof res.locals.errorCode === 'string') stats.error(res.locals.errorCode);
      });
    },
  };
}

/** The kit's error sender; the code of every error envelope is left for the request context to count. */
export const gatewaySendError = (service: string, logger: Logger): SendError =>
  makeSendError(service, logger, (res, appErr) => {
    res.locals.errorCode = appErr.code;
  });

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Browsers send Origin on cross-site requests; the gateway runs tools, so only local pages and the
 * origins in ALLOWED_ORIGINS may POST to it (MCP's DNS-rebinding rule). Requests without Origin
 * (curl, SDK clients, services) are not affected. Gives the FORBIDDEN error of a refused request.
 */
export function originRule(allowed: readonly string[]): (req: IncomingMessage) => AppError | undefined {
  const allow = new Set(allowed.map((o) => o.replace(/\/+$/, '')));
  return (req) => {
    const origin = req.headers.origin;
    if (origin === undefined || allow.has(origin)) return undefined;
    let host = '';
    try {
      host = new URL(origin).hostname;
    } catch {
      // "null" and other opaque origins are refused below
    }
    if (LOCAL_HOSTS.has(host)) return undefined;
    return new AppError(
      'FORBIDDEN',
      `Requests from origin ${origin.slice(0, 100)} are not allowed; add it to ALLOWED_ORIGINS to let that page call the gateway.`,
    );
  };
}

/** originRule as middleware: a refused request gets its error envelope. */
export function originGuard(
  refused: (req: IncomingMessage) => AppError | undefined,
  sendError: SendError,
): (req: IncomingMessage, res: HttpResponse, next: () => void) => void {
  return (req, res, next) => {
    const err = refused(req);
    if (err) return sendError(res, err);
    next();
  };
}
