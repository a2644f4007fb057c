import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { makeSendError, requestContext, type Logger, type SendError } from '@mcp-fleet/kit';
import type { GatewayStats } from './stats';
import type { Transport } from './types';

/** The kit's request context (X-Request-Id, HTTP metrics) on the gateway's registry. */
export const gatewayRequestContext = (stats: GatewayStats): RequestHandler => requestContext({ metrics: stats.metrics });

/** The kit's error sender; the code of every error envelope is left for countRequests to count. */
export const gatewaySendError = (service: string, logger: Logger): SendError =>
  makeSendError(service, logger, (res, appErr) => {
    res.locals.errorCode = appErr.code;
  });

/**
 * The one place requests and errors are counted: when a response is done, the transport a route
 * named in `res.locals.transport` is counted with its outcome (`res.locals.ok`, else status < 400),
 * and the code in `res.locals.errorCode` (set by the error senders) as an error.
 */
export function countRequests(stats: GatewayStats): RequestHandler {
  return (_req: Request, res: Response, next: NextFunction) => {
    const count = () => {
      const transport = res.locals.transport as Transport | undefined;
      if (transport) stats.request(transport, (res.locals.ok as boolean | undefined) ?? res.statusCode < 400);
      if (typeof res.locals.errorCode === 'string') stats.error(res.locals.errorCode);
    };
    // 'close' follows 'finish' on every answer, and also ends one the client abandoned.
    res.on('close', count);
    next();
  };
}
