/**
 * The 2025-11-25 revision's SDK Server behind one MCP session (or one sessionless request): the
 * method table's methods (../methods.ts) registered on it, with a RequestContext built from the
 * SDK's request (codec.ts), and what only sessions have: resources/subscribe, 2025-11-25 tasks (a
 * task-augmented tools/call and the SDK's tasks/* from the session's store), logging/setLevel.
 */
import { isPlainObject, JSONRPC_CODES } from '@mcp-fleet/kit';
import { badParamsAsInvalidParams } from '@mcp-fleet/kit/mcp';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestTaskStore } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { McpError, ResultSchema, type CallToolResult, type CreateTaskResult } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { z } from 'zod';
import type { Principal } from '../../auth/auth';
import type { GatewayContext } from '../../core/context';
import { RESOURCE_URIS } from '../../core/views';
import { METHODS, runMethod, type Method } from '../methods';
import type { RequestContext } from '../request-context';
import { CAPABILITIES, callTool, checkCallParams, INSTRUCTIONS, knownResource, resourceNotFound, watchedOwner } from '../server';
import { progressNotification } from '../event-stream';
import { cannotAnswer, clientCan } from '../client-requests';
import type { ClientRequester, LogListener } from '../../downstream/downstream';
import { contextOfSdk, type SdkExtra } from './codec';
import { SessionTaskStore, type SessionTaskLimits } from './session-tasks';
import { SERVICE_ID, VERSION } from '../../core/config';

export interface McpServerOptions {
  ctx: GatewayContext;
  validator: jsonSchemaValidator;
  pageSize: number;
  /** The Mcp-Session-Id, once the session exists (undefined for sessionless requests). */
  sessionId: () => string | undefined;
  /** Set for a session's server: it serves 2025-11-25 tasks (session-tasks.ts) within these limits. */
  sessionTasks?: SessionTaskLimits;
}

// Loose request schemas: the handlers check params themselves so bad params are -32602, not -32603.
const params = z.record(z.string(), z.unknown()).optional();
const schemaOf = (method: string) => z.object({ method: z.literal(method), params });
const Subscribe = schemaOf('resources/subscribe');
const Unsubscribe = schemaOf('resources/unsubscribe');

/** The resource URIs each 2025-era session subscribed to (resources/subscribe). */
const subscriptions = new WeakMap<Server, Set<string>>();
export const subscribedResources = (server: Server): ReadonlySet<string> => subscriptions.get(server) ?? new Set();

export const NO_TASKS_HERE =
  'No tasks here: 2025-11-25 tasks need a session (initialize first) and MCP_TASKS on. Call the tool without params.task.';

/** What a session that serves tasks declares (2025-11-25): tools/call as a task, tasks/list, tasks/cancel. */
const SESSION_TASKS = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/**
 * A 2025-11-25 task-augmented tools/call (params.task): the task is answered at once and the call
 * runs on, with the task's time limit (MCP_TASK_TIMEOUT_MS), until it ends, tasks/cancel aborts it or
 * the session ends. A tool's own failure (isError) leaves the task failed with that result, as the
 * revision says; a JSON-RPC error (an unknown tool) too, as a tool error saying it. A tool whose
 * execution.taskSupport is absent ("forbidden") is -32601, as the revision says, before any task exists.
 */
async function startTask(
  ctx: GatewayContext,
  params: Record<string, unknown>,
  rc: RequestContext,
  store: SessionTaskStore,
  requestStore: RequestTaskStore,
): Promise<CreateTaskResult> {
  checkCallParams(params);
  const name = params.name as string;
  if (!ctx.registry.catalog.byName.has(name))
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `Unknown tool "${name.slice(0, 100)}"; tools/list shows the tools.`);
  if (!ctx.tasks.supportOf(ctx.registry.catalog, name))
    throw new McpError(
      JSONRPC_CODES.METHOD_NOT_FOUND,
      `The tool "${name.slice(0, 100)}" does not run as a task (no execution.taskSupport in tools/list); call it without params.task.`,
    );
  const task = isPlainObject(params.task) ? params.task : {};
  const created = await requestStore.createTask({ ttl: typeof task.ttl === 'number' ? task.ttl : undefined });
  const controller = store.track(created.taskId);
  const { task: _task, ...plain } = params;
  void (async () => {
    let status: 'completed' | 'failed' = 'completed';
    let result: CallToolResult;
    try {
      result = await callTool(ctx, plain, { ...rc, signal: controller.signal, timeoutMs: ctx.config.MCP_TASK_TIMEOUT_MS });
      if (result.isError) status = 'failed';
    } catch (err) {
      status = 'failed';
      result = { content: [{ type: 'text', text: err instanceof Error ? err.message : String(err) }], isError: true };
    }
    // a task cancelled (or expired) meanwhile keeps its state
    await requestStore.storeTaskResult(created.taskId, status, result).catch(() => undefined);
    store.untrack(created.taskId);
  })();
  return { task: created };
}

/**
 * resources/subscribe (on) or unsubscribe of a 2025-era session: one of the gateway's own views (the
 * URI itself), or a resource of an MCP server behind the gateway the caller may read (watchedOwner:
 * a URI it serves, or one nobody lists at the only server), subscribed to at that server through
 * ResourceWatch (-32602 when the server offers no subscriptions, or without a session). Anything
 * else is not found (-32002).
 */
async function subscribe(
  ctx: GatewayContext,
  watcher: string | undefined,
  uri: unknown,
  principal: Principal | undefined,
  on: boolean,
): Promise<string> {
  if (typeof uri !== 'string' || RESOURCE_URIS.has(uri) || uri.length > 2048) return knownResource(uri);
  const service = watchedOwner(ctx, uri, principal);
  // no server lists it or a template of it, and no sole server answers for it
  if (!service) throw resourceNotFound(uri, JSONRPC_CODES.RESOURCE_NOT_FOUND);
  if (!watcher)
    throw new McpError(
      JSONRPC_CODES.INVALID_PARAMS,
      `Subscribing to ${uri.slice(0, 200)} needs a session (initialize first): its updates go to the session's GET stream.`,
      { uri: uri.slice(0, 200) },
    );
  if (on) await ctx.watch.add(watcher, uri, service);
  else await ctx.watch.remove(watcher, uri);
  return uri;
}

/** Whether the session's logging/setLevel leaves out messages of this level (the SDK keeps the level; private there). */
function ignores(server: Server, level: string, sessionId: string | undefined): boolean {
  const check = (server as unknown as { isMessageIgnored?: (level: string, sessionId?: string) => boolean }).isMessageIgnored;
  return typeof check === 'function' ? check.call(server, level, sessionId) : false;
}

/**
 * What an MCP server behind the gateway asks during a call, put to the caller as a request related
 * to its request (an HTTP+SSE client's one stream): what its client declared it can answer, each
 * for up to MCP_INPUT_TIMEOUT_MS, withdrawn when the server withdraws it or the call ends. Any
 * result object is passed on as the server's to judge, as on the Streamable HTTP path.
 */
/** The part of the SDK's request handler extra that sends a request related to the one handled. */
type SdkSendRequest = (request: never, schema: typeof ResultSchema, options: { signal: AbortSignal; timeout: number }) => Promise<unknown>;

function askOver(server: Server, extra: { sendRequest: SdkSendRequest; signal: AbortSignal }, timeoutMs: number): ClientRequester {
  const capabilities = server.getClientCapabilities();
  const ask: ClientRequester = (method, params, signal) =>
    clientCan(capabilities, method, params)
      ? (extra.sendRequest({ method, params } as never, ResultSchema, {
          signal: AbortSignal.any([signal, extra.signal]),
          timeout: timeoutMs,
        }) as Promise<Record<string, unknown>>)
      : Promise.reject(cannotAnswer(method, params));
  ask.capabilities = capabilities;
  return ask;
}

export function createMcpServer({ ctx, validator, pageSize, sessionId, sessionTasks }: McpServerOptions): Server {
  const taskStore = sessionTasks ? new SessionTaskStore(sessionTasks) : undefined;
  const server = new Server(
    { name: SERVICE_ID, title: 'mcp-fleet gateway', version: VERSION },
    {
      // logging: logging/setLevel is answered by the SDK (per session); the gateway sends a
      // notifications/message when a downstream leaves or rejoins (docs/gateway.md).
      capabilities: { ...CAPABILITIES, logging: {}, ...(taskStore ? { tasks: SESSION_TASKS } : {}) },
      // tasks/get, tasks/result, tasks/list and tasks/cancel are answered by the SDK from the store
      ...(taskStore ? { taskStore } : {}),
      jsonSchemaValidator: validator,
      instructions: INSTRUCTIONS,
    },
  );

  const contextOf = (extra: SdkExtra) =>
    contextOfSdk(extra, { sessionId: sessionId(), pageSize, execution: taskStore ? 'session' : 'none' });
  const principal = (extra: SdkExtra) => contextOf(extra).principal;
  // The table's methods; tools/call as a 2025-11-25 task when it asks to be one (a session that
  // serves tasks lists each tool's execution.taskSupport).
  for (const method of Object.keys(METHODS) as Method[]) {
    if (method === 'tools/call') continue;
    server.setRequestHandler(schemaOf(method), (req, extra) => runMethod(ctx, method, req.params ?? {}, contextOf(extra)));
  }
  server.setRequestHandler(schemaOf('tools/call'), async (req, extra): Promise<CallToolResult | CreateTaskResult> => {
    const rc = contextOf(extra);
    const params = (req.params ?? {}) as Record<string, unknown>;
    if (params.task !== undefined) {
      if (!taskStore || !extra.taskStore) throw new McpError(JSONRPC_CODES.INVALID_PARAMS, NO_TASKS_HERE);
      return startTask(ctx, params, rc, taskStore, extra.taskStore);
    }
    // On the request's own stream (an HTTP+SSE client's one stream), in order and each before the
    // answer: the progress the caller asked for (a progressToken), the log messages of the call's MCP
    // server (as the session's logging/setLevel filters them), and what that server asks the caller.
    let sent = Promise.resolve();
    const tell = (notification: Record<string, unknown>) => {
      sent = sent.then(() => extra.sendNotification(notification as never)).catch(() => undefined);
    };
    const onLog: LogListener = (log) => {
      if (!ignores(server, log.level, extra.sessionId)) tell({ method: 'notifications/message', params: log });
    };
    const onClientRequest = askOver(server, extra, ctx.config.MCP_INPUT_TIMEOUT_MS);
    const token = isPlainObject(params._meta) ? params._meta.progressToken : undefined;
    const onProgress =
      typeof token === 'string' || typeof token === 'number'
        ? (progress: number, total?: number, message?: string) => tell(progressNotification(token, progress, total, message))
        : undefined;
    const result = await callTool(ctx, params, { ...rc, onProgress, onLog, onClientRequest });
    await sent;
    return result;
  });

  // notifications/resources/updated for these, on the session's GET stream (McpSessionTransport).
  const watched = new Set<string>();
  subscriptions.set(server, watched);
  // A resource of an MCP server behind the gateway is subscribed to at that server (once for all watchers).
  const watcher = () => (sessionId() ? `session:${sessionId()}` : undefined);
  let key: string | undefined;
  server.setRequestHandler(Subscribe, async (req, extra) => {
    key ??= watcher();
    watched.add(await subscribe(ctx, key, req.params?.uri, principal(extra), true));
    return {};
  });
  server.setRequestHandler(Unsubscribe, async (req, extra) => {
    const uri = await subscribe(ctx, watcher(), req.params?.uri, principal(extra), false);
    watched.delete(uri);
    return {};
  });
  server.onclose = () => {
    if (key) void ctx.watch.removeAll(key);
    taskStore?.close();
  };

  server.onerror = (err) => ctx.logger.debug('mcp server error', { err: err.message });
  badParamsAsInvalidParams(server);
  return server;
}
