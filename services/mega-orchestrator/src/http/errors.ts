/**
 * Where a failure of any HTTP route becomes its answer (the app's error handler, and the hot path's
 * before Express): a JSON-RPC caller of the MCP endpoint gets a JSON-RPC error whose status its code
 * takes (mcp/errors.ts), everyone else the fleet's error envelope with the status of its code (the
 * kit's ERROR_CODES, through sendError).
 */
import type { IncomingMessage } from 'node:http';
import { AppError, bareJsonKind, ERROR_CODES, JSONRPC_CODES, pathOf, toAppError, type HttpResponse, type SendError } from '@mcp-fleet/kit';
import { sendRpcError } from '../mcp/errors';
import { looksLikeJsonRpc } from '../mcp/jsonrpc';
import { wantsJsonRpc } from './routes/mcp';
import { isVirtualMcpPath } from './virtual-servers/routes';

export type Failure = (err: unknown, req: IncomingMessage, res: HttpResponse) => void;

export function failureHandler(options: { bodyLimit: string; sendError: SendError }): Failure {
  const { bodyLimit, sendError } = options;
  return (err, req, res) => {
    const type = (err as { type?: string }).type;
    const reqPath = pathOf(req);
    const onMcp = reqPath === '/mcp' || reqPath === '/mcp/rpc' || isVirtualMcpPath(reqPath);
    if (onMcp && type === 'entity.parse.failed' && (reqPath === '/mcp/rpc' || looksLikeJsonRpc((err as { body?: unknown }).body))) {
      res.locals.transport = 'jsonrpc';
      res.locals.errorCode = 'PARSE_ERROR';
      return sendRpcError(res, null, JSONRPC_CODES.PARSE_ERROR, 'Parse error: the body is not valid JSON.');
    }
    if (onMcp && type === 'entity.too.large' && wantsJsonRpc(req)) {
      res.locals.transport = 'jsonrpc';
      res.locals.errorCode = 'PAYLOAD_TOO_LARGE';
      return sendRpcError(
        res,
        null,
        ERROR_CODES.PAYLOAD_TOO_LARGE.rpc,
        `Payload too large: the body is over ${bodyLimit}; send less data or raise BODY_LIMIT.`,
      );
    }
    const appErr = toAppError(err);
    if (appErr.code === 'VALIDATION_ERROR' && type === 'entity.parse.failed') {
      const kind = bareJsonKind(err);
      return sendError(
        res,
        new AppError(
          'VALIDATION_ERROR',
          `The request body is ${kind ? `${kind}, not a JSON object` : 'not valid JSON'}; send {"tool": "<name>", "arguments": {...}} or a JSON-RPC 2.0 request.`,
          { cause: err },
        ),
      );
    }
    sendError(res, appErr);
  };
}
