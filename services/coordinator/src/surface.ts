/**
 * The routes of the alternate coordinator surface (platform-interface.md): POST /mcp with
 * `{tool, arguments}` answered in the envelope, and GET /status. /health and /metrics are the kit's.
 */
import express, { type Express } from 'express';
import { z } from 'zod';
import { AppError, controllerOnClose, isPlainObject, parseOrThrow, successEnvelope, type FleetSpan, type KitHandle } from '@mcp-fleet/kit';
import type { GatewayClient } from './gateway';
import type { ForwardSpec } from './tools/forward';

export interface SurfaceOptions {
  gateway: GatewayClient;
  tools: readonly ForwardSpec[];
  bodyLimit: string;
  rateLimit: { limit: number; windowMs: number; store: 'redis' | 'memory' | 'off' };
  startedAt: number;
}

const callBody = z
  .object({
    tool: z.string().min(1).max(64).describe('Name of the tool to run (GET /tools/list).'),
    // the object as sent, not a copy: a copy made key by key would turn an own "__proto__" key into a prototype and hide it from the tool's strict schema
    arguments: z
      .custom<Record<string, unknown>>(isPlainObject, 'expected an object of arguments')
      .optional()
      .default({})
      .describe("The tool's arguments; {} for tools without any."),
  })
  .strict();

const STATUS_TIMEOUT_MS = 2000;

export function mountSurface(app: Express, kit: KitHandle, options: SurfaceOptions): void {
  const { gateway } = options;
  // Any Content-Type is read as JSON, so `curl -d '{...}'` works without -H (as on the gateway).
  const json = express.json({ limit: options.bodyLimit, strict: true, type: () => true });

  app.post('/mcp', json, async (req, res) => {
    if (isPlainObject(req.body) && 'jsonrpc' in req.body) {
      throw new AppError(
        'VALIDATION_ERROR',
        "This surface takes {tool, arguments}; MCP and JSON-RPC clients call the gateway's POST /mcp (port 7000) instead.",
        { details: [{ path: 'jsonrpc', message: 'not accepted here' }] },
      );
    }
    const body = parseOrThrow(callBody, req.body ?? {}, 'tool call; send {"tool": "<name>", "arguments": {...}}');
    const controller = controllerOnClose(res);
    const result = await kit.callTool(body.tool, body.arguments, {
      requestId: res.locals.requestId,
      controller,
      signal: controller.signal,
      authorization: req.headers.authorization,
      logger: res.locals.logger,
      traceparent: (res.locals.span as FleetSpan | undefined)?.traceparent,
    });
    res.json(successEnvelope(kit.service, result));
  });

  app.get('/status', async (req, res) => {
    const services = new Map<string, string[]>();
    for (const t of options.tools) services.set(t.service, [...(services.get(t.service) ?? []), t.name]);
    const seen = await gatewayView(gateway, req.headers.authorization, res.locals.requestId);
    const rows = [...services].map(([id, tools]) => {
      const row = seen.services?.get(id);
      return {
        id,
        status: row?.status ?? 'unknown',
        routable: row?.routable ?? false,
        ...(row?.reason ? { reason: row.reason } : {}),
        tools,
      };
    });
    const ready = seen.reachable && rows.every((r) => r.routable);
    res.json(
      successEnvelope(kit.service, {
        status: ready ? 'ok' : 'degraded',
        uptimeSeconds: Math.round((Date.now() - options.startedAt) / 1000),
        gateway: seen.gateway,
        services: rows,
        tools: options.tools.length,
        rateLimit: options.rateLimit,
      }),
    );
  });
}

interface ServiceRow {
  status: string;
  routable: boolean;
  reason?: string;
}

/** The gateway's GET /services, read as the caller (its token, if any): which of the coordinator's services it can route to now. */
async function gatewayView(
  gateway: GatewayClient,
  authorization: string | undefined,
  requestId: string | undefined,
): Promise<{ reachable: boolean; gateway: Record<string, unknown>; services?: Map<string, ServiceRow> }> {
  try {
    const { status, body } = await gateway.get('/services', { signal: AbortSignal.timeout(STATUS_TIMEOUT_MS), authorization, requestId });
    const list = isPlainObject(body) && Array.isArray(body.services) ? body.services : undefined;
    if (status !== 200 || !list) {
      return { reachable: true, gateway: { url: gateway.url, reachable: true, httpStatus: status, error: errorOf(body) } };
    }
    const services = new Map<string, ServiceRow>();
    for (const s of list) {
      if (!isPlainObject(s) || typeof s.id !== 'string') continue;
      services.set(s.id, {
        status: typeof s.status === 'string' ? s.status : 'unknown',
        routable: s.routable === true,
        ...(typeof s.reason === 'string' ? { reason: s.reason } : {}),
      });
    }
    return { reachable: true, gateway: { url: gateway.url, reachable: true }, services };
  } catch (err) {
    const reason = err instanceof AppError ? err.message : `no answer within ${STATUS_TIMEOUT_MS} ms`;
    return { reachable: false, gateway: { url: gateway.url, reachable: false, error: reason } };
  }
}

function errorOf(body: unknown): string | undefined {
  return isPlainObject(body) && typeof body.error === 'string' ? body.error.slice(0, 300) : undefined;
}
