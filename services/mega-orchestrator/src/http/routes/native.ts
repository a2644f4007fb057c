import { principalOf, requiredScopes } from '../../auth/auth';
import type { Express } from 'express';
import {
  AppError,
  parseOrThrow,
  isPlainObject,
  abortOnClose,
  header,
  sendJson,
  successEnvelope,
  type HttpRequest,
  type HttpResponse,
} from '@mcp-fleet/kit';
import { z } from 'zod';
import type { GatewayContext } from '../../core/context';
import type { CallResult } from '../../core/dispatch';
import { ROUTING_MODES, type Transport } from '../../core/types';
import { SERVICE_ID } from '../../core/config';

const id = (what: string) =>
  z
    .string()
    .regex(/^[\w.:-]{1,128}$/, `${what} is 1-128 letters, digits, _ . : or -`)
    .describe(`${what}: groups calls in GET /debug/contexts/{session_id}.`);

/** The native tool-call body. `arguments` is only checked to be an object: the downstream validates it. */
export const nativeCallBody = z
  .object({
    tool: z.string().min(1).max(200).describe('Tool name, plain or <service-id>__<tool>.'),
    arguments: z
      .custom<Record<string, unknown>>(isPlainObject, { message: 'arguments must be a JSON object ({} for tools without arguments)' })
      .optional()
      .describe('Tool arguments; {} when the tool takes none.'),
    mode: z
      .enum(ROUTING_MODES, { error: () => `mode must be one of: ${ROUTING_MODES.join(', ')} (GET /modes describes them)` })
      .optional()
      .describe('Routing mode; auto by default.'),
    session_id: id('session_id').optional(),
    context_id: id('context_id').optional(),
  })
  .strict();

/** A native tool call ({tool, arguments}) of POST /mcp (transport "native") or POST /mcp/{service} (transport "service"). */
export type NativeCall = (req: HttpRequest, res: HttpResponse, transport: Transport, service?: string) => Promise<void>;

/** The native call handler, built once and free of Express (POST /mcp's routing takes it: routes/mcp.ts). */
export function nativeCall(ctx: GatewayContext): NativeCall {
  const send = (res: HttpResponse, body: z.output<typeof nativeCallBody>, out: CallResult) => {
    if (out.retryAfter !== undefined) res.setHeader('Retry-After', String(out.retryAfter));
    const reply: Record<string, unknown> = { ...out.body, tool: body.tool, durationMs: out.durationMs };
    if (body.session_id !== undefined) reply.session_id = body.session_id;
    if (body.context_id !== undefined) reply.context_id = body.context_id;
    sendJson(res, out.status, reply);
  };

  const parse = (raw: unknown, hint: string) => {
    if (!isPlainObject(raw)) {
      throw new AppError('VALIDATION_ERROR', `Send a JSON object body: {"tool": "<name>", "arguments": {...}}${hint}.`);
    }
    return parseOrThrow(nativeCallBody, raw, `tool call; send {"tool": "<name>", "arguments": {...}}${hint}`);
  };

  const native = async (req: HttpRequest, res: HttpResponse, transport: Transport, service?: string) => {
    res.locals.transport = transport;
    res.locals.ok = false;
    let body = parse(req.body, service ? '' : ' (or a JSON-RPC 2.0 request)');
    // MCP_DISCOVERY=meta: search_tools and describe_tool answer here; call_tool becomes the call it stands for
    if (ctx.discovery?.isMetaTool(body.tool) && !service) {
      const started = performance.now();
      const meta = await ctx.discovery.answer(ctx.registry.catalog, body.tool, body.arguments, principalOf(res));
      if ('value' in meta) {
        res.locals.ok = true;
        return sendJson(res, 200, {
          ...successEnvelope(SERVICE_ID, meta.value),
          tool: body.tool,
          durationMs: Math.round(performance.now() - started),
        });
      }
      body = { ...body, tool: meta.call.name, arguments: meta.call.arguments };
    }
    const out = await ctx.dispatcher.call({
      tool: body.tool,
      args: body.arguments ?? {},
      mode: body.mode ?? 'auto',
      transport,
      requestId: res.locals.requestId as string,
      service,
      sessionId: body.session_id,
      contextId: body.context_id,
      signal: abortOnClose(res),
      traceparent: header(req, 'traceparent'),
      principal: principalOf(res),
    });
    res.locals.ok = out.ok;
    if (!out.body.success && out.code === 'FORBIDDEN' && ctx.auth) {
      const needed = requiredScopes(out.body.details);
      if (needed) res.setHeader('WWW-Authenticate', ctx.auth.insufficientScope(needed, out.body.error));
    }
    send(res, body, out);
  };

  return native;
}

/** POST /mcp/{service}: a native call of one service's tool. */
export function registerNativeRoutes(app: Express, ctx: GatewayContext, native: NativeCall): void {
  app.post('/mcp/:service', async (req, res) => {
    const service = String(req.params.service);
    if (!ctx.registry.get(service)) {
      res.locals.transport = 'service';
      throw new AppError('NOT_FOUND', `No downstream service "${service.slice(0, 100)}"; GET /services lists them.`);
    }
    if (isPlainObject(req.body) && 'jsonrpc' in req.body) {
      res.locals.transport = 'service';
      throw new AppError('VALIDATION_ERROR', 'POST /mcp/{service} takes a native body {"tool", "arguments"}; send JSON-RPC to POST /mcp.');
    }
    return native(req, res, 'service', service);
  });
}
