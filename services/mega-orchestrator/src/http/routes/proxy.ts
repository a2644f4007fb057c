import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express, Request, Response } from 'express';
import { AppError, BUDGET_HEADER, budgetFrom } from '@mcp-fleet/kit';
import { createProxyMiddleware } from 'http-proxy-middleware';
import type { GatewayContext } from '../../core/context';
import { budgetText } from '../../downstream/http-client';

const TARGET = Symbol('gateway.proxyTarget');
type ProxiedRequest = http.IncomingMessage & { [TARGET]?: string };

/**
 * ALL /mcp/{service}/*rest: proxied unchanged to that service (e.g. GET /mcp/system-mcp/health ->
 * GET {system-mcp}/health). Registered before the JSON parser so bodies stream through untouched;
 * the app's Host and Origin rule (hostOriginRule) has already let the request in.
 */
export function registerProxyRoute(app: Express, ctx: GatewayContext, sendError: (res: Response, err: unknown) => void): { close(): void } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: ctx.config.DOWNSTREAM_CONNECTIONS });
  const proxy = createProxyMiddleware<Request, Response>({
    router: (req) => (req as ProxiedRequest)[TARGET],
    changeOrigin: true,
    agent,
    proxyTimeout: ctx.config.DOWNSTREAM_TIMEOUT_MS,
    pathRewrite: (path) => path.replace(/^\/mcp\/[^/?]+/, '') || '/',
    logger: undefined,
    on: {
      proxyReq: (proxyReq, req) => {
        const res = (req as Request).res;
        if (res?.locals.requestId) proxyReq.setHeader('x-request-id', String(res.locals.requestId));
        // The gateway judged the page (hostOriginRule, its ALLOWED_ORIGINS); the call to the service is its own.
        proxyReq.removeHeader('origin');
        // The service ends the call before the proxy gives up on it; a caller's own budget may only be shorter.
        const ours = budgetText(ctx.config.DOWNSTREAM_TIMEOUT_MS);
        const theirs = budgetFrom(req.headers[BUDGET_HEADER]);
        proxyReq.setHeader(BUDGET_HEADER, theirs !== undefined && theirs < Number(ours) ? String(theirs) : ours);
      },
      proxyRes: (proxyRes, req) => {
        const res = (req as Request).res;
        // a downstream's 4xx is the caller's mistake, not a failed proxy request
        if (res) res.locals.ok = (proxyRes.statusCode ?? 500) < 500;
      },
      error: (err, req, res) => {
        const locals = (req as Request).res?.locals;
        if (locals) locals.ok = false;
        const target = (req as ProxiedRequest)[TARGET] ?? 'the service';
        const code = (err as NodeJS.ErrnoException).code;
        const appErr =
          code === 'ECONNRESET' && (req as Request).res?.headersSent
            ? undefined
            : code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT'
              ? new AppError('TIMEOUT', `${target} did not answer within ${ctx.config.DOWNSTREAM_TIMEOUT_MS} ms.`)
              : new AppError(
                  'UPSTREAM_UNAVAILABLE',
                  `${target} could not be reached (${code ?? err.message}); GET /services shows its state.`,
                  {
                    retryAfter: 1,
                  },
                );
        if ('writeHead' in res && appErr) sendError(res as Response, appErr);
        else if ('destroy' in res) (res as Socket | http.ServerResponse).destroy();
      },
    },
  });

  app.all('/mcp/:service/*rest', (req, res, next) => {
    const id = String(req.params.service);
    const service = ctx.registry.get(id);
    res.locals.transport = 'proxy';
    if (!service) {
      return sendError(res, new AppError('NOT_FOUND', `No downstream service "${id.slice(0, 100)}"; GET /services lists them.`));
    }
    (req as ProxiedRequest)[TARGET] = service.spec.url;
    return proxy(req, res, next);
  });

  return { close: () => agent.destroy() };
}
