/**
 * POST /mcp, the gateway's MCP endpoint, routed in one place: a native body ({tool, arguments}),
 * a 2026-07-28 request (mcp/rev-2026-07-28/server.ts), or a 2025-era one (a session's, a sessionless
 * one or a batch: mcp/rev-2025-11-25/session-transport.ts), every method from the one table
 * (mcp/methods.ts). Also POST /mcp/rpc (JSON-RPC only) and GET/DELETE /mcp (a 2025 session's stream
 * and end), and the hot path: a plain JSON POST /mcp read and handed to the same handler before
 * Express when nothing in the app guards it (app.ts), inside it otherwise.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, Request, RequestHandler, Response } from 'express';
import {
  byteLimit,
  isPlainJsonRequest,
  isPlainObject,
  isStatelessRequest,
  JSONRPC_CODES,
  pathOf,
  readJsonBody,
  sendJson,
  type FastRoute,
  type HttpRequest,
  type HttpResponse,
  type RequestRule,
} from '@mcp-fleet/kit';
import type { Config } from '../../core/config';
import { sendRpcError } from '../../mcp/errors';
import { onlyNotifications, rpcError } from '../../mcp/jsonrpc';
import type { McpContext } from '../../mcp/context';
import type { McpSessionTransport } from '../../mcp/rev-2025-11-25/session-transport';
import { isProvenForward } from '../../mcp/rev-2026-07-28/peer-forward';
import { handleStateless } from '../../mcp/rev-2026-07-28/server';
import { nativeCall, type NativeCall } from './native';

/** POST /mcp with its body read into req.body; Express's request and response are these too. */
export type McpPostHandler = (req: HttpRequest, res: HttpResponse) => Promise<void>;

export interface McpHandlers {
  /** POST /mcp: JSON-RPC (either era) or the native body. */
  postMcp: McpPostHandler;
  /** A JSON-RPC body: 2026-07-28 when it says so, else the 2025-era transport. */
  rpc: (req: HttpRequest, res: HttpResponse, body: unknown) => Promise<void>;
  native: NativeCall;
}

/** True for a parsed body that is JSON-RPC (a message or a batch), not the native one. */
const isJsonRpc = (body: unknown) => Array.isArray(body) || (isPlainObject(body) && 'jsonrpc' in body);

/** The endpoint's handlers around one context and its session transport: the gateway's (/mcp), or a virtual server's. */
export function mcpHandlers(ctx: McpContext, mcp: McpSessionTransport): McpHandlers {
  const native = nativeCall(ctx);
  const rpc = async (req: HttpRequest, res: HttpResponse, body: unknown) => {
    res.locals.transport = 'jsonrpc';
    if (isStatelessRequest(req, body)) return handleStateless(ctx, req, res, body, ctx.config.MCP_PAGE_SIZE);
    await mcp.handlePost(req, res, body);
  };
  const postMcp: McpPostHandler = async (req, res) => {
    const body: unknown = req.body;
    return isJsonRpc(body) ? rpc(req, res, body) : native(req, res, 'native');
  };
  return { postMcp, rpc, native };
}

export function registerMcpRoutes(
  app: Express,
  mcp: McpSessionTransport,
  handlers: Omit<McpHandlers, 'postMcp'> & { postMcp: (req: Request, res: Response) => Promise<void> },
): void {
  const { postMcp, rpc } = handlers;
  app.post('/mcp', postMcp);

  app.post('/mcp/rpc', async (req, res) => {
    const body: unknown = req.body;
    if (!isJsonRpc(body)) {
      res.locals.transport = 'jsonrpc';
      res.locals.errorCode = 'INVALID_REQUEST';
      return sendRpcError(
        res,
        null,
        JSONRPC_CODES.INVALID_REQUEST,
        'Invalid Request: POST /mcp/rpc takes JSON-RPC 2.0 ({"jsonrpc": "2.0", "id": 1, "method": ...}).',
      );
    }
    return rpc(req, res, body);
  });

  app.get('/mcp', (req, res) => mcp.handleSession(req, res));
  app.delete('/mcp', (req, res) => mcp.handleSession(req, res));
  app.all('/mcp', methodNotAllowed('GET, POST, DELETE'));
  app.all('/mcp/rpc', methodNotAllowed('POST'));
}

/**
 * The answer to an HTTP method an MCP endpoint does not take (PUT /mcp, GET /mcp/rpc, ...): 405 with
 * the methods it does take in Allow, and a JSON-RPC error as the SDK's transports answer it.
 */
export const methodNotAllowed =
  (allow: string): RequestHandler =>
  (req, res) => {
    res.locals.errorCode = 'INVALID_REQUEST';
    res.set('Allow', allow);
    sendJson(
      res,
      405,
      rpcError(
        null,
        JSONRPC_CODES.INVALID_REQUEST,
        `Method not allowed: ${req.method} ${req.path.slice(0, 200)} takes ${allow.replace(/, (?=[^,]*$)/, ' or ')}.`,
      ),
    );
  };

/** True when a request that failed before its body was read was a JSON-RPC one. */
export function wantsJsonRpc(req: IncomingMessage): boolean {
  return (
    pathOf(req) === '/mcp/rpc' ||
    req.headers['mcp-session-id'] !== undefined ||
    req.headers['mcp-protocol-version'] !== undefined ||
    (req.headers.accept ?? '').includes('text/event-stream')
  );
}

export interface McpHotPath {
  /** A plain JSON POST /mcp: the requests the hot path takes. */
  isPlainMcpPost: (req: IncomingMessage) => boolean;
  /** POST /mcp as the app serves it (behind the rate limit when one is on). */
  postMcp: (req: Request, res: Response) => Promise<void>;
  /** The app's middleware that reads a plain POST /mcp and hands it to postMcp. */
  middleware: RequestHandler;
  /** The same before Express (withFastPath), when nothing in the app guards POST /mcp. */
  fast: FastRoute;
}

/**
 * The hot route: POST /mcp with a plain JSON body is read and handed straight to its handler,
 * skipping the proxy route, the router and the body parser (the same handler serves it in the
 * app for every other request shape). The Host/Origin rule (DNS rebinding) is checked here, as
 * the app's guard checks it for every other request.
 */
export function mcpHotPath(options: {
  config: Pick<Config, 'BODY_LIMIT' | 'MCP_STATE_SECRET'>;
  refused: RequestRule;
  /** CORS of the MCP endpoints (ALLOWED_ORIGINS, ../cors.ts), when any origin is listed: its headers are set here too. */
  cors?: { handle(req: IncomingMessage, res: ServerResponse): boolean };
  handlers: McpHandlers;
  /** The rate limiter, when RATE_LIMIT_PER_MINUTE is on. */
  limiter?: RequestHandler;
}): McpHotPath {
  const { config, refused, cors, handlers, limiter } = options;
  const bodyLimit = byteLimit(config.BODY_LIMIT);
  const isPlainMcpPost = (req: IncomingMessage) =>
    req.method === 'POST' && (req.url === '/mcp' || req.url?.startsWith('/mcp?') === true) && isPlainJsonRequest(req);
  const readThen =
    <Req extends HttpRequest, Res extends HttpResponse>(post: (req: Req, res: Res) => Promise<void>, beforeExpress = false) =>
    async (req: Req, res: Res) => {
      // Counted under the route that serves the other shapes (not "unmatched": no route ran).
      res.locals.route = '/mcp';
      const refusal = refused(req);
      if (refusal) throw refusal;
      // in the app, its CORS middleware has set the headers already
      if (beforeExpress) cors?.handle(req, res as unknown as ServerResponse);
      req.body = await readJsonBody(req, bodyLimit);
      await post(req, res);
    };
  let postMcp: (req: Request, res: Response) => Promise<void> = handlers.postMcp;
  if (limiter) {
    // POST /mcp is counted once its body is read, so that MCP notifications and responses (cancel,
    // initialized, replies to the server) go free: a caller at its limit can still cancel what it
    // started. Nor is a retry another instance forwarded here (it counted it). Everything else is,
    // with its request id.
    const post = handlers.postMcp;
    postMcp = (req, res) =>
      !countedAfterBody(req) || onlyNotifications(req.body) || isProvenForward(req, req.body, config.MCP_STATE_SECRET)
        ? post(req, res)
        : new Promise<void>((resolve, reject) => limiter(req, res, (err?: unknown) => (err ? reject(err) : resolve(post(req, res)))));
  }
  const readPostMcp = readThen(postMcp);
  return {
    isPlainMcpPost,
    postMcp,
    middleware: (req, res, next) => (isPlainMcpPost(req) ? readPostMcp(req, res).catch(next) : next()),
    fast: readThen(handlers.postMcp, true),
  };
}

/** POST /mcp, which the rate limiter counts only once its body is read (mcpHotPath). */
export const countedAfterBody = (req: Request) => req.method === 'POST' && req.path === '/mcp';
