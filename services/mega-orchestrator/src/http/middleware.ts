import { makeSendError, type Logger, type RequestContextOptions, type SendError } from '@mcp-fleet/kit';
import type { GatewayStats } from '../core/stats';
import type { Transport } from '../core/types';

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
