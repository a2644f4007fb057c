/**
 * The 2026-07-28 client of an MCP server behind the gateway: no initialize, every request stands
 * alone (server/discover first), and what the server needs from the client (elicitation, sampling,
 * roots) comes back in-band as an `input_required` result (SEP-2322) instead of a server-to-client
 * request. Such a server is declared with `"protocolVersion": "2026-07-28"` in MCP_SERVERS, or found
 * (it answered server/discover), and spoken to with the official v2 client, pinned to that revision,
 * with its automatic fulfilment off: the gateway puts each round's requests to the caller of the
 * very call that got them (keyed as the server keyed them) and sends the request again with the
 * answers and the server's `requestState`. List changes and resource updates come over one
 * subscriptions/listen stream, opened again with backoff when the server ends it.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport, type McpSubscription, type SubscriptionFilter } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isPlainObject, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, TASKS_EXTENSION } from '@mcp-fleet/kit';
import { CLIENT_REQUEST_METHODS, DownstreamFailure, type ClientRequestMethod, type CompleteParams, type ListName } from '../downstream';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { StreamBudget } from '../stream-budget';
import {
  askable,
  refusalHint,
  FORWARDED_CAPABILITIES,
  SessionBase,
  type CallSlot,
  type EraHost,
  type EraSession,
  type Scope,
} from './calls';
import { mirroredParamHeaders, scanParamHeaders, type ParamHeader } from './param-headers';
import { followTask, offersTasks, RawRequests } from './server-tasks';
import { schemaValidator } from './schema-validator';
import { readInbound } from './tolerant';
import { MAX_BACKOFF_MS, STABLE_MS, START_TIMEOUT_MS } from './stdio-supervisor';

export const REV_2026 = '2026-07-28';
/** The gateway's clientInfo name toward the servers behind it. */
const CLIENT_NAME = 'mcp-fleet-gateway';
/** Rounds of questions one request may take before the gateway gives up on it (the v2 client's own default). */
const MAX_ROUNDS = 10;
const ASKABLE: ReadonlySet<string> = new Set(CLIENT_REQUEST_METHODS);

/** Asks the caller one of the server's input requests; `key` is the server's name for it. */
export type InputAsker = (method: ClientRequestMethod, params: Record<string, unknown>, key: string) => Promise<Record<string, unknown>>;

/** Where a 2026-07-28 server is: a URL (Streamable HTTP), or a program to start (stdio; its stderr piped). */
export type Rev2026Target =
  | { url: string; headers: Record<string, string> }
  | { command: string; args: string[]; cwd?: string; env: Record<string, string>; onStderr: (chunk: Buffer) => void };

/**
 * Connects (server/discover) to a 2026-07-28 server; `capabilities` are what the gateway may be asked;
 * `budget` counts what the server sends and closes a request's stream with it; `takeFirst` sees
 * each message as it is read, before the client, and keeps those it returns true for.
 */
export async function connect2026(
  target: Rev2026Target,
  capabilities: Record<string, unknown>,
  timeoutMs: number,
  budget: StreamBudget,
  takeFirst: (message: unknown) => boolean = () => false,
  version = '0.0.0',
  validator?: jsonSchemaValidator,
): Promise<Client> {
  const client = new Client({ name: CLIENT_NAME, version }, {
    capabilities,
    ...(validator ? { jsonSchemaValidator: validator } : {}),
    versionNegotiation: { mode: { pin: REV_2026 } },
    inputRequired: { autoFulfill: false },
  } as ConstructorParameters<typeof Client>[1]);
  let transport: StreamableHTTPClientTransport | StdioClientTransport;
  // What the server said with a 401 or 403 while connecting (server/discover): the v2 client's error
  // names only the status. Afterwards the transport's answers pass untouched.
  let refusal: string | undefined;
  let connecting = true;
  if ('url' in target)
    transport = budget.http(
      (fetch) =>
        new StreamableHTTPClientTransport(new URL(target.url), {
          requestInit: { headers: target.headers },
          fetch: async (url, init) => {
            const res = await fetch(url, init);
            if (!connecting || (res.status !== 401 && res.status !== 403)) return res;
            // read here, within a time limit, and handed on as it came: a body that never comes hangs nothing
            const said = await textStart(res, REFUSAL_CHARS, REFUSAL_WAIT_MS);
            refusal = said.replace(/\s+/g, ' ').trim().slice(0, REFUSAL_CHARS);
            const headers = new Headers(res.headers);
            headers.delete('content-length');
            headers.delete('content-encoding');
            return new Response(said, { status: res.status, statusText: res.statusText, headers });
          },
        }),
    );
  else {
    const { command, args, cwd, env, onStderr } = target;
    transport = budget.stdio(new StdioClientTransport({ command, args, cwd, env, stderr: 'pipe', maxBufferSize: budget.stdioBufferSize }));
    transport.stderr?.on('data', onStderr);
  }
  readInbound(transport, takeFirst, withDefaults);
  try {
    await client.connect(transport, { timeout: timeoutMs } as never);
  } catch (err) {
    await client.close().catch(() => undefined);
    throw refusal && err instanceof Error && !err.message.includes(refusal) ? new Error(`${err.message}: ${refusal}`, { cause: err }) : err;
  } finally {
    connecting = false;
  }
  return client;
}

/** How much of a refusal's body the reason quotes, and how long it is waited for. */
const REFUSAL_CHARS = 300;
const REFUSAL_WAIT_MS = 250;

/**
 * The start of a response's body: what came within `waitMs`, read until it holds `max` characters
 * (the chunk that passes it included); the rest is not read.
 */
async function textStart(res: Response, max: number, waitMs: number): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const decoder = new TextDecoder();
  const timeUp = delay(waitMs, undefined, { ref: false });
  let text = '';
  try {
    while (text.length < max) {
      const chunk = await Promise.race([reader.read(), timeUp]);
      if (!chunk || chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
  } catch {
    // what came before the failure is the text
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return text;
}

/** Results the revision makes cacheable: lists and reads. */
const CACHEABLE = ['tools', 'prompts', 'resources', 'resourceTemplates', 'contents'];

/**
 * What a sloppy server leaves out, filled in as the revision reads an older server's result: no
 * `resultType` is complete; a list or read without `ttlMs`/`cacheScope` is not to be cached (0 ms,
 * private), never a reason to refuse the answer (the v2 client refused it, and the whole server read
 * as unhealthy).
 */
export function withDefaults(result: Record<string, unknown>): Record<string, unknown> {
  const cacheable = CACHEABLE.some((k) => Array.isArray(result[k]));
  const badScope = result.cacheScope !== 'public' && result.cacheScope !== 'private';
  if ('resultType' in result && (!cacheable || (typeof result.ttlMs === 'number' && !badScope))) return result;
  const out: Record<string, unknown> = { ...result };
  if (!('resultType' in out)) out.resultType = 'complete';
  if (cacheable && typeof out.ttlMs !== 'number') out.ttlMs = 0;
  if (cacheable && badScope) out.cacheScope = 'private';
  return out;
}

/**
 * Sends a request that the server may answer `input_required`: each round's requests go to `ask`
 * (all of a round at once), then the request again with `inputResponses` and the server's
 * `requestState`, until a complete result.
 */
export async function withInputRounds<T>(
  what: string,
  send: (extra: Record<string, unknown>) => Promise<unknown>,
  ask: InputAsker,
  /** What the first request carries besides (answers the caller sent up front). */
  first: Record<string, unknown> = {},
): Promise<T> {
  let extra: Record<string, unknown> = first;
  for (let round = 1; ; round++) {
    const result = await send(extra);
    if (!isPlainObject(result) || result.resultType !== 'input_required') return result as T;
    if (round > MAX_ROUNDS)
      throw new McpError(ErrorCode.InternalError, `${what} still asked for input after ${MAX_ROUNDS} rounds; the gateway gave up on it.`);
    extra = {
      inputResponses: await askAll(what, result.inputRequests, ask),
      ...(typeof result.requestState === 'string' ? { requestState: result.requestState } : {}),
    };
  }
}

/**
 * Puts a server's input requests (an input_required result's, or its task's) to the caller, all at
 * once: the answers keyed as the server keyed the requests. A request the gateway cannot put to a
 * client (no elicitation, sampling or roots) fails the call.
 */
export async function askAll(what: string, inputRequests: unknown, ask: InputAsker): Promise<Record<string, unknown>> {
  const requests = isPlainObject(inputRequests) ? Object.entries(inputRequests) : [];
  for (const [key, request] of requests)
    if (!isPlainObject(request) || typeof request.method !== 'string' || !ASKABLE.has(request.method))
      throw new McpError(ErrorCode.InternalError, `${what} asked for input the gateway cannot put to a client (${key}).`);
  const answers = await Promise.all(
    requests.map(async ([key, request]) => {
      const { method, params } = request as { method: ClientRequestMethod; params?: unknown };
      return [key, await ask(method, isPlainObject(params) ? params : {}, key)] as const;
    }),
  );
  return Object.fromEntries(answers);
}

/** A v2 client's error as the v1 McpError the rest of the gateway reads (code, message, data; its prefixes are stripped there). */
export function asMcpError(err: unknown): unknown {
  if (err instanceof McpError || !(err instanceof Error)) return err;
  const { code, data } = err as Error & { code?: unknown; data?: unknown };
  if (typeof code === 'number') return new McpError(code, err.message, data);
  // An HTTP error status whose body is the server's JSON-RPC error (the revision answers -32601 with
  // 404 and header mismatches with 400): that error, not a failed transport.
  const text = isPlainObject(data) && typeof data.status === 'number' && typeof data.text === 'string' ? data.text : undefined;
  if (text === undefined) return err;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return err;
  }
  const error = isPlainObject(body) && isPlainObject(body.error) ? body.error : undefined;
  if (typeof error?.code !== 'number' || typeof error.message !== 'string') return err;
  return new McpError(error.code, error.message, error.data);
}

/** The gateway's listen stream at a 2026-07-28 server: what it listens for (as sent), on which client, what the server honoured. */
interface Watch {
  key: string;
  client: Client;
  subscription: McpSubscription;
  honored: SubscriptionFilter;
}

/** The 2026-07-28 client of one server: connected (server/discover) on first use and again after a failure. */
export class Rev2026Client {
  private connecting?: Promise<Rev2026Session>;
  /** The session once connected (for the stdio child's pid). */
  private session?: Rev2026Session;
  private watch?: Watch;
  /** Listen streams are opened one at a time (each change of what to listen for waits for the one before). */
  private watchChain: Promise<unknown> = Promise.resolve();
  private rewatchTimer?: NodeJS.Timeout;
  /** How long after the next listen stream that ends early it is opened again (1 s doubling to 30 s; 1 s after one that lasted STABLE_MS). */
  private listenDelayMs = 1000;
  /**
   * The Mcp-Param headers (SEP-2243) each of the server's tools declares, from its latest listing
   * (kept across reconnections): its calls carry them. A tool whose declarations break the rules
   * has none here; the gateway does not offer it over MCP (../../mcp/rev-2026-07-28/param-headers.ts).
   */
  readonly paramHeaders = new Map<string, ParamHeader[]>();

  constructor(private readonly host: EraHost) {}

  /** Reads the x-mcp-header declarations of a tools/list's items. */
  declaredParamHeaders(tools: readonly unknown[]): void {
    this.paramHeaders.clear();
    for (const tool of tools) {
      if (!isPlainObject(tool) || typeof tool.name !== 'string') continue;
      const scan = scanParamHeaders(tool.inputSchema);
      if (scan.valid && scan.headers.length > 0) this.paramHeaders.set(tool.name, scan.headers);
    }
  }

  get pid(): number | undefined {
    return this.session?.pid;
  }

  /**
   * The connected session (server/discover on first use, and again after a failure). `probing`: the
   * question whether a server declared to no era speaks this revision; its failure is an answer
   * (the server is spoken to in 2025), so what the process wrote to stderr is not logged as a stop.
   */
  connected(timeoutMs: number, probing = false): Promise<Rev2026Session> {
    const { host } = this;
    if (host.closed) return Promise.reject(new DownstreamFailure('refused', `${host.id} is stopped`, false));
    if (this.connecting) return this.connecting;
    // connecting (every request comes here; only a new connection clears a stdio child's stderr)
    const { spec, supervisor } = host;
    const capabilities = host.forwardClientRequests ? FORWARDED_CAPABILITIES : {};
    const target =
      spec.transport !== 'stdio'
        ? { url: spec.url, headers: spec.headers }
        : (() => {
            const run = supervisor.launch(spec);
            return run instanceof DownstreamFailure ? run : { ...run, onStderr: supervisor.onStderr };
          })();
    if (target instanceof DownstreamFailure) return Promise.reject(target);
    // the gateway's own requests on this connection (a server's tasks), answered before the client sees them
    let connected: Client | undefined;
    const raw = new RawRequests(() => connected?.transport, {
      [META_PROTOCOL_VERSION]: REV_2026,
      'io.modelcontextprotocol/clientInfo': { name: CLIENT_NAME, version: host.version },
    });
    const connecting = connect2026(
      target,
      capabilities,
      Math.min(timeoutMs, START_TIMEOUT_MS),
      host.budget,
      (message) => raw.take(message) || host.calls.takeFirst(message),
      host.version,
      schemaValidator(host.logger),
    ).then(
      (client) => {
        connected = client;
        supervisor.starts += 1;
        supervisor.up();
        const session = new Rev2026Session(client, host, this, raw);
        this.session = session;
        const server = client.getServerVersion();
        host.logger.info(`${host.id} connected over MCP ${REV_2026}`, {
          server: server ? `${server.name} ${server.version}` : undefined,
        });
        this.hear(client);
        return session;
      },
      (err: Error) => {
        if (this.connecting === connecting) this.connecting = undefined;
        supervisor.lastProblem = `${err.message}${refusalHint(err, err.message)}${supervisor.stderrTail(!probing)}`;
        throw new DownstreamFailure('refused', `${host.id} did not answer server/discover: ${supervisor.lastProblem}`, false, {
          cause: err,
        });
      },
    );
    this.connecting = connecting;
    return connecting;
  }

  /**
   * What the server says on the gateway's listen stream goes where a 2025 server's unsolicited
   * notifications go; the stream opens at once when the server offers list changes or the gateway's
   * clients already watch some of its resources.
   */
  private hear(client: Client): void {
    const { id, logger } = this.host;
    for (const kind of ['tools', 'prompts', 'resources'] as const)
      client.setNotificationHandler(`notifications/${kind}/list_changed`, this.host.listChanged(kind));
    client.setNotificationHandler('notifications/resources/updated', (n) => this.host.resourceUpdated(n.params.uri));
    if (Object.keys(this.filter(client)).length > 0)
      this.listen(client).catch((err: Error) => {
        logger.warn(`${id}: could not listen for its changes; trying again`, { err: err.message });
        this.listenLater(err);
      });
  }

  /** What the gateway listens for: the list changes the server offers, and updates of the resources the gateway's clients watch. */
  private filter(client: Client): SubscriptionFilter {
    const caps = client.getServerCapabilities() ?? {};
    const { subscribed } = this.host;
    return {
      ...(caps.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(caps.prompts?.listChanged ? { promptsListChanged: true } : {}),
      ...(caps.resources?.listChanged ? { resourcesListChanged: true } : {}),
      ...(caps.resources?.subscribe && subscribed.size > 0 ? { resourceSubscriptions: [...subscribed].sort() } : {}),
    };
  }

  /**
   * Opens the listen stream again when what to listen for changed (a new stream, acknowledged, then
   * the old one closed, so no update falls between them); none when there is nothing to listen for.
   * Answers what the server honoured. A stream the server ends is opened again (listenLater).
   */
  listen(client: Client, timeoutMs = START_TIMEOUT_MS): Promise<SubscriptionFilter> {
    const run = this.watchChain.then(async () => {
      const filter = this.filter(client);
      const key = JSON.stringify(filter);
      const current = this.watch;
      if (current?.key === key && current.client === client) return current.honored;
      let next: Watch | undefined;
      if (Object.keys(filter).length > 0) {
        const subscription = await client.listen(filter, { timeout: timeoutMs });
        const watch = { key, client, subscription, honored: subscription.honoredFilter };
        const openedAt = Date.now();
        next = watch;
        void subscription.closed.then((how) => {
          if (how === 'local' || this.watch !== watch) return;
          this.watch = undefined;
          // a server (or a proxy) that ends every stream soon after it opens is asked again less and less often
          const delay = Date.now() - openedAt >= STABLE_MS ? 1000 : this.listenDelayMs;
          this.listenDelayMs = Math.min(delay * 2, MAX_BACKOFF_MS);
          this.host.logger.warn(`${this.host.id} ended the gateway's listen stream (${how}); listening again in ${delay} ms`);
          this.listenLater(undefined, delay);
        });
      }
      this.watch = next;
      await current?.subscription.close();
      return next?.honored ?? {};
    });
    this.watchChain = run.catch(() => undefined);
    return run;
  }

  /**
   * Listens again after the stream ended or could not open, with backoff (1 s doubling to 30 s).
   * What changed meanwhile was not heard: the lists are read again and watchers of its resources told.
   */
  private listenLater(failure?: unknown, delayMs = 1000): void {
    if (this.host.closed || this.rewatchTimer) return;
    const refused = asMcpError(failure);
    if (refused instanceof McpError && refused.code === ErrorCode.MethodNotFound) {
      this.host.logger.warn(`${this.host.id} has no subscriptions/listen: its changes are found by polling only`);
      return;
    }
    this.rewatchTimer = setTimeout(() => {
      this.rewatchTimer = undefined;
      this.connected(START_TIMEOUT_MS)
        .then((session) => this.listen(session.client))
        .then(() => this.host.missed())
        .catch((err: unknown) => this.listenLater(err, Math.min(delayMs * 2, MAX_BACKOFF_MS)));
    }, delayMs);
    this.rewatchTimer.unref();
  }

  /** Forgets the client (the next request connects again) and closes it. */
  async drop(): Promise<void> {
    const connecting = this.connecting;
    const watch = this.watch;
    this.connecting = undefined;
    this.session = undefined;
    this.watch = undefined;
    await watch?.subscription.close().catch(() => undefined);
    const session = await connecting?.catch(() => undefined);
    session?.raw.close();
    await session?.client.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.rewatchTimer) clearTimeout(this.rewatchTimer);
    await this.drop();
  }
}

/** A 2026-07-28 server's session: MCP's operations on the v2 client, each request standing alone. */
class Rev2026Session extends SessionBase<Client> implements EraSession {
  constructor(
    client: Client,
    private readonly host: EraHost,
    private readonly owner: Rev2026Client,
    /** The gateway's own requests on this session's transport (a server's tasks: server-tasks.ts). */
    readonly raw: RawRequests,
  ) {
    super(client);
  }

  /** The SDK's options of a request (the gateway polls the lists itself: the v2 client's response cache is not used). */
  private opts(call: Scope, inputRequired = false, headers?: Record<string, string>) {
    return {
      ...call.opts,
      cacheMode: 'bypass' as const,
      ...(inputRequired ? { allowInputRequired: true } : {}),
      ...(headers ? { headers } : {}),
    } as never;
  }

  /**
   * What the request carries in _meta: the caller's own keys (callersMeta), what this caller can be
   * asked (of what the gateway forwards) and, for a tool call to a server that offers it, the tasks
   * extension; its log level when someone listens.
   */
  private meta(call: Scope, tasks = false): Record<string, unknown> {
    // Its log messages are asked for (every level: the caller's own filter applies) only when someone listens.
    return {
      ...call.options.meta,
      [META_CLIENT_CAPABILITIES]: this.capabilitiesOf(call, tasks),
      ...(call.options.onLog ? { 'io.modelcontextprotocol/logLevel': 'debug' } : {}),
    };
  }

  /**
   * The client capabilities a request of this call declares. The tasks extension only to a server
   * that offers it, and never for a 2026-07-28 caller that did not declare it itself: the server then
   * answers as it would answer that caller directly (-32021 for a tool that needs a task). A 2025-era
   * or REST caller cannot declare it; the gateway follows the server's task for it.
   */
  private capabilitiesOf(call: Scope, tasks: boolean): Record<string, unknown> {
    const caller = call.options.onClientRequest;
    const askableCaps = askable(this.host.forwardClientRequests ? caller?.capabilities : undefined);
    const declined = caller?.revision === '2026-07-28' && !offersTasks(caller.capabilities); // (the same shape as a server's)
    return tasks && !declined ? { ...askableCaps, extensions: { [TASKS_EXTENSION]: {} } } : askableCaps;
  }

  /**
   * A request the server may answer input_required: what it asks goes to the caller of this very
   * call (no attribution rule needed), keyed as the server keyed it; the answers the caller sent up
   * front go with the first request.
   */
  private rounds<T>(
    what: string,
    label: string,
    call: Scope,
    send: (extra: Record<string, unknown>, ask: InputAsker) => Promise<unknown>,
  ): Promise<T> {
    const caller = call.options.onClientRequest;
    const first = caller?.inputResponses ? { inputResponses: caller.inputResponses } : {};
    return this.host.calls.inFlight(what, call, (slot: CallSlot) => {
      const ask: InputAsker = (method, params, key) => this.host.calls.askCaller(slot, method, params, call.signal, key);
      return withInputRounds<T>(label, (extra) => send(extra, ask), ask, first);
    });
  }

  async health(call: Scope): Promise<Record<string, unknown>> {
    await this.client.discover(this.opts(call));
    return { status: 'healthy', transport: this.host.spec.transport, protocolVersion: REV_2026 };
  }

  async list(kind: ListName, call: Scope, max?: number) {
    const answer = await this.pages(kind, call, this.opts(call), max);
    if (kind === 'tools' && answer.value) this.owner.declaredParamHeaders(answer.value.items);
    return answer;
  }

  async callTool(name: string, args: Record<string, unknown>, call: Scope): Promise<CallToolResult> {
    // the call's own progressToken, its reports delivered as read (takeFirst), before its answer
    const onProgress = call.onProgress;
    const progressToken = onProgress ? `gateway-${randomUUID()}` : undefined;
    const { progress } = this.host.calls;
    if (progressToken) progress.set(progressToken, onProgress!);
    const tasks = offersTasks(this.client.getServerCapabilities());
    const params = {
      name,
      arguments: args,
      _meta: { ...this.meta(call, tasks), ...(progressToken ? { progressToken } : {}) },
    };
    // its x-mcp-header arguments as Mcp-Param headers (SEP-2243), as the server's listing declares them
    const declared = this.owner.paramHeaders.get(name);
    const headers = declared ? mirroredParamHeaders(declared, args) : undefined;
    const opts = this.opts(call, true, headers);
    const what = `The tool ${name}`;
    try {
      return await this.rounds<CallToolResult>(name, what, call, (extra, ask) =>
        tasks
          ? this.callAsRequester(what, { ...params, ...extra }, call, ask, headers)
          : this.client.callTool({ ...params, ...extra }, opts),
      );
    } finally {
      if (progressToken) progress.delete(progressToken);
    }
  }

  /**
   * tools/call to a server that offers the tasks extension (declared in the request): sent raw, for
   * the SDK client refuses a CreateTaskResult. A task is followed to its end inside this call
   * (followTask); input_required goes back to the rounds; a complete result is checked as the SDK
   * would have.
   */
  private async callAsRequester(
    what: string,
    params: Record<string, unknown>,
    call: Scope,
    ask: InputAsker,
    headers?: Record<string, string>,
  ): Promise<unknown> {
    const result = await this.raw.request('tools/call', params, call.signal, headers);
    const type = result.resultType ?? 'complete';
    if (type === 'input_required') return result;
    if (type === 'complete') return CallToolResultSchema.parse(result) && result;
    if (type !== 'task')
      throw Object.assign(new Error(`Unsupported result type '${String(type).slice(0, 100)}' for tools/call`), {
        code: 'UNSUPPORTED_RESULT_TYPE',
      });
    const { host } = this;
    return followTask(result, {
      what,
      raw: this.raw,
      meta: { [META_CLIENT_CAPABILITIES]: this.capabilitiesOf(call, true) },
      signal: call.signal,
      answer: (inputRequests) => askAll(what, inputRequests, ask),
      onCancelFailed: (taskId, err) =>
        host.logger.warn(`${host.id}: could not cancel its task ${taskId} of a call the gateway gave up`, {
          err: err instanceof Error ? err.message : String(err),
        }),
    });
  }

  getPrompt(name: string, args: Record<string, unknown> | undefined, call: Scope): Promise<unknown> {
    const _meta = this.meta(call);
    const opts = this.opts(call, true);
    return this.rounds(`prompt ${name}`, `The prompt ${name}`, call, (extra) =>
      this.client.getPrompt({ name, arguments: args as Record<string, string> | undefined, _meta, ...extra }, opts),
    );
  }

  readResource(uri: string, call: Scope): Promise<unknown> {
    const _meta = this.meta(call);
    const opts = this.opts(call, true);
    return this.rounds(`resource ${uri}`, `Reading ${uri}`, call, (extra) => this.client.readResource({ uri, _meta, ...extra }, opts));
  }

  complete(params: CompleteParams, call: Scope): Promise<unknown> {
    return this.client.complete(params as never, this.opts(call));
  }

  async subscribe(uri: string, call: Scope): Promise<boolean> {
    const { subscribed } = this.host;
    subscribed.add(uri);
    const honored = await this.owner.listen(this.client, call.options.timeoutMs).catch((err: unknown) => {
      subscribed.delete(uri);
      throw err;
    });
    if (honored.resourceSubscriptions?.includes(uri)) return true;
    subscribed.delete(uri);
    void this.owner.listen(this.client).catch(() => undefined);
    return false;
  }

  async unsubscribe(uri: string, call: Scope): Promise<void> {
    this.host.subscribed.delete(uri);
    await this.owner.listen(this.client, call.options.timeoutMs);
  }
}
