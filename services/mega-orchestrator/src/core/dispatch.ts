import { allows, scopesFor, type AuditLog, type Principal } from '../auth/auth';
import {
  AppError,
  errorEnvelope,
  getProcessTracer,
  isErrorCode,
  JSONRPC_CODES,
  toAppError,
  type FleetSpan,
  type FleetTracer,
  type Envelope,
  type Logger,
} from '@mcp-fleet/kit';
import type { Registry } from './registry';
import type { Route, ToolResolver, Target } from './tool-resolver';
import type { CallHistory } from '../history/call-history';
import { ownerOf } from '../auth/ownership';
import type { GatewayStats } from './stats';
import type { RoutingMode, Transport } from './types';
import { DownstreamFailure, type ClientRequester, type LogListener, type ProgressListener, type RpcError } from '../downstream/http-client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { CallCancel } from '../downstream/cancel';

export interface CallRequest {
  tool: string;
  args: Record<string, unknown>;
  mode: RoutingMode;
  transport: Transport;
  requestId: string;
  /** Call this service only (POST /mcp/{service}). */
  service?: string;
  sessionId?: string;
  contextId?: string;
  /** Aborted when the caller goes away; or, without an AbortSignal, `cancel` (downstream/cancel.ts: signalOf). */
  signal?: AbortSignal;
  cancel?: CallCancel;
  timeoutMs?: number;
  /** The caller's W3C traceparent: the gateway's span becomes its child. */
  traceparent?: string;
  /** The authenticated caller when auth is on: only tools its scopes allow are called. */
  principal?: Principal;
  /** Receives the downstream's progress reports (an MCP client sent a progressToken). */
  onProgress?: ProgressListener;
  /** Answers what an MCP server asks its client during the call (the caller is an MCP client that can). */
  onClientRequest?: ClientRequester;
  /** Receives the log messages an MCP server sends during the call. */
  onLog?: LogListener;
  /** The caller's own `_meta` for an MCP server (callersMeta). */
  meta?: Record<string, unknown>;
}

/**
 * An MCP server's own tool result, carried beside the envelope for the gateway's MCP clients (and
 * the console): content, structuredContent, isError and `_meta` as the server sent them.
 */
export interface McpPassthrough {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: unknown;
  [field: string]: unknown;
}

/** What a call answers: the fleet's envelope, plus an MCP downstream's own blocks when it has them. */
export type CallEnvelope = Envelope & { mcp?: McpPassthrough };

export interface CallResult {
  ok: boolean;
  status: number;
  /** The downstream's envelope (success or error), or the gateway's own error envelope. */
  body: CallEnvelope;
  /** The JSON text of a success body's result as the service wrote it, when the answer carried it (DownstreamAnswer.resultText). */
  resultText?: string;
  /** The tool's result in MCP's terms, when the downstream answered one (ToolAnswer.result): what MCP callers get. */
  result?: CallToolResult;
  /** The JSON-RPC error an MCP server answered in place of a result: MCP callers get it as it was. */
  rpcError?: RpcError;
  code?: string;
  service?: string;
  /** The tool was none its service lists (tool-resolver.ts: answersUnlisted): counted as `(unlisted)`, so random names cannot grow the metrics. */
  unlisted?: boolean;
  durationMs: number;
  retryAfter?: number;
}

export interface DispatcherOptions {
  service: string;
  timeoutMs: number;
  logger: Logger;
  /** Spans per call; the process tracer (OTLP when configured) by default. */
  tracer?: FleetTracer;
  /** One line per tool call (who, tool, service, outcome, duration), when configured. */
  audit?: AuditLog;
}

function isEnvelope(v: unknown): v is Envelope {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { success?: unknown }).success === 'boolean';
}

/** The one name the metrics count every tool no list shows under. */
const UNLISTED_TOOL = '(unlisted)';

/** What a tool its server does not list is taken to be, for the caller's scopes. */
const UNLISTED = { destructiveHint: true } as const;

const round = (ms: number) => Math.round(ms * 100) / 100;

/** The one call path shared by native POST /mcp, POST /mcp/{service} and MCP tools/call. */
export class Dispatcher {
  private readonly debug: boolean;

  constructor(
    private readonly registry: Registry,
    private readonly resolver: ToolResolver,
    private readonly stats: GatewayStats,
    private readonly history: CallHistory,
    private readonly options: DispatcherOptions,
  ) {
    this.debug = options.logger.isDebugEnabled();
  }

  /** A call's time limit: its own (a task's), else its server's (an mcpServers entry's timeoutMs), else DOWNSTREAM_TIMEOUT_MS. */
  private timeoutOf(req: CallRequest, service: Target['service']): number {
    return req.timeoutMs ?? service.spec.timeoutMs ?? this.options.timeoutMs;
  }

  async call(req: CallRequest): Promise<CallResult> {
    const started = performance.now();
    // The gateway's span: a child of the caller's traceparent; the downstream's span is its child.
    const span = (this.options.tracer ?? getProcessTracer()).startSpan(`tools/call ${req.tool.slice(0, 64)}`, {
      traceparent: req.traceparent,
      attributes: { 'mcp_fleet.tool': req.tool.slice(0, 64), 'mcp_fleet.transport': req.transport },
    });
    let result: Omit<CallResult, 'durationMs'>;
    let argsJson: string | undefined;
    try {
      let route: Route;
      if (req.service !== undefined) {
        const service = this.registry.get(req.service);
        if (!service) throw new AppError('NOT_FOUND', `No downstream service "${req.service.slice(0, 100)}"; GET /services lists them.`);
        route = this.resolver.resolveOn(service, req.tool);
      } else {
        route = this.resolver.resolve(req.tool, req.mode);
      }
      if (req.principal) route = this.permitted(route, req);
      argsJson = JSON.stringify(req.args);
      result = await this.forward(route, req, argsJson, span);
    } catch (err) {
      result = this.failure(toAppError(err), undefined, span);
    }
    const durationMs = round(performance.now() - started);
    // Recorded once the answer is on its way: the caller's continuation (which writes the answer)
    // runs in this microtask drain, the tick after it (issue 29: 15-20 µs of every call at one connection).
    process.nextTick(() => this.record(req, result, durationMs, argsJson, span));
    return { ...result, durationMs };
  }

  /** A call's span, audit line, statistics, history record and debug line. */
  private record(
    req: CallRequest,
    result: Omit<CallResult, 'durationMs'>,
    durationMs: number,
    argsJson: string | undefined,
    span: FleetSpan,
  ): void {
    if (result.service) span.setAttribute('mcp_fleet.downstream', result.service);
    if (!result.ok) span.fail(result.code ?? 'ERROR');
    span.end();
    this.options.audit?.write({
      principal: req.principal,
      tool: req.tool.slice(0, 200),
      service: result.service,
      ok: result.ok,
      code: result.code,
      durationMs,
      transport: req.transport,
      requestId: req.requestId,
    });
    this.stats.call({
      transport: req.transport,
      tool: result.unlisted ? UNLISTED_TOOL : req.tool,
      service: result.service,
      ok: result.ok,
      code: result.code,
      durationMs,
      mode: req.mode,
      sessionId: req.sessionId,
    });
    if (req.sessionId !== undefined) {
      this.history.enqueue({
        sessionId: req.sessionId,
        owner: ownerOf(req.principal),
        contextId: req.contextId,
        tool: req.tool,
        service: result.service,
        transport: req.transport,
        mode: req.mode,
        success: result.ok,
        code: result.code,
        durationMs,
        at: Date.now(),
        args: req.args,
        ...(argsJson !== undefined ? { argsText: argsJson } : {}),
        result: result.body,
        ...(result.resultText !== undefined ? { resultText: result.resultText } : {}),
      });
    }
    if (this.debug) {
      this.options.logger.debug('tool call', {
        trace_id: span.traceId,
        span_id: span.spanId,
        tool: req.tool,
        service: result.service,
        status: result.status,
        ms: durationMs,
        requestId: req.requestId,
      });
    }
  }

  /**
   * The candidates the caller's scopes allow; none: FORBIDDEN naming the scopes that would. A tool
   * its server does not list (tool-resolver.ts: answersUnlisted) is judged as a destructive one:
   * nothing says it only reads.
   */
  private permitted(route: Route, req: CallRequest): Route {
    const hints = (t: Target) => (t.tool ? t.tool.annotations : UNLISTED);
    const candidates = route.candidates.filter((t) => allows(req.principal, t.service.id, hints(t)));
    if (candidates.length || !route.candidates.length) return { candidates };
    const first = route.candidates[0];
    const requiredScopes = scopesFor(first.service.id, hints(first));
    throw new AppError(
      'FORBIDDEN',
      `This token may not call ${req.tool.slice(0, 100)}; it needs one of the scopes: ${requiredScopes.join(', ')}.`,
      {
        details: { requiredScopes },
      },
    );
  }

  private failure(err: AppError, service?: string, span?: FleetSpan): Omit<CallResult, 'durationMs'> {
    if (err.status >= 500 && err.code === 'INTERNAL')
      this.options.logger.error(err.message, { err: err.cause ?? err, trace_id: span?.traceId, span_id: span?.spanId });
    return {
      ok: false,
      status: err.status,
      body: errorEnvelope(this.options.service, err),
      code: err.code,
      ...(service ? { service } : {}),
      ...(err.retryAfter !== undefined ? { retryAfter: err.retryAfter } : {}),
    };
  }

  private async forward(route: Route, req: CallRequest, argsJson: string, span: FleetSpan): Promise<Omit<CallResult, 'durationMs'>> {
    let last: Omit<CallResult, 'durationMs'> | undefined;
    for (let i = 0; i < route.candidates.length; i++) {
      const target = route.candidates[i];
      if (i > 0) this.stats.failovers += 1;
      const outcome = await this.callTarget(target, req, argsJson, i < route.candidates.length - 1, span.traceparent);
      if (!target.tool) outcome.result.unlisted = true;
      if (outcome.kind === 'answer') return outcome.result;
      last = outcome.result;
      if (outcome.kind === 'final') return last;
      // 'next': the request never reached this service (refused or breaker open): try the next owner.
    }
    return last!;
  }

  private async callTarget(
    target: Target,
    req: CallRequest,
    argsJson: string,
    hasNext: boolean,
    traceparent: string,
  ): Promise<{ kind: 'answer' | 'final' | 'next'; result: Omit<CallResult, 'durationMs'> }> {
    const { service } = target;
    const idempotent = target.tool?.annotations?.idempotentHint === true;
    for (let attempt = 0; ; attempt++) {
      if (!service.breaker.tryAcquire()) {
        const retryAfter = service.breaker.retryAfterSeconds();
        return {
          kind: 'next',
          result: this.failure(
            new AppError('UPSTREAM_UNAVAILABLE', `${service.id} is failing and its circuit breaker is open; retry in ${retryAfter} s.`, {
              retryAfter,
            }),
            service.id,
          ),
        };
      }
      const sent = performance.now();
      try {
        // (by the name its server knows it by: a tool listed under an alias has its own)
        const answer = await service.upstream.callTool(target.tool?.upstreamName ?? target.toolName, req.args, {
          argsJson,
          requestId: req.requestId,
          traceparent,
          timeoutMs: this.timeoutOf(req, service),
          signal: req.signal,
          cancel: req.cancel,
          onProgress: req.onProgress,
          onClientRequest: req.onClientRequest,
          onLog: req.onLog,
          meta: req.meta,
        });
        if (isEnvelope(answer.json)) {
          const code = 'code' in answer.json && typeof answer.json.code === 'string' ? answer.json.code : undefined;
          // The service answered: whatever its envelope says (INTERNAL too), it is up. An error that a
          // caller's arguments bring about is that call's, and must not make the service unavailable
          // to everyone (a caller could otherwise open the breaker at will).
          service.heardAt = performance.now();
          service.breaker.onSuccess();
          // a name it does not list, refused by it as MCP refuses an unknown tool (-32602): the caller's unknown tool, in its words
          if (!target.tool && answer.rpcError?.code === JSONRPC_CODES.INVALID_PARAMS)
            return {
              kind: 'answer',
              result: this.failure(new AppError('UNKNOWN_TOOL', `${service.id}: ${answer.rpcError.message.slice(0, 300)}`), service.id),
            };
          const ok = answer.json.success === true && answer.status < 400;
          return {
            kind: 'answer',
            result: {
              ok,
              status: answer.status,
              body: answer.json,
              service: service.id,
              result: answer.result,
              ...(ok
                ? { resultText: answer.resultText }
                : { code: code && isErrorCode(code) ? code : 'UPSTREAM_ERROR', rpcError: answer.rpcError }),
            },
          };
        }
        // an answer over DOWNSTREAM_MAX_RESPONSE_BYTES is no sign of a failing service: callers asking for much must not open its breaker for everyone
        if (answer.tooLarge) service.breaker.release();
        else if (answer.status >= 500) service.breaker.onFailure();
        else service.breaker.onSuccess();
        return {
          kind: 'answer',
          result: this.failure(
            new AppError(
              'UPSTREAM_ERROR',
              `${service.id} answered ${answer.status} with ${answer.problem ?? 'JSON that is not an envelope'}.`,
            ),
            service.id,
          ),
        };
      } catch (err) {
        if (!(err instanceof DownstreamFailure)) throw err;
        if (err.kind === 'aborted') {
          service.breaker.release();
          return {
            kind: 'final',
            result: this.failure(new AppError('TIMEOUT', 'The client went away before the call finished.'), service.id),
          };
        }
        // A time limit that ran out while the service answered other calls or a poll: a slow call, not a failing service.
        if (err.kind === 'timeout' && service.heardAt > sent) service.breaker.release();
        else service.breaker.onFailure();
        if (err.kind === 'timeout') {
          return {
            kind: 'final',
            result: this.failure(
              new AppError(
                'TIMEOUT',
                `${target.toolName} on ${service.id} did not answer within ${this.timeoutOf(req, service)} ms; narrow the request or retry later.`,
              ),
              service.id,
            ),
          };
        }
        this.registry.suspect(service.id);
        const failed = this.failure(
          new AppError('UPSTREAM_UNAVAILABLE', `${service.id} is unavailable: ${err.message}. GET /services shows its state.`, {
            retryAfter: 1,
          }),
          service.id,
        );
        // Never delivered: another owner may take it (auto mode lists the other healthy owners after this one).
        if (!err.delivered && hasNext) return { kind: 'next', result: failed };
        if (attempt === 0 && idempotent) {
          this.stats.retries += 1;
          continue;
        }
        return { kind: 'final', result: failed };
      }
    }
  }
}
