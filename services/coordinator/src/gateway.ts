import { AppError, isErrorCode, isPlainObject } from '@mcp-fleet/kit';
import { GATEWAY_ID } from '@mcp-fleet/inventory';
import { readCapped } from '@mcp-fleet/outbound';

/** What a forwarded call carries from the coordinator's request to the gateway's. */
export interface ForwardContext {
  signal: AbortSignal;
  requestId: string;
  /** The caller's Authorization header: the gateway authorizes the caller, not the coordinator. */
  authorization?: string;
  traceparent?: string;
}

export interface GatewayClientOptions {
  url: string;
  maxResponseBytes: number;
}

export interface GatewayClient {
  readonly url: string;
  /** Runs `tool` on `service` through the gateway (POST /mcp/{service}) and gives its result, or throws its error as an AppError. */
  call(service: string, tool: string, args: unknown, ctx: ForwardContext): Promise<unknown>;
  /** GET a gateway route (e.g. /services) as JSON; throws UPSTREAM_UNAVAILABLE or UPSTREAM_ERROR. */
  get(path: string, ctx: Partial<ForwardContext> & { signal: AbortSignal }): Promise<{ status: number; body: unknown }>;
}

const RETRY_AFTER_SECONDS = 5;

/**
 * The coordinator's one way out: the gateway, which keeps authorization, the audit log, call history
 * and the circuit breakers of every service in one place. The coordinator never builds a URL from
 * what a caller sent: the service id comes from the tool's own definition.
 */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const base = options.url.replace(/\/+$/, '');

  const request = async (path: string, init: RequestInit, ctx: Partial<ForwardContext> & { signal: AbortSignal }) => {
    const headers: Record<string, string> = { accept: 'application/json', ...(init.headers as Record<string, string>) };
    if (ctx.requestId) headers['x-request-id'] = ctx.requestId;
    if (ctx.authorization) headers.authorization = ctx.authorization;
    if (ctx.traceparent) headers.traceparent = ctx.traceparent;
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, { ...init, headers, signal: ctx.signal, redirect: 'manual' });
    } catch (err) {
      // the call's own time limit or the caller hanging up: the kit answers with the signal's reason
      if (ctx.signal.aborted) throw ctx.signal.reason ?? err;
      throw new AppError(
        'UPSTREAM_UNAVAILABLE',
        `The gateway at ${base} cannot be reached (${causeOf(err)}); start the fleet (./fleet up) or set COORDINATOR_GATEWAY_URL.`,
        { cause: err, retryAfter: RETRY_AFTER_SECONDS },
      );
    }
    const read = res.body ? await readCapped(res.body as AsyncIterable<Uint8Array>, options.maxResponseBytes) : undefined;
    if (read?.truncated) {
      await res.body?.cancel().catch(() => undefined);
      throw new AppError(
        'UPSTREAM_ERROR',
        `The gateway's answer is larger than ${options.maxResponseBytes} bytes (COORDINATOR_MAX_RESPONSE_BYTES); ask for less (a byte range, a lower limit).`,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(read?.body.toString('utf8') ?? '');
    } catch (err) {
      throw new AppError(
        'UPSTREAM_ERROR',
        `The gateway at ${base} answered ${path} with something that is not JSON (HTTP ${res.status}).`,
        {
          cause: err,
        },
      );
    }
    return { status: res.status, body, retryAfter: res.headers.get('retry-after') };
  };

  return {
    url: base,
    async call(service, tool, args, ctx) {
      const answer = await request(
        `/mcp/${encodeURIComponent(service)}`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tool, arguments: args }) },
        ctx,
      );
      const envelope = answer.body;
      if (isPlainObject(envelope) && envelope.success === true && 'result' in envelope) return envelope.result;
      if (isPlainObject(envelope) && envelope.success === false && isErrorCode(envelope.code) && typeof envelope.error === 'string') {
        // The gateway's own NOT_FOUND / UNKNOWN_TOOL mean it does not route to that service (not started in
        // this fleet); a downstream's NOT_FOUND (a missing file) is the caller's answer and passes through.
        if (envelope.service === GATEWAY_ID && (envelope.code === 'NOT_FOUND' || envelope.code === 'UNKNOWN_TOOL')) {
          throw new AppError(
            'UPSTREAM_UNAVAILABLE',
            `${service}, which answers ${tool}, is not routed by the gateway (${envelope.error}); start it (./fleet up) and try again.`,
            { retryAfter: RETRY_AFTER_SECONDS },
          );
        }
        const retryAfter = Number(answer.retryAfter);
        throw new AppError(envelope.code, envelope.error, {
          ...(envelope.details !== undefined ? { details: envelope.details } : {}),
          ...(Number.isInteger(retryAfter) && retryAfter >= 0 ? { retryAfter } : {}),
        });
      }
      throw new AppError('UPSTREAM_ERROR', `The gateway answered ${tool} with HTTP ${answer.status} and no result envelope.`);
    },
    async get(path, ctx) {
      const { status, body } = await request(path, { method: 'GET' }, ctx);
      return { status, body };
    },
  };
}

/** A fetch failure's cause in a few words (ECONNREFUSED, ENOTFOUND, ...), never a URL with credentials. */
function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  return typeof cause?.message === 'string' ? cause.message.slice(0, 200) : 'connection failed';
}
