/**
 * The 2025-11-25 client of an MCP server behind the gateway: the SDK's Client over stdio (a process
 * the supervisor starts) or Streamable HTTP, after the initialize handshake. Lists with their
 * pages, tool calls (a tool that runs only as a task is polled to its end), progress, what the
 * server asks its client (put to the caller of the call in flight: calls.ts), resource
 * subscriptions (subscribed again after a restart) and list changes.
 */
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ResultSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { InFlight } from '@mcp-fleet/kit';
import { DownstreamFailure, type ClientRequestMethod, type CompleteParams, type ListName } from '../downstream';
import { FORWARDED_CAPABILITIES, refusalHint, SessionBase, TIMEOUT, type EraHost, type EraSession, type Scope } from './calls';
import { START_TIMEOUT_MS } from './stdio-supervisor';
import { readInbound } from './tolerant';
import { schemaValidator } from './schema-validator';
import { isConnectionClosed, isSdkTimeout } from './answers';

export const REV_2025 = '2025-11-25';

/** Thrown by connect() when the server turned out to speak 2026-07-28 (its `probe` said so): the request goes that way. */
export const SPEAKS_2026 = Symbol('speaks 2026-07-28');

/**
 * Whether the server speaks 2026-07-28 (then connect() throws SPEAKS_2026): asked before initialize
 * ('first') and after the server answered initialize with an error ('refused'); `unanswered` is why
 * the last such question got no answer, for the error of a server that answered neither.
 */
export interface EraProbe {
  ask(when: 'first' | 'refused'): Promise<boolean>;
  unanswered(): string | undefined;
}

export class Rev2025Client {
  private session?: Rev2025Session;
  private connecting?: Promise<Rev2025Session>;
  /** A Streamable HTTP URL found to be a server of the older HTTP+SSE transport (it refused initialize as a POST, then answered over SSE). */
  private legacySse = false;

  constructor(
    private readonly host: EraHost,
    private readonly probe: EraProbe,
  ) {}

  /** The child's process id while a stdio server runs. */
  get pid(): number | undefined {
    return this.session?.pid;
  }

  /** The connected session, connecting (or starting the server) first; a slow start goes on after `timeoutMs`. */
  async connected(timeoutMs: number): Promise<Rev2025Session> {
    if (this.session) return this.session;
    const { host } = this;
    if (host.closed) throw new DownstreamFailure('refused', `${host.id} is stopped`, false);
    if (!this.connecting) {
      const wait = host.supervisor.wait;
      if (wait > 0)
        throw new DownstreamFailure(
          'refused',
          `${host.id} is not running (${host.supervisor.lastProblem}); next start in ${wait} ms`,
          false,
        );
      this.connecting = this.connect().finally(() => (this.connecting = undefined));
    }
    // A slow start goes on in the background; this request (often a health probe) does not wait past its limit.
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new DownstreamFailure('refused', `${host.id} is still starting (over ${timeoutMs} ms so far)`, false)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.connecting, limit]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async connect(): Promise<Rev2025Session> {
    const { host } = this;
    const { logger, id, supervisor } = host;
    const forward = host.forwardClientRequests;
    const client = withInFlightTables(
      new Client(
        { name: 'mcp-fleet-gateway', version: host.version },
        { capabilities: forward ? FORWARDED_CAPABILITIES : {}, jsonSchemaValidator: schemaValidator(logger) },
      ),
    );
    if (forward) {
      const ask = (method: ClientRequestMethod) => (request: { params?: unknown }, extra: { signal: AbortSignal }) =>
        host.calls.clientRequest(method, (request.params ?? {}) as Record<string, unknown>, extra.signal);
      client.setRequestHandler(ElicitRequestSchema, ask('elicitation/create') as never);
      client.setRequestHandler(CreateMessageRequestSchema, ask('sampling/createMessage') as never);
      client.setRequestHandler(ListRootsRequestSchema, ask('roots/list') as never);
    }
    const transport = this.transport();
    // What the server sends is read before the client (tolerant.ts): progress reports reach their
    // call's listener in order, before the call's answer (the Client hands notifications to their
    // handlers a microtask later but settles a response at once: a report read in the same chunk as
    // the answer, as the last one of a fast tool usually is, found its call gone and was dropped).
    readInbound(transport, host.calls.takeFirst);
    client.setNotificationHandler(ToolListChangedNotificationSchema, host.listChanged('tools'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, host.listChanged('prompts'));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, host.listChanged('resources'));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => host.resourceUpdated(n.params.uri));
    // A server declared to no era is asked server/discover: over HTTP before initialize; over stdio
    // beside it (the v2 client asks a sibling process), so a 2025-only server starts no later.
    const stdio = host.spec.transport === 'stdio';
    // (not asked again when trying the older HTTP+SSE transport: that answer is known)
    const asked = this.legacySse ? Promise.resolve(false) : this.probe.ask('first');
    if (!stdio && (await asked)) {
      await transport.close().catch(() => undefined);
      throw SPEAKS_2026;
    }
    try {
      await client.connect(transport, { timeout: START_TIMEOUT_MS });
    } catch (err) {
      await transport.close().catch(() => undefined);
      if (stdio && (await asked)) throw SPEAKS_2026;
      // A URL that refuses initialize as a POST (400, 404, 405) may be a server of the older HTTP+SSE
      // transport: asked once more over it, as MCP's backwards compatibility asks of clients.
      if (host.spec.transport === 'streamable-http' && !this.legacySse && refusedPost(err)) {
        this.legacySse = true;
        logger.info(`${id} refused initialize as a POST (${(err as Error).message.slice(0, 200)}); trying the HTTP+SSE transport`);
        try {
          return await this.connect();
        } catch (sseErr) {
          this.legacySse = false;
          const cause = (sseErr as { cause?: unknown }).cause;
          const why = `it refused initialize (${(err as Error).message}) and did not answer over HTTP+SSE either (${((cause ?? sseErr) as Error).message})`;
          supervisor.lastProblem = why;
          throw new DownstreamFailure('refused', `${id} did not start: ${why}`, false, { cause: err });
        }
      }
      supervisor.starts += 1;
      // A server that answered initialize with an error may be of the 2026-07-28 revision (a process
      // that exited or did not answer is not asked).
      const answered = answeredWithError(err);
      if (answered && (await this.probe.ask('refused'))) throw SPEAKS_2026;
      const discover = this.probe.unanswered();
      const closed = isConnectionClosed(err);
      const why =
        stdio && closed
          ? // its process ended (or closed its stdout) before it answered anything: say so, not each probe's wording
            'its process ended before it answered initialize' + (discover === undefined ? '' : ' or server/discover')
          : discover === undefined
            ? (err as Error).message
            : `it answered neither server/discover (${discover}) nor initialize (${(err as Error).message})`;
      supervisor.failed(`${why}${refusalHint(err, why)}${supervisor.stderrTail()}`);
      throw new DownstreamFailure('refused', `${id} did not start: ${supervisor.lastProblem}`, false, { cause: err });
    }
    if (stdio && (await asked)) {
      // a server of both eras: spoken to in the newer revision (its own process runs already)
      await client.close().catch(() => undefined);
      throw SPEAKS_2026;
    }
    supervisor.starts += 1;
    const session = new Rev2025Session(client, host);
    // set after connect: a failed start is handled above, not by the close handler
    client.onclose = () => {
      if (this.session !== session) return;
      this.session = undefined;
      if (host.closed) return;
      const exit = host.spec.transport === 'stdio' ? `the process exited${supervisor.stderrTail()}` : 'the connection closed';
      supervisor.failed(exit);
      logger.warn(`${id} stopped: ${exit}; restarting in ${supervisor.wait} ms`);
      if (host.spec.transport === 'stdio') supervisor.scheduleRestart(() => this.connected(START_TIMEOUT_MS));
    };
    this.session = session;
    supervisor.up();
    // A restarted server knows nothing of the subscriptions the gateway's clients hold.
    for (const uri of host.subscribed)
      client
        .subscribeResource({ uri })
        .catch((err: Error) => logger.warn(`${id}: could not subscribe to ${uri} again`, { err: err.message }));
    const server = client.getServerVersion();
    logger.info(`${id} connected over MCP`, {
      transport: host.spec.transport,
      server: server ? `${server.name} ${server.version}` : undefined,
      pid: session.pid,
    });
    return session;
  }

  private transport(): Transport {
    const { spec, budget, supervisor } = this.host;
    if (spec.transport === 'streamable-http' && !this.legacySse) {
      return budget.http(
        (fetch) => new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, fetch }),
      );
    }
    // the older HTTP+SSE transport (declared, or found): its answers arrive on its one event stream, counted per event
    if (spec.transport !== 'stdio')
      return budget.http((fetch) => new SSEClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, fetch }));
    const run = supervisor.launch(spec);
    if (run instanceof DownstreamFailure) throw run;
    const t = budget.stdio(new StdioClientTransport({ ...run, stderr: 'pipe', maxBufferSize: budget.stdioBufferSize }));
    t.stderr?.on('data', supervisor.onStderr);
    return t;
  }

  /** Forgets a broken connection (the next request connects again) and closes it; false when there was none. */
  drop(): boolean {
    const session = this.session;
    if (!session) return false;
    this.session = undefined;
    void session.client.close().catch(() => undefined);
    return true;
  }

  async close(): Promise<void> {
    const session = this.session ?? (await this.connecting?.catch(() => undefined));
    this.session = undefined;
    await session?.client.close().catch(() => undefined);
  }
}

/** One initialized connection: MCP's operations on the SDK's Client. */
class Rev2025Session extends SessionBase<Client> implements EraSession {
  constructor(
    client: Client,
    private readonly host: EraHost,
  ) {
    super(client);
  }

  /** Found not to answer ping (some servers never do): its health is then its answer to a list. */
  private pingless = false;

  /**
   * Alive when it answers ping, or answers it with an error (a server without ping: -32601). One that
   * leaves ping unanswered for the health check's whole time is asked its first page of tools (or
   * prompts, resources) at once, with a time of its own, and from then on instead of ping: the answer
   * to that shows it alive.
   */
  async health(call: Scope): Promise<Record<string, unknown>> {
    const alive = { status: 'healthy', transport: this.host.spec.transport };
    let opts = call.opts;
    if (!this.pingless) {
      try {
        await this.client.ping(call.opts);
        return alive;
      } catch (err) {
        if (answeredWithError(err)) return alive;
        // only ping's own time running out (not the caller going away, not a closed connection)
        if (!(call.signal.aborted && call.signal.reason === TIMEOUT) || call.options.signal?.aborted) throw err;
        this.pingless = true;
        this.host.logger.info(`${this.host.id} did not answer ping; its health is now its answer to a list's first page`);
        const timeoutMs = call.options.timeoutMs;
        const own = AbortSignal.timeout(timeoutMs);
        opts = { signal: call.options.signal ? AbortSignal.any([call.options.signal, own]) : own, timeout: timeoutMs + 1000 };
      }
    }
    const caps = this.capabilities;
    const method = caps.tools ? 'tools/list' : caps.prompts ? 'prompts/list' : caps.resources ? 'resources/list' : undefined;
    if (method) await this.client.request({ method, params: {} }, ResultSchema, opts);
    return { ...alive, ping: 'unanswered' };
  }

  list(kind: ListName, call: Scope, max?: number) {
    return this.pages(kind, call, call.opts, max);
  }

  callTool(name: string, args: Record<string, unknown>, call: Scope): Promise<CallToolResult> {
    return this.host.calls.inFlight(name, call, () => this.call(name, args, call));
  }

  private async call(name: string, args: Record<string, unknown>, call: Scope): Promise<CallToolResult> {
    const { client } = this;
    const { opts } = call;
    const onProgress = call.onProgress;
    // A tool the server runs only as a (2025-11-25) task: the gateway creates it and polls it to its end.
    if ((client as unknown as { isToolTaskRequired(name: string): boolean }).isToolTaskRequired(name))
      return callThroughTask(client, name, args, opts);
    if (!onProgress) return (await client.callTool({ name, arguments: args, ...callersMetaOf(call) }, undefined, opts)) as CallToolResult;
    // The call's own progressToken, its reports delivered as read (readInbound).
    const progressToken = `gateway-${randomUUID()}`;
    const { progress } = this.host.calls;
    progress.set(progressToken, onProgress);
    try {
      return (await client.callTool(
        { name, arguments: args, _meta: { ...call.options.meta, progressToken } },
        undefined,
        opts,
      )) as CallToolResult;
    } finally {
      progress.delete(progressToken);
    }
  }

  getPrompt(name: string, args: Record<string, unknown> | undefined, call: Scope): Promise<unknown> {
    return this.host.calls.inFlight(`prompt ${name}`, call, () =>
      this.client.getPrompt({ name, arguments: args as Record<string, string> | undefined, ...callersMetaOf(call) }, call.opts),
    );
  }

  readResource(uri: string, call: Scope): Promise<unknown> {
    return this.host.calls.inFlight(`resource ${uri}`, call, () => this.client.readResource({ uri, ...callersMetaOf(call) }, call.opts));
  }

  complete(params: CompleteParams, call: Scope): Promise<unknown> {
    return this.client.complete(params, call.opts);
  }

  async subscribe(uri: string, call: Scope): Promise<boolean> {
    await this.client.subscribeResource({ uri }, call.opts);
    this.host.subscribed.add(uri);
    return true;
  }

  async unsubscribe(uri: string, call: Scope): Promise<void> {
    this.host.subscribed.delete(uri);
    await this.client.unsubscribeResource({ uri }, call.opts);
  }
}

/** The SDK Protocol's tables of requests in flight (TypeScript-private fields of SDK 1.x). */
const SDK_REQUEST_TABLES = ['_responseHandlers', '_progressHandlers', '_timeoutInfo', '_requestHandlerAbortControllers'];

/**
 * The client with its Protocol's tables of requests in flight as the kit's InFlight instead of
 * Maps: a Map churned by requests keeps every finished request's handlers, and through them its
 * whole call, alive through scavenges once one of its tables is old (docs/gateway.md, "What kept
 * every call's objects alive"). The SDK reads them with get, set, delete, clear and values, all of
 * which InFlight has. A field that is missing or not an empty Map (another SDK version) is left alone.
 */
export function withInFlightTables<T extends object>(client: T): T {
  const fields = client as unknown as Record<string, unknown>;
  for (const name of SDK_REQUEST_TABLES) {
    const table = fields[name];
    if (table instanceof Map && table.size === 0) fields[name] = new InFlight();
  }
  return client;
}

/**
 * tools/call of a tool whose execution.taskSupport is "required": task-augmented, polled through the
 * SDK until its result. An abort (the caller's cancel, the time limit) cancels the server's task too.
 */
async function callThroughTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  opts: { signal: AbortSignal; timeout: number },
): Promise<CallToolResult> {
  let taskId: string | undefined;
  const cancel = () => {
    if (taskId) void client.experimental.tasks.cancelTask(taskId).catch(() => undefined);
  };
  opts.signal.addEventListener('abort', cancel, { once: true });
  try {
    for await (const message of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, opts)) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      else if (message.type === 'result') return message.result as CallToolResult;
      else if (message.type === 'error') throw message.error;
    }
    throw new McpError(ErrorCode.InternalError, `${name}: the task ended without a result`);
  } finally {
    opts.signal.removeEventListener('abort', cancel);
  }
}

/** A request's `_meta` param: the caller's own keys (callersMeta), none when it sent none. */
function callersMetaOf(call: Scope): { _meta?: Record<string, unknown> } {
  return call.options.meta ? { _meta: call.options.meta } : {};
}

/** Statuses a Streamable HTTP POST of initialize gets from a server of the older HTTP+SSE transport. */
const LEGACY_REFUSALS = new Set([400, 404, 405]);

/** Whether initialize failed because the URL refused it as a POST (the SDK's StreamableHTTPError carries the status). */
function refusedPost(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return err instanceof StreamableHTTPError && typeof code === 'number' && LEGACY_REFUSALS.has(code);
}

/**
 * What the v1 transport's HTTP error means: its code is an HTTP status, never a JSON-RPC code. A body
 * that is the server's JSON-RPC error is that error; anything else is a failed transport (a plain
 * Error: the connection is dropped and the call is UPSTREAM_UNAVAILABLE).
 */
export function readHttpError(err: unknown): unknown {
  if (!(err instanceof StreamableHTTPError)) return err;
  const text = err.message.slice(err.message.indexOf('{'));
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    const e = body?.error;
    if (typeof e?.code === 'number' && typeof e.message === 'string') return new McpError(e.code, e.message, e.data);
  } catch {
    // not JSON
  }
  return new Error(`HTTP ${String(err.code)}: ${err.message.replace(/^Streamable HTTP error: /, '').slice(0, 300)}`);
}

/**
 * A 2025-era session's request the server answered 404: it no longer knows the session (restarted), so
 * MCP has the client initialize anew. Also a 400 whose answer says the session is not valid: servers
 * that copied the SDK README's example answer an unknown session "Bad Request: No valid session ID
 * provided", and a restarted server of one transport "Server not initialized" (the request was not
 * run there either).
 */
export function sessionExpired(err: unknown): boolean {
  if (!(err instanceof StreamableHTTPError)) return false;
  return err.code === 404 || (err.code === 400 && SESSION_REFUSED.test(err.message));
}
const SESSION_REFUSED =
  /\b(?:no valid|invalid|unknown|expired|missing)\b[^.]{0,20}\bsession\b|\bsession\b[^.]{0,20}\b(?:not found|invalid|unknown|expired|is not valid|does not exist)\b|\bserver not initiali[sz]ed\b/i;

/** The server's own JSON-RPC error: it answered (not a closed connection or the SDK's time limit). */
function answeredWithError(err: unknown): boolean {
  return err instanceof McpError && !isConnectionClosed(err) && !isSdkTimeout(err);
}
