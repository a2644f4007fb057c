/**
 * The calls in flight at one MCP server, shared by its two clients (client-2025-11-25.ts,
 * client-2026-07-28.ts): each request's own time limit and abort (scope), and what the server sends
 * meanwhile put where it belongs: what it asks its client (elicitation, sampling, roots) to the
 * caller of the call it belongs to, its log messages to that caller, progress reports to the
 * listener of the gateway's own progressToken, a URL elicitation's completion to whoever is told.
 */
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { InFlight, type Logger } from '@mcp-fleet/kit';
import type {
  CallOptions,
  ClientRequester,
  ClientRequestMethod,
  CompleteParams,
  ListAnswer,
  ListName,
  LogListener,
  ProgressListener,
} from '../downstream';
import type { StreamBudget } from '../stream-budget';
import { allPages } from './answers';
import type { McpServerSpec } from './spec';
import type { StdioSupervisor } from './stdio-supervisor';

/** The abort reason of a request whose clock ran out. */
export const TIMEOUT = Symbol('timeout');
/** The SDK's own time limit of a call whose caller may be asked things (the gateway's clock governs it). */
const SDK_BACKSTOP_MS = 24 * 3_600_000;
const DEFAULT_INPUT_TIMEOUT_MS = 300_000;
/** Requests a server sends at once (Promise.all) arrive within this; a call asking for longer waits on its caller. */
const TOGETHER_MS = 10;

/** The client capabilities the gateway declares when it forwards client requests (defaults applied by the SDK). */
export const FORWARDED_CAPABILITIES = { elicitation: { form: { applyDefaults: true }, url: {} }, sampling: {}, roots: {} };

/** Of a caller's declared capabilities, those the gateway forwards (what a server behind it may ask that caller). */
export function askable(capabilities: unknown): Record<string, unknown> {
  if (typeof capabilities !== 'object' || capabilities === null) return {};
  const declared = capabilities as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(FORWARDED_CAPABILITIES)
      .filter((k) => declared[k] !== undefined)
      .map((k) => [k, declared[k]]),
  );
}

/**
 * What to do about a server that refused the gateway when connecting (the SDKs give the HTTP status
 * as the error's code, or name it in the message). A 403 that names the Host (the SDK's "Invalid Host
 * header", Playwright MCP's "Access is only allowed at localhost:8931") is a DNS-rebinding check of
 * the URL's host name, which no credentials pass: the entry's `url` must name the host the server
 * accepts. Any other 401 or 403 wants credentials, which an mcpServers entry's `headers` carry.
 * Empty for any other failure.
 */
export function refusalHint(err: unknown, said: string): string {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  if (code !== 401 && code !== 403 && !/\(HTTP 40[13]\)/.test(said)) return '';
  if ((code === 403 || /\(HTTP 403\)/.test(said)) && HOST_CHECK.test(said))
    return '; it checks the Host header against DNS rebinding and refused this one: give its mcpServers entry the url with the host name it accepts (the one its message names, e.g. localhost rather than 127.0.0.1)';
  return '; it asks for credentials: give its mcpServers entry "headers" (e.g. "Authorization": "Bearer ${TOKEN}", with TOKEN in the gateway\'s environment)';
}

/** A refusal that is about the request's Host header, not about who sent it. */
const HOST_CHECK = /invalid host|host header|only allowed at|host not allowed|dns rebinding/i;

/** A request in flight: whom to ask what the server asks during it, and its clock to stop meanwhile. */
export interface CallSlot {
  tool: string;
  requester?: ClientRequester;
  onLog?: LogListener;
  clock: CallClock;
  /** Requests of this call its caller has not answered yet, and when the last one was put. */
  asking: number;
  askedAt: number;
}

/**
 * A call's time limit that stops while its caller is being asked something, and goes on after; a
 * progress report of the call (touch) starts it again, within `maxMs` of running time in all (as
 * MCP lets a requester reset its timeout on progress while still enforcing a maximum).
 */
export class CallClock {
  private timer?: NodeJS.Timeout;
  /** Running time left of the current limit, and in all. */
  private left: number;
  private budget: number;
  private since = 0;
  private paused = 0;
  private stopped = false;

  constructor(
    private readonly ms: number,
    private readonly onTimeout: () => void,
    maxMs = ms,
  ) {
    this.left = ms;
    this.budget = Math.max(ms, maxMs);
    this.run();
  }

  private run(): void {
    this.since = Date.now();
    this.timer = setTimeout(this.onTimeout, Math.max(0, Math.min(this.left, this.budget)));
  }

  private spend(): void {
    clearTimeout(this.timer);
    const used = Date.now() - this.since;
    this.left -= used;
    this.budget -= used;
  }

  pause(): void {
    if (this.stopped || this.paused++ > 0) return;
    this.spend();
  }

  resume(): void {
    if (this.stopped || --this.paused > 0) return;
    this.run();
  }

  /** A sign of life (a progress report): the limit counts again from now, within the maximum. */
  touch(): void {
    if (this.stopped || this.paused > 0) return;
    this.spend();
    this.left = this.ms;
    this.run();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

/** One request's scope: its options, its own abort (the caller's, or its clock's), the SDK's options for it. */
export interface Scope {
  readonly options: CallOptions;
  readonly signal: AbortSignal;
  readonly clock: CallClock;
  readonly opts: { signal: AbortSignal; timeout: number };
  /** The caller's progress listener, each report also starting the call's clock again (undefined: the caller asked for none). */
  readonly onProgress?: ProgressListener;
}

/**
 * A request's own time limit and abort: aborted by its caller or when its clock runs out; the SDK's
 * options for it (the gateway's clock bounds the call, stopped while its caller is asked something
 * and started again by each progress report, up to `progressMaxMs`; the SDK's is a backstop behind
 * it). `end` releases them.
 */
export function scope(options: CallOptions, progressMaxMs = options.timeoutMs): Scope & { end(): void } {
  const controller = new AbortController();
  const listener = options.onProgress;
  const clock = new CallClock(options.timeoutMs, () => controller.abort(TIMEOUT), listener ? progressMaxMs : options.timeoutMs);
  const onAbort = () => controller.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const backstop = options.onClientRequest ? SDK_BACKSTOP_MS : Math.max(options.timeoutMs, listener ? progressMaxMs : 0) + 1000;
  const opts = { signal: controller.signal, timeout: backstop };
  const onProgress: ProgressListener | undefined =
    listener &&
    ((progress, total, message) => {
      clock.touch();
      listener(progress, total, message);
    });
  const end = () => {
    clock.stop();
    options.signal?.removeEventListener('abort', onAbort);
  };
  return { options, signal: controller.signal, clock, opts, onProgress, end };
}

/** What both clients of one MCP server are given by it (mcp-downstream.ts). */
export interface EraHost {
  readonly id: string;
  readonly spec: McpServerSpec;
  readonly logger: Logger;
  /** The gateway's version, its clientInfo. */
  readonly version: string;
  /** Declare elicitation, sampling and roots and put what the server asks to the caller (MCP_FORWARD_CLIENT_REQUESTS). */
  readonly forwardClientRequests: boolean;
  readonly supervisor: StdioSupervisor;
  readonly budget: StreamBudget;
  readonly calls: CallTable;
  /** Resource URIs the gateway subscribed to here (subscribed again after a restart). */
  readonly subscribed: Set<string>;
  readonly closed: boolean;
  /** What to do when the server says one of its lists changed (either era): read them again. */
  listChanged(kind: 'tools' | 'prompts' | 'resources'): () => void;
  /** The server's notifications/resources/updated for a URI the gateway subscribed to. */
  resourceUpdated(uri: string): void;
  /** What happened meanwhile was not heard (a listen stream was down): lists read again, watchers told. */
  missed(): void;
}

export interface CallTableOptions {
  logger: Logger;
  /** How long a caller has to answer one request of the server (MCP_INPUT_TIMEOUT_MS). */
  inputTimeoutMs?: number;
  /** Called when the server says a URL-mode elicitation finished (notifications/elicitation/complete). */
  onElicitationComplete?: (elicitationId: string) => void;
}

export class CallTable {
  /** The progress listeners of calls in flight, by the progressToken the gateway gave each call. */
  readonly progress = new InFlight<string, ProgressListener>();
  /** Requests in flight, for what the server asks its client meanwhile. */
  private readonly calls = new InFlight<number, CallSlot>();
  /** URL-mode elicitation ids this server put to callers, awaiting their completion notice (askedUrl). */
  private readonly urlElicitations = new Set<string>();

  constructor(
    private readonly id: string,
    private readonly options: CallTableOptions,
  ) {}

  /**
   * A request in flight on this connection (a tool call, a prompt, a resource read): what the server
   * asks its client or logs meanwhile goes to that request's caller (clientRequest, serverLog).
   */
  async inFlight<T>(what: string, call: Scope, work: (slot: CallSlot) => Promise<T>): Promise<T> {
    const { onClientRequest, onLog } = call.options;
    const slot: CallSlot = { tool: what, requester: onClientRequest, onLog, clock: call.clock, asking: 0, askedAt: 0 };
    const key = this.calls.add(slot);
    try {
      return await work(slot);
    } finally {
      this.calls.delete(key);
    }
  }

  /**
   * What the gateway takes from a server's messages as they are read, before its SDK client (either
   * era): log messages, the completion of a URL elicitation, and progress reports of the gateway's
   * own tokens. True when taken.
   */
  readonly takeFirst = (message: unknown): boolean => {
    const m = message as {
      method?: unknown;
      params?: { progressToken?: unknown; progress?: unknown; total?: unknown; message?: unknown };
    };
    if (m.method === 'notifications/message' && m.params) {
      this.serverLog(m.params as Record<string, unknown>);
      return true;
    }
    if (m.method === 'notifications/elicitation/complete') {
      const id = (m.params as { elicitationId?: unknown } | undefined)?.elicitationId;
      // only for an elicitation this server put to a caller (not another server's, whose session would be told)
      if (typeof id === 'string' && this.urlElicitations.delete(id)) this.options.onElicitationComplete?.(id);
      return true;
    }
    if (m.method === 'notifications/progress' && typeof m.params?.progressToken === 'string') {
      const listener = this.progress.get(m.params.progressToken);
      if (listener && typeof m.params.progress === 'number') {
        const { progress, total, message: text } = m.params;
        listener(progress, typeof total === 'number' ? total : undefined, typeof text === 'string' ? text : undefined);
        return true;
      }
    }
    return false;
  };

  /** The calls in flight that can be sending a message now: those not blocked on their caller's answer (else all). */
  private sendingCalls(now: number): CallSlot[] {
    const all = this.calls.values();
    const running = all.filter((c) => c.asking === 0 || now - c.askedAt < TOGETHER_MS);
    return running.length > 0 ? running : all;
  }

  /**
   * A log message of the server (notifications/message): to the caller of the one call in flight,
   * else into the gateway's own log at debug, with the server's id. Stricter than requests: a call
   * waiting on its caller may still log, so with several in flight none is told (not the wrong one).
   */
  private serverLog(params: { level?: unknown; logger?: unknown; data?: unknown }): void {
    const calls = this.calls.values();
    const message = {
      level: String(params.level ?? 'info'),
      ...(typeof params.logger === 'string' ? { logger: params.logger } : {}),
      data: params.data,
    };
    if (calls.length === 1 && calls[0].onLog) return calls[0].onLog(message);
    this.options.logger.debug(`${this.id} log message`, message);
  }

  /**
   * A request the server sends its client (elicitation, sampling, roots), put to the caller of the
   * tool call it belongs to. MCP ties such a request to no call over stdio (and the SDK shows none
   * over HTTP), so it goes to the one call in flight on this connection that can be sending it: a
   * call blocked on its caller's answer (asking for over TOGETHER_MS) is not, unless it is the only
   * call. With none, or several, there is no caller to ask and the server is told so. The call's
   * clock stops while its caller answers; the caller has MCP_INPUT_TIMEOUT_MS.
   */
  async clientRequest(method: ClientRequestMethod, params: Record<string, unknown>, signal: AbortSignal) {
    const now = Date.now();
    const calls = this.sendingCalls(now);
    if (calls.length !== 1)
      throw new McpError(
        ErrorCode.InvalidRequest,
        calls.length === 0
          ? `The mcp-fleet gateway answers ${method} only during a tool call, on behalf of that call's caller.`
          : `${calls.length} tool calls are in flight on this connection and MCP does not say which one ${method} belongs to: the mcp-fleet gateway cannot tell which caller to ask.`,
      );
    return this.askCaller(calls[0], method, params, signal);
  }

  /** Puts one request of the server to the caller of `call` (its clock stopped meanwhile; MCP_INPUT_TIMEOUT_MS to answer). */
  async askCaller(
    call: CallSlot,
    method: ClientRequestMethod,
    params: Record<string, unknown>,
    signal: AbortSignal,
    key?: string,
  ): Promise<Record<string, unknown>> {
    if (method === 'elicitation/create' && params.mode === 'url') this.askedUrl(params);
    const now = Date.now();
    if (!call.requester)
      throw new McpError(
        ErrorCode.MethodNotFound,
        `The caller of ${call.tool} cannot answer ${method}: it did not come over MCP from a client that declared the capability.`,
      );
    const limit = this.options.inputTimeoutMs ?? DEFAULT_INPUT_TIMEOUT_MS;
    const limiter = new AbortController();
    const timer = setTimeout(() => limiter.abort(), limit);
    const timeout = limiter.signal;
    call.clock.pause();
    call.asking += 1;
    call.askedAt = now;
    try {
      return await untilAborted(call.requester(method, params, AbortSignal.any([signal, timeout]), key), timeout, () =>
        this.options.logger.info(`${this.id}: the caller of ${call.tool} did not answer ${method} within ${limit} ms`),
      );
    } catch (err) {
      if (timeout.aborted)
        throw new McpError(ErrorCode.RequestTimeout, `The caller did not answer ${method} within ${limit} ms (MCP_INPUT_TIMEOUT_MS).`);
      throw err;
    } finally {
      clearTimeout(timer);
      call.asking -= 1;
      call.clock.resume();
    }
  }

  /** A URL-mode elicitation this server put to a caller: its notifications/elicitation/complete is passed on, once (the newest 1000 kept). */
  askedUrl(elicitation: unknown): void {
    const id = (elicitation as { elicitationId?: unknown } | null)?.elicitationId;
    if (typeof id !== 'string') return;
    this.urlElicitations.add(id);
    if (this.urlElicitations.size > 1000) this.urlElicitations.delete(this.urlElicitations.values().next().value!);
  }
}

/** The promise's outcome, or a rejection with the signal's reason as soon as it aborts (the caller may never answer). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, onAbort: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const withdraw = () => {
      onAbort();
      reject(signal.reason);
    };
    if (signal.aborted) return withdraw();
    signal.addEventListener('abort', withdraw, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', withdraw));
  });
}

/** What a server said it offers (either era's capabilities, as far as the gateway reads them). */
export interface Offered {
  tools?: object;
  prompts?: object;
  resources?: { subscribe?: boolean };
  completions?: object;
}

/**
 * One connection to an MCP server, in its era's client (client-2025-11-25.ts, client-2026-07-28.ts):
 * MCP's operations, each in a request's scope. What the server refuses or fails at is thrown (an
 * McpError, the SDK's error) and read by mcp-downstream.ts, which makes the answers of every era
 * alike and answers what the server does not offer (its capabilities) without asking it.
 */
export interface EraSession {
  /** The stdio child's process id while it runs. */
  readonly pid: number | undefined;
  readonly capabilities: Offered;
  /** The health answer's body: the server answered (ping, or server/discover). */
  health(call: Scope): Promise<Record<string, unknown>>;
  /** Every page of a list (up to `max` items and a page). */
  list(kind: ListName, call: Scope, max?: number): Promise<ListAnswer>;
  callTool(name: string, args: Record<string, unknown>, call: Scope): Promise<CallToolResult>;
  getPrompt(name: string, args: Record<string, unknown> | undefined, call: Scope): Promise<unknown>;
  readResource(uri: string, call: Scope): Promise<unknown>;
  complete(params: CompleteParams, call: Scope): Promise<unknown>;
  /** Subscribes to a resource's updates; false when the server did not agree to send them. */
  subscribe(uri: string, call: Scope): Promise<boolean>;
  unsubscribe(uri: string, call: Scope): Promise<void>;
}

/** What a session reads of either era's SDK client: its transport (a stdio child's pid), the server's capabilities, its lists. */
interface SdkClient {
  readonly transport?: unknown;
  getServerCapabilities(): Offered | undefined;
  listTools(params: { cursor: string } | undefined, opts: never): Promise<object>;
  listPrompts(params: { cursor: string } | undefined, opts: never): Promise<object>;
  listResources(params: { cursor: string } | undefined, opts: never): Promise<object>;
  listResourceTemplates(params: { cursor: string } | undefined, opts: never): Promise<object>;
}

/** What the sessions of both eras share: the child's pid, the server's capabilities, every page of a list. */
export abstract class SessionBase<C extends SdkClient> {
  constructor(readonly client: C) {}

  get pid(): number | undefined {
    const t = this.client.transport as { pid?: number | null } | undefined;
    return t && 'pid' in t ? (t.pid ?? undefined) : undefined;
  }

  get capabilities(): Offered {
    return this.client.getServerCapabilities() ?? {};
  }

  /** Every page of a list with the SDK's options `opts` (up to `max` items and a page). */
  protected pages(kind: ListName, call: Scope, opts: unknown, max?: number): Promise<ListAnswer> {
    const { client } = this;
    const o = opts as never;
    const method =
      kind === 'tools'
        ? client.listTools
        : kind === 'prompts'
          ? client.listPrompts
          : kind === 'resources'
            ? client.listResources
            : client.listResourceTemplates;
    return allPages(kind, (cursor) => method.call(client, cursor, o), max, call.signal);
  }
}
