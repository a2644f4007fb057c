/**
 * A real MCP server as a downstream: over stdio (a child process the gateway starts in its sandbox,
 * restarts with backoff when it dies, and stops with the fleet: stdio-supervisor.ts) or over
 * Streamable HTTP at a URL, spoken to in its era: 2025-11-25 (client-2025-11-25.ts, initialize) or
 * 2026-07-28 (client-2026-07-28.ts, server/discover). The era is the declared one; undeclared, a
 * server is asked server/discover first (a stdio one within PROBE_TIMEOUT_MS). It implements the
 * gateway's Downstream interface (../downstream.ts) with MCP's operations: a tool's result as the
 * server sent it, with the fleet's envelope made of it (answers.ts), so failover, breakers, time
 * limits, history and metrics treat it like any other service.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { signalOf } from '../cancel';
import type { Logger } from '@mcp-fleet/kit';
import {
  answerTooLarge,
  DownstreamFailure,
  displayUrl,
  routeRequest,
  type CallOptions,
  type CompleteParams,
  type Downstream,
  type CompleteAnswer,
  type DoneAnswer,
  type DownstreamAnswer,
  type DownstreamRequest,
  type HealthAnswer,
  type ListAnswer,
  type ListName,
  type PromptAnswer,
  type ReadAnswer,
  type ToolAnswer,
} from '../downstream';
import type { StdioLauncher } from '../stdio-sandbox';
import { isAnswerTooLarge, streamBudget, type StreamBudget } from '../stream-budget';
import { maskingLogger, maskSecrets, maskStrings } from '../secret-mask';
import { brokenAnswer, errorEnvelope, isConnectionClosed, isSdkTimeout, toolAnswer, withoutPrefix, withoutRevisionFields } from './answers';
import { CallTable, scope, TIMEOUT, type EraHost, type EraSession, type Scope } from './calls';
import { readHttpError, Rev2025Client, REV_2025, sessionExpired, SPEAKS_2026, type EraProbe } from './client-2025-11-25';
import { asMcpError, Rev2026Client, REV_2026 } from './client-2026-07-28';
import type { McpServerSpec } from './spec';
import { START_TIMEOUT_MS, StdioSupervisor } from './stdio-supervisor';

/** How long a stdio server declared to no era has to answer server/discover before it is asked initialize. */
const PROBE_TIMEOUT_MS = 10_000;

export interface McpDownstreamOptions {
  id: string;
  logger: Logger;
  maxResponseBytes: number;
  /** The gateway's version (its clientInfo). */
  version?: string;
  /** First restart delay after the server dies or fails to start; doubles per failure up to 30 s. */
  restartBackoffMs?: number;
  /** Called when the server sends notifications/tools/list_changed, prompts/list_changed or resources/list_changed. */
  onToolsChanged?: () => void;
  /** Called when the server sends notifications/resources/updated for a URI the gateway subscribed to. */
  onResourceUpdated?: (uri: string) => void;
  /** Called when the server says a URL-mode elicitation finished (notifications/elicitation/complete). */
  onElicitationComplete?: (elicitationId: string) => void;
  /**
   * Declare elicitation, sampling and roots to the server and put what it asks during a tool call to
   * that call's caller (MCP_FORWARD_CLIENT_REQUESTS). Off: the gateway declares no client capabilities.
   */
  forwardClientRequests?: boolean;
  /** How long a caller has to answer one such request (MCP_INPUT_TIMEOUT_MS). */
  inputTimeoutMs?: number;
  /** How long in all a call may run while the server reports its progress (DOWNSTREAM_PROGRESS_MAX_MS; default: no longer than its time limit). */
  progressMaxMs?: number;
  /** Items of each list read at most (pages beyond them are not read; the registry refuses the excess). */
  listCaps?: { tools: number; prompts: number; resources: number };
  /** How it is shown (its declared URL template, or command line): never a `${VAR}`'s value. */
  shownUrl?: string;
  /** Values `${VAR}` put into its configuration: masked in its errors and log lines (secret-mask.ts). */
  secrets?: string[];
  /** How a stdio server's process is started: inside the OS sandbox by default (stdio-sandbox.ts). */
  launch?: StdioLauncher;
}

export class McpDownstream implements Downstream, EraHost {
  readonly url: string;
  readonly port: number;
  readonly id: string;
  readonly logger: Logger;
  readonly version: string;
  readonly forwardClientRequests: boolean;
  readonly supervisor: StdioSupervisor;
  /** DOWNSTREAM_MAX_RESPONSE_BYTES counted as the server's bytes arrive, and a call's streams closed with it (stream-budget.ts). */
  readonly budget: StreamBudget;
  readonly calls: CallTable;
  readonly subscribed = new Set<string>();
  closed = false;
  private readonly rev2025: Rev2025Client;
  private readonly rev2026: Rev2026Client;
  /** A server not declared 2026-07-28 that turned out to be one (found2026). */
  private found2026 = false;
  /** Masks the server's secrets in a text (identity when it has none). */
  private readonly mask: ((text: string) => string) | undefined;

  constructor(
    readonly spec: McpServerSpec,
    private readonly options: McpDownstreamOptions,
  ) {
    this.id = options.id;
    // its secrets (what ${VAR} put in) masked in every line it logs, and in every error it answers (run)
    this.logger = options.secrets?.length ? maskingLogger(options.logger, options.secrets) : options.logger;
    this.mask = options.secrets?.length ? maskSecrets(options.secrets) : undefined;
    this.version = options.version ?? '0.0.0';
    this.forwardClientRequests = options.forwardClientRequests === true;
    this.supervisor = new StdioSupervisor(options.id, {
      logger: this.logger,
      restartBackoffMs: options.restartBackoffMs,
      launch: options.launch,
    });
    this.budget = streamBudget({ maxBytes: options.maxResponseBytes, server: options.id, logger: this.logger });
    this.calls = new CallTable(options.id, {
      logger: this.logger,
      inputTimeoutMs: options.inputTimeoutMs,
      onElicitationComplete: options.onElicitationComplete,
    });
    this.rev2026 = new Rev2026Client(this);
    this.rev2025 = new Rev2025Client(this, this.probe);
    if (spec.transport === 'stdio') {
      this.url =
        options.shownUrl ??
        `stdio:${[spec.command, ...spec.args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`.slice(0, 300);
      this.port = 0;
    } else {
      const u = new URL(spec.url);
      this.url = options.shownUrl ?? displayUrl(spec.url);
      this.port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    }
  }

  /** How many times the server was started (stdio) or connected (HTTP), for /services and tests. */
  get starts(): number {
    return this.supervisor.starts;
  }

  /** The child's process id while a stdio server runs. */
  get pid(): number | undefined {
    return this.rev2025.pid ?? this.rev2026.pid;
  }

  /** The protocol era this server is spoken to in. */
  get protocolEra(): typeof REV_2026 | typeof REV_2025 {
    return this.speaks2026 ? REV_2026 : REV_2025;
  }

  /** Declared 2026-07-28, or found to be. */
  private get speaks2026(): boolean {
    return this.spec.protocolVersion === REV_2026 || this.found2026;
  }

  health(options: CallOptions): Promise<HealthAnswer> {
    return this.run(options, async (s, call) => {
      const json = await s.health(call);
      return { status: 200, json, value: typeof json.status === 'string' ? { status: json.status } : {} };
    });
  }

  /** A list (none from a server without the capability: no prompts, resources 404). */
  list(kind: ListName, options: CallOptions): Promise<ListAnswer> {
    const caps = this.options.listCaps;
    return this.run(options, (s, call): Promise<ListAnswer> => {
      if (kind === 'prompts' && !s.capabilities.prompts)
        return Promise.resolve({ status: 200, json: { prompts: [] }, value: { items: [], more: false } });
      if ((kind === 'resources' || kind === 'resourceTemplates') && !s.capabilities.resources)
        return Promise.resolve(this.notFound('no resources'));
      return s.list(kind, call, caps?.[kind === 'resourceTemplates' ? 'resources' : kind]);
    });
  }

  callTool(name: string, args: Record<string, unknown>, options: CallOptions): Promise<ToolAnswer> {
    // the SDK's client takes a real AbortSignal: made here when the call came with a CallCancel alone (cancel.ts)
    const signal = signalOf(options);
    const withSignal = signal === options.signal ? options : { ...options, signal };
    return this.run(withSignal, async (s, call) => toolAnswer(this.id, await s.callTool(name, args, call)));
  }

  getPrompt(name: string, args: Record<string, unknown> | undefined, options: CallOptions): Promise<PromptAnswer> {
    return this.run(options, async (s, call) =>
      this.ok(withoutRevisionFields(await s.getPrompt(name, args, call)) as PromptAnswer['value']),
    );
  }

  readResource(uri: string, options: CallOptions): Promise<ReadAnswer> {
    return this.run(options, async (s, call) => this.ok(withoutRevisionFields(await s.readResource(uri, call)) as ReadAnswer['value']));
  }

  /** completion/complete; a server without the completions capability has no suggestions (404, not an error). */
  complete(params: CompleteParams, options: CallOptions): Promise<CompleteAnswer> {
    return this.run(options, async (s, call): Promise<CompleteAnswer> => {
      if (!s.capabilities.completions) return this.notFound('no completions');
      return this.ok((await s.complete(params, call)) as CompleteAnswer['value']);
    });
  }

  /** Resource subscriptions (the gateway's clients watching a resource of this server). */
  subscribe(uri: string, options: CallOptions): Promise<DoneAnswer> {
    return this.run(options, async (s, call): Promise<DoneAnswer> => {
      if (!s.capabilities.resources?.subscribe) return this.notFound(`${this.id} offers no resource subscriptions`);
      if (await s.subscribe(uri, call)) return { status: 200, json: {}, value: true };
      return {
        status: 400,
        json: errorEnvelope(this.id, 'VALIDATION_ERROR', `${this.id} did not agree to send updates of ${uri.slice(0, 200)}`),
      };
    });
  }

  unsubscribe(uri: string, options: CallOptions): Promise<DoneAnswer> {
    return this.run(options, async (s, call): Promise<DoneAnswer> => {
      if (!s.capabilities.resources?.subscribe) return this.notFound(`${this.id} offers no resource subscriptions`);
      await s.unsubscribe(uri, call);
      return { status: 200, json: {}, value: true };
    });
  }

  /** An operation's result: its value, and as the kit's REST route would answer it (json). */
  private ok<T>(value: T): { status: number; json: T; value: T } {
    return { status: 200, json: value, value };
  }

  /** A request by the kit's REST path: the routes that have an MCP operation (a compatibility path); any other is 404. */
  request(req: DownstreamRequest): Promise<DownstreamAnswer> {
    return routeRequest(this, req, () => this.notFound(`${req.method} ${req.path} has no MCP equivalent at ${this.id}`));
  }

  private notFound(message: string): DownstreamAnswer {
    return { status: 404, json: errorEnvelope(this.id, 'NOT_FOUND', message) };
  }

  /**
   * One operation: on the session of the server's era (connected first), in the request's own scope;
   * what failed becomes the caller's error answer or a DownstreamFailure for the breaker (failure),
   * with the server's secrets masked.
   */
  private async run<A extends ToolAnswer>(
    options: CallOptions,
    op: (session: EraSession, call: Scope) => Promise<A>,
  ): Promise<A | DownstreamAnswer> {
    if (!this.mask) return this.answer(options, op);
    const mask = this.mask;
    try {
      const answer: ToolAnswer = await this.answer(options, op);
      if (answer.status === 200 || !answer.json) return answer;
      // an error's every part: the envelope, the tool's result, the server's JSON-RPC error
      const masked: A | DownstreamAnswer = { ...answer, json: maskStrings(answer.json, mask) };
      if (answer.result) (masked as ToolAnswer).result = maskStrings(answer.result, mask) as ToolAnswer['result'];
      if (answer.rpcError) masked.rpcError = maskStrings(answer.rpcError, mask) as ToolAnswer['rpcError'];
      return masked;
    } catch (err) {
      if (err instanceof DownstreamFailure) throw new DownstreamFailure(err.kind, mask(err.message), err.delivered);
      throw err;
    }
  }

  private async answer<A extends ToolAnswer>(
    options: CallOptions,
    op: (session: EraSession, call: Scope) => Promise<A>,
  ): Promise<A | DownstreamAnswer> {
    const session = await this.session(options.timeoutMs);
    const call = scope(options, this.options.progressMaxMs);
    try {
      try {
        return await op(session, call);
      } catch (err) {
        if (!sessionExpired(err) || this.spec.transport !== 'streamable-http' || this.speaks2026) throw err;
        // The server no longer knows the gateway's session (it restarted): a new session, as MCP asks,
        // and the request once more (a request of an unknown session was not run).
        this.logger.info(
          `${this.id} no longer knows the gateway's session (HTTP ${(err as { code?: number }).code}); initializing a new one`,
        );
        this.drop('its session ended');
        return await op(await this.session(options.timeoutMs), call);
      }
    } catch (err) {
      if (err instanceof DownstreamFailure) throw err;
      return this.failure(asMcpError(readHttpError(err)), call);
    } finally {
      call.end();
    }
  }

  /** The connected session of the server's era. */
  private async session(timeoutMs: number): Promise<EraSession> {
    if (this.speaks2026) return this.rev2026.connected(timeoutMs);
    try {
      return await this.rev2025.connected(timeoutMs);
    } catch (err) {
      if (err === SPEAKS_2026) return this.rev2026.connected(timeoutMs);
      throw err;
    }
  }

  /**
   * Whether a server declared to no era speaks 2026-07-28 ('first'): asked by the 2025 client before
   * initialize over HTTP, beside it over stdio, where the v2 client asks a short-lived sibling process
   * of the same command within PROBE_TIMEOUT_MS (a server that exits on a request before initialize
   * costs nothing). One that answers is spoken to in the newer revision, a server of both eras
   * included; one that answers -32601, an error, nothing, or exits, in 2025. A stdio server that
   * refused initialize is asked again with the full start time ('refused'), in case the first
   * question ran out of time.
   */
  private readonly probe: EraProbe = {
    ask: async (when) => {
      // declared, or an HTTP+SSE server (that transport predates server/discover)
      if (this.spec.protocolVersion !== undefined || this.spec.transport === 'sse') return false;
      const stdio = this.spec.transport === 'stdio';
      if (when === 'refused' && !stdio) return false;
      if (when === 'first')
        return this.found('answered server/discover', stdio ? Math.min(PROBE_TIMEOUT_MS, START_TIMEOUT_MS) : START_TIMEOUT_MS);
      return this.found('refused initialize and answered server/discover', START_TIMEOUT_MS);
    },
    unanswered: () => this.discoverProblem,
  };

  /** Why the last server/discover asked of a server declared to no era got no answer (for the error when initialize fails too). */
  private discoverProblem?: string;

  /** Whether this server answers server/discover (then it is spoken to in 2026-07-28 from now on); `why` for the log. */
  private async found(why: string, timeoutMs: number): Promise<boolean> {
    try {
      await this.rev2026.connected(timeoutMs, true);
    } catch (err) {
      const cause = (err as Error).cause;
      this.discoverProblem = (cause instanceof Error ? cause : (err as Error)).message;
      return false;
    }
    this.discoverProblem = undefined;
    this.found2026 = true;
    this.logger.info(`${this.id} ${why}: it is spoken to in MCP ${REV_2026}`);
    return true;
  }

  listChanged(kind: 'tools' | 'prompts' | 'resources'): () => void {
    return () => {
      this.logger.info(`${this.id} says its ${kind} changed; re-reading them`);
      this.options.onToolsChanged?.();
    };
  }

  resourceUpdated(uri: string): void {
    this.options.onResourceUpdated?.(uri);
  }

  missed(): void {
    this.options.onToolsChanged?.();
    for (const uri of this.subscribed) this.options.onResourceUpdated?.(uri);
  }

  /** A failed request: the caller's error (an MCP error as the fleet's envelope), or a DownstreamFailure for the breaker. */
  private failure(err: unknown, call: Scope): DownstreamAnswer {
    const { signal, options } = call;
    // this call's answer went over DOWNSTREAM_MAX_RESPONSE_BYTES as it arrived: it alone fails, the connection stays
    if (isAnswerTooLarge(err)) return answerTooLarge(this.options.maxResponseBytes);
    if (signal.aborted) {
      if (signal.reason === TIMEOUT) throw new DownstreamFailure('timeout', `timed out after ${options.timeoutMs} ms`, true);
      throw new DownstreamFailure('aborted', 'the caller went away', true);
    }
    if (err instanceof McpError) {
      // URL elicitation required (-32042): its elicitations are this server's to complete
      if (err.code === -32042 && Array.isArray((err.data as { elicitations?: unknown } | undefined)?.elicitations))
        for (const e of (err.data as { elicitations: unknown[] }).elicitations) this.calls.askedUrl(e);
      if (isConnectionClosed(err)) {
        this.drop(`the connection closed (${err.message})`);
        throw new DownstreamFailure('connection', `${this.id} closed the connection: ${this.supervisor.lastProblem}`, true, { cause: err });
      }
      // The SDK's own time limit (its error carries data.timeout); a server's -32001 is its own error, passed on below.
      if (isSdkTimeout(err)) throw new DownstreamFailure('timeout', `timed out after ${options.timeoutMs} ms`, true);
      const message = withoutPrefix(err.message);
      // the server's JSON-RPC error as it was (a task of this call reads failed with it), for MCP callers and in the envelope
      const rpcError = { code: err.code, message, ...(err.data !== undefined ? { data: err.data } : {}) };
      // bad params: VALIDATION_ERROR (a tool call's isError result); prompts/get and completion/complete pass the error on as it came
      if (err.code === ErrorCode.InvalidParams)
        return { status: 400, json: errorEnvelope(this.id, 'VALIDATION_ERROR', message, err.data), rpcError };
      if (err.code === ErrorCode.MethodNotFound) return this.notFound(`${this.id} does not support this: ${message}`);
      return {
        status: 502,
        json: errorEnvelope(this.id, 'UPSTREAM_ERROR', `${this.id} answered an MCP error ${err.code}: ${message}`, { mcpError: rpcError }),
        rpcError,
      };
    }
    // an answer that breaks the protocol's rules (the SDK's check of it refused it): this call's error, the server stays
    const broken = brokenAnswer(err);
    if (broken !== undefined)
      return {
        status: 502,
        json: errorEnvelope(this.id, 'UPSTREAM_ERROR', `${this.id} answered what MCP ${this.protocolEra} does not allow: ${broken}`),
      };
    // a transport failure (HTTP refused, the child gone): not delivered only when nothing was sent
    this.drop((err as Error).message);
    throw new DownstreamFailure('connection', `${this.id}: ${(err as Error).message}`, true, { cause: err });
  }

  /** Forget a broken connection so the next request connects again. */
  private drop(problem: string): void {
    void this.rev2026.drop();
    if (this.rev2025.drop()) this.supervisor.lastProblem = problem;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.supervisor.stop();
    await this.rev2025.close();
    await this.rev2026.close();
  }

  destroy(): Promise<void> {
    return this.close();
  }
}
