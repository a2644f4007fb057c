import { principalOf } from '../../auth/auth';
/**
 * MCP 2026-07-28, the stateless revision, beside the session-based 2025-11-25 transport on the same
 * POST /mcp. A request is taken as 2026-era when it says so in the MCP-Protocol-Version header or
 * in its `_meta`. No initialize, no session: every request carries its protocol version and client
 * capabilities in `_meta`, the Mcp-Method (and Mcp-Name) headers must agree with the body, every
 * result says its `resultType`, and list/read results carry cache hints (`ttlMs`, `cacheScope`).
 * `subscriptions/listen` answers a long-lived SSE stream of tools/prompts list changes (subscriptions.ts).
 * The operations themselves (catalog pages, tools/call through the dispatcher, the gateway's
 * resources) are the ones the 2025-era SDK server uses.
 */
import type { IncomingMessage } from 'node:http';
import {
  abortOnClose,
  header as headerOf,
  JSONRPC_CODES,
  isPlainObject,
  META_CLIENT_CAPABILITIES as META_CAPABILITIES,
  isStatelessRequest,
  readStatelessRequest,
  STATELESS_VERSION,
  type HttpResponse,
} from '@mcp-fleet/kit';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { GatewayContext } from '../../core/context';
import { carryResultText } from '../answer-text';
import { SKILL_METHODS, withSkillResources } from '../skills';
import { HttpRpcError, rpcError, withoutMcpErrorPrefix, type RpcId } from '../jsonrpc';
import { parseFilter } from '../subscriptions';
import { forwardToPeer, HeldElsewhere, wasForwarded } from './peer-forward';
import { checkParamHeaders, paramHeaderScans } from './param-headers';
import {
  CAPABILITIES,
  callTool,
  checkCallParams,
  complete,
  getPrompt,
  INSTRUCTIONS,
  listPrompts,
  listToolsPage,
  listResources,
  listResourceTemplates,
  mcpErrorOf,
  readResource,
  resourceOwner,
} from '../server';
import { RESOURCE_URIS } from '../../core/views';
import { randomUUID } from 'node:crypto';
import { TASKS_EXTENSION, type TaskSupport } from '../../core/tasks';
import { callerOwner } from '../../auth/ownership';
import { LazyEventStream, LOG_LEVELS, logPasses, progressNotification, type LogLevel } from '../event-stream';
import type { CallListeners } from '../client-requests';
import type { ClientRequester } from '../../downstream/http-client';

export { STATELESS_VERSION };
/** Versions served on this endpoint: the stateless one, and the session-based ones through the SDK. */
export const SUPPORTED_VERSIONS = [STATELESS_VERSION, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
/** Methods of the 2025-11-25 tasks that the extension removed (the result is inlined in tasks/get; there is no listing). */
const REMOVED_TASK_METHODS = new Set(['tasks/list', 'tasks/result']);
const TASKS_REQUIRED = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };
/** The catalog changes when services come and go: clients may reuse a list for a few seconds. */
const CATALOG_TTL_MS = 5_000;

/** True when this POST is for the stateless revision (the kit's rule, shared with the services' own endpoints). */
export { isStatelessRequest };

export async function handleStateless(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: HttpResponse,
  body: unknown,
  pageSize: number,
): Promise<void> {
  const id: RpcId = isPlainObject(body) && (typeof body.id === 'string' || typeof body.id === 'number') ? body.id : null;
  // JSON, or an event stream once a tools/call has something to stream (progress, log messages)
  const stream = new LazyEventStream(res, (req.headers.accept ?? '').includes('text/event-stream'), {
    'MCP-Protocol-Version': STATELESS_VERSION,
  });
  const send = (status: number, payload: Record<string, unknown>) => stream.finish(status, payload);
  try {
    // The revision's rules (one message, the Mcp-* headers, _meta, the version, removed methods); a
    // notification (no id) needs no answer.
    const checked = readStatelessRequest(req, body, SUPPORTED_VERSIONS);
    if (!checked) {
      res.statusCode = 202;
      return void res.end();
    }
    const { method, params, meta } = checked;

    if (method === 'subscriptions/listen') {
      // The id names the subscription on every message of its stream.
      if (id === null)
        throw new HttpRpcError(
          400,
          JSONRPC_CODES.INVALID_REQUEST,
          'Invalid Request: subscriptions/listen needs an "id" (a string or a number).',
        );
      const filter = parseFilter(params);
      if (filter.taskIds?.length) {
        if (!declaresTasks(meta!)) throw missingTasksCapability('notifications/tasks (params.notifications.taskIds)');
        // Only the caller's own live tasks are acknowledged.
        filter.taskIds = await ctx.tasks.visible(filter.taskIds, principalOf(res));
      }
      const watched = await watchResources(ctx, filter.resourceSubscriptions, principalOf(res));
      try {
        return ctx.listen.serve(req, res, id, filter, { 'MCP-Protocol-Version': STATELESS_VERSION }, watched);
      } catch (err) {
        watched.onEnd();
        throw err;
      }
    }

    const result = await dispatch(ctx, req, res, method, params, pageSize, meta!, stream);
    send(200, { jsonrpc: '2.0', id, result });
  } catch (err) {
    // A retry (or tasks/update) for a call another instance holds goes there, once.
    if (err instanceof HeldElsewhere) {
      if (
        !wasForwarded(req) &&
        !stream.open &&
        (await forwardToPeer(req, res, err.instanceUrl, body, ctx.config.MCP_INSTANCE_URL, ctx.logger, ctx.config.MCP_STATE_SECRET))
      )
        return;
      return send(200, rpcError(id, JSONRPC_CODES.INVALID_PARAMS, err.refusal));
    }
    if (err instanceof HttpRpcError) return send(err.status, rpcError(id, err.code, err.message, err.data));
    if (err instanceof McpError) {
      const status = err.code === JSONRPC_CODES.METHOD_NOT_FOUND ? 404 : 200;
      return send(status, rpcError(id, err.code, withoutMcpErrorPrefix(err.message), err.data));
    }
    ctx.logger.error('stateless MCP request failed', { err });
    return send(500, rpcError(id, JSONRPC_CODES.INTERNAL_ERROR, 'Internal error; the gateway log has the cause.'));
  }
}

async function dispatch(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: HttpResponse,
  method: string,
  params: Record<string, unknown>,
  pageSize: number,
  meta: Record<string, unknown>,
  stream: LazyEventStream,
) {
  const cache = (ttlMs: number) => ({ ttlMs, cacheScope: 'public' as const });
  switch (method) {
    case 'server/discover':
      return {
        resultType: 'complete',
        supportedVersions: SUPPORTED_VERSIONS,
        // What this endpoint really serves to 2026-era clients: list changes and resource updates
        // arrive on a subscriptions/listen stream; tasks when the task store is open.
        capabilities: (await ctx.tasks.served())
          ? { ...CAPABILITIES, extensions: { ...CAPABILITIES.extensions, [TASKS_EXTENSION]: {} } }
          : { ...CAPABILITIES },
        instructions: INSTRUCTIONS,
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: ctx.service, title: 'mcp-fleet gateway', version: ctx.version } },
        ...cache(60_000),
      };
    case 'tools/list':
      return {
        resultType: 'complete',
        ...listToolsPage(ctx, pageSize, params.cursor, principalOf(res), 'declared'),
        ...cache(principalOf(res) ? 0 : CATALOG_TTL_MS),
      };
    case 'tools/call': {
      paramHeadersAgree(ctx, req, params);
      // Long-running tools may answer a task handle (one Map lookup for the others); a retry
      // carrying requestState belongs to a call already running (input_required), never a new task.
      const support = ctx.tasks.supportOf(ctx.registry.catalog, params.name as string);
      if (support !== undefined && params.requestState === undefined) {
        const task = await callAsTask(ctx, req, res, params, meta, support);
        if (task) return task;
      }
      return callWithInput(ctx, req, res, params, meta, stream);
    }
    case 'resources/list':
      return {
        resultType: 'complete',
        ...(await withSkillResources(ctx, listResources(ctx, principalOf(res)), principalOf(res))),
        ...cache(principalOf(res) ? 0 : CATALOG_TTL_MS),
      };
    // the Skills extension (src/skills.ts): entries and directories of the services' skills
    case 'skills/list':
    case 'skills/get':
    case 'resources/directory/read':
      return {
        resultType: 'complete',
        ...(await SKILL_METHODS[method](ctx, params, principalOf(res), pageSize, abortOnClose(res))),
        ...cache(principalOf(res) ? 0 : CATALOG_TTL_MS),
      };
    case 'resources/templates/list':
      return { resultType: 'complete', ...listResourceTemplates(ctx, principalOf(res)), ...cache(principalOf(res) ? 0 : CATALOG_TTL_MS) };
    case 'resources/read': {
      // Live views (health, services): not to be reused. An MCP server reading one may ask the client something.
      const read = await withInput(ctx, res, params, meta, `resources/read ${String(params.uri)}`, {}, async (onClientRequest, signal) => ({
        resultType: 'complete',
        ...(await readResource(ctx, params.uri, JSONRPC_CODES.INVALID_PARAMS, principalOf(res), signal, onClientRequest)),
      }));
      return read.resultType === 'complete' ? { ...read, ttlMs: 0, cacheScope: 'private' } : read;
    }
    case 'prompts/list':
      // The prompts of the downstreams (MCP servers, marketplace skills).
      return { resultType: 'complete', ...listPrompts(ctx, principalOf(res)), ...cache(principalOf(res) ? 0 : CATALOG_TTL_MS) };
    case 'prompts/get':
      return withInput(ctx, res, params, meta, `prompts/get ${String(params.name)}`, {}, async (onClientRequest, signal) => ({
        resultType: 'complete',
        ...(await getPrompt(ctx, params, signal, principalOf(res), onClientRequest)),
      }));
    case 'completion/complete':
      return { resultType: 'complete', ...(await complete(ctx, params, abortOnClose(res), principalOf(res))) };
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel':
      return taskMethod(ctx, res, method, params, meta);
    default:
      throw new McpError(
        JSONRPC_CODES.METHOD_NOT_FOUND,
        REMOVED_TASK_METHODS.has(method)
          ? `Method not found: ${method} is not part of the tasks extension (tasks/get inlines the result; there is no listing).`
          : `Method not found: ${method.slice(0, 100)}. server/discover lists what this server offers.`,
      );
  }
}

/**
 * The tool's Mcp-Param headers (x-mcp-header, SEP-2243) agree with its arguments: 400 with -32020
 * otherwise. A tool left out of the MCP listing for invalid declarations is not called over MCP.
 */
function paramHeadersAgree(ctx: GatewayContext, req: IncomingMessage, params: Record<string, unknown>): void {
  if (typeof params.name !== 'string') return; // callTool answers that
  const scan = paramHeaderScans(ctx.registry.catalog, ctx.logger).get(params.name);
  if (!scan) return;
  if (!scan.valid)
    throw new McpError(
      JSONRPC_CODES.INVALID_PARAMS,
      `The tool "${params.name.slice(0, 100)}" is not offered over MCP: its x-mcp-header declarations are invalid (${scan.reason}). Its service must fix its inputSchema.`,
    );
  if (scan.headers.length && isPlainObject(params.arguments)) checkParamHeaders(scan.headers, params.arguments, req);
}

/**
 * tools/call answered with its result, or `input_required` when the MCP server behind it asks the
 * client something (SEP-2322); a retry carrying `requestState` delivers the client's `inputResponses`
 * to the waiting call (client-requests.ts).
 */
/**
 * A request answered with its result, or `input_required` when the MCP server behind it asks the
 * client something (SEP-2322: tools/call, prompts/get, resources/read); a retry carrying
 * `requestState` delivers the client's `inputResponses` to the waiting request (client-requests.ts).
 * `what` names the request for the signed state ("tools/call x", "prompts/get y").
 */
async function withInput(
  ctx: GatewayContext,
  res: HttpResponse,
  params: Record<string, unknown>,
  meta: Record<string, unknown>,
  what: string,
  listeners: CallListeners,
  run: (onClientRequest: ClientRequester, signal: AbortSignal, relay: CallListeners) => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  const caller = { owner: callerOwner(res) ?? '', tool: what, capabilities: meta[META_CAPABILITIES] };
  // a 2026-era client cancels by closing its request: the downstream call is aborted
  const closed = abortOnClose(res);
  if (params.requestState !== undefined) return ctx.inputs.resume(params.requestState, params.inputResponses, caller, closed, listeners);
  if (params.inputResponses !== undefined && !isPlainObject(params.inputResponses))
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.inputResponses must be an object keyed by the inputRequests keys.');
  return ctx.inputs.call(run, caller, closed, listeners, params.inputResponses as Record<string, unknown> | undefined);
}

/** tools/call through withInput: progress and log messages stream as the request asked (callListeners). */
function callWithInput(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: HttpResponse,
  params: Record<string, unknown>,
  meta: Record<string, unknown>,
  stream: LazyEventStream,
): Promise<Record<string, unknown>> {
  const listeners = callListeners(meta, stream);
  const principal = principalOf(res);
  const requestId = callerRequestId(req, res);
  const traceparent = headerOf(req, 'traceparent');
  return withInput(ctx, res, params, meta, String(params.name), listeners, async (onClientRequest, signal, relay) => {
    const result = await callTool(ctx, params, { requestId, traceparent, principal, signal, onClientRequest, ...relay });
    // noted as the result was, so its answer is stitched from the channel's text too (answer-text.ts)
    return carryResultText(result, { resultType: 'complete', ...result });
  });
}

/**
 * What a 2026-07-28 tools/call streams while it runs: notifications/progress for its
 * `_meta.progressToken`, and the MCP server's log messages at or above its
 * `_meta["io.modelcontextprotocol/logLevel"]` (none without it: the revision removed logging/setLevel).
 */
function callListeners(meta: Record<string, unknown>, stream: LazyEventStream): CallListeners {
  const token = meta.progressToken;
  const level = meta[META_LOG_LEVEL];
  if (level !== undefined && !LOG_LEVELS.includes(level as LogLevel))
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `_meta["${META_LOG_LEVEL}"] must be one of: ${LOG_LEVELS.join(', ')}.`);
  return {
    ...(typeof token === 'string' || typeof token === 'number'
      ? { onProgress: (progress, total, message) => stream.send(progressNotification(token, progress, total, message)) }
      : {}),
    ...(level !== undefined
      ? {
          onLog: (log) => {
            if (logPasses(log.level, level as LogLevel)) stream.send({ jsonrpc: '2.0', method: 'notifications/message', params: log });
          },
        }
      : {}),
  };
}

/**
 * The resources of MCP servers behind the gateway among a listen stream's resourceSubscriptions,
 * subscribed to at their servers for as long as the stream is open (ResourceWatch); those that
 * cannot be (unknown, not readable by the caller, a server without subscriptions) are left out of
 * the acknowledgement.
 */
async function watchResources(
  ctx: GatewayContext,
  uris: readonly string[] | undefined,
  principal: ReturnType<typeof principalOf>,
): Promise<{ uris: ReadonlySet<string>; onEnd: () => void }> {
  const watcher = `listen:${randomUUID()}`;
  const watched = new Set<string>();
  const theirs = [...new Set(uris ?? [])].filter((uri) => !RESOURCE_URIS.has(uri) && uri.length <= 2048).slice(0, 100);
  await Promise.all(
    theirs.map(async (uri) => {
      const service = resourceOwner(ctx, uri, principal);
      if (!service) return;
      try {
        await ctx.watch.add(watcher, uri, service);
        watched.add(uri);
      } catch (err) {
        ctx.logger.debug('a listen stream cannot watch a resource', { uri: uri.slice(0, 200), err: (err as Error).message });
      }
    }),
  );
  return { uris: watched, onEnd: () => void ctx.watch.removeAll(watcher) };
}

/** True when the request's client capabilities declare the tasks extension. */
function declaresTasks(meta: Record<string, unknown>): boolean {
  const caps = meta[META_CAPABILITIES] as Record<string, unknown>;
  const ext = isPlainObject(caps.extensions) ? caps.extensions[TASKS_EXTENSION] : undefined;
  return isPlainObject(ext) || ext === true;
}

const missingTasksCapability = (what: string) =>
  new HttpRpcError(
    400,
    JSONRPC_CODES.MISSING_REQUIRED_CLIENT_CAPABILITY,
    `Missing required client capability: ${what} needs the tasks extension; declare "extensions": {"${TASKS_EXTENSION}": {}} in _meta["${META_CAPABILITIES}"].`,
    TASKS_REQUIRED,
  );

/** The caller's X-Request-Id when it is a sane one, else the id this request was given. */
function callerRequestId(req: IncomingMessage, res: HttpResponse): string {
  const sent = headerOf(req, 'x-request-id');
  return sent && /^[\w.:-]{1,128}$/.test(sent) ? sent : String(res.locals.requestId ?? '');
}

/**
 * tools/call of a tool that may run as a task: a client that declared the extension gets a task
 * handle (CreateTaskResult), one that did not a plain result, or -32021 when the tool requires a
 * task. Undefined: answer synchronously (no task store, or MCP_MAX_TASKS reached for an optional one).
 * A caller holding MCP_TASK_MAX_PER_CALLER unfinished tasks gets -32603 for either kind of tool (the
 * task manager throws it): its own backlog is the cause, and a long call run synchronously instead
 * would only hit DOWNSTREAM_TIMEOUT_MS.
 */
async function callAsTask(
  ctx: GatewayContext,
  req: IncomingMessage,
  res: HttpResponse,
  params: Record<string, unknown>,
  meta: Record<string, unknown>,
  support: TaskSupport,
): Promise<Record<string, unknown> | undefined> {
  if (!(await ctx.tasks.served())) return undefined;
  if (!declaresTasks(meta)) {
    if (support === 'required') throw missingTasksCapability(`the tool "${String(params.name).slice(0, 100)}"`);
    return undefined;
  }
  checkCallParams(params);
  const principal = principalOf(res);
  const requestId = callerRequestId(req, res);
  const traceparent = headerOf(req, 'traceparent');
  // The call outlives this request: it is aborted by tasks/cancel, not by the client closing it.
  // The inlined result is what tools/call would have answered: a 2026-07-28 CallToolResult, resultType included.
  const task = await ctx.tasks.create(
    params.name as string,
    principal,
    async (signal, timeoutMs, onProgress, onClientRequest) => {
      const result = await callTool(ctx, params, { requestId, traceparent, principal, signal, timeoutMs, onProgress, onClientRequest });
      // An MCP server that answered a JSON-RPC error, not a tool result: the task failed with that error.
      const protocolError = result.isError ? mcpErrorOf(result.structuredContent) : undefined;
      if (protocolError) throw new McpError(protocolError.code, protocolError.message, protocolError.data);
      return { resultType: 'complete', ...result };
    },
    meta[META_CAPABILITIES],
  );
  if (task) return { resultType: 'task', ...task };
  if (support === 'required')
    throw new HttpRpcError(
      503,
      JSONRPC_CODES.INTERNAL_ERROR,
      `The gateway holds MCP_MAX_TASKS (${ctx.config.MCP_MAX_TASKS}) unexpired tasks; retry once some expire (each is kept for ${ctx.config.MCP_TASK_TTL_MS} ms).`,
    );
  return undefined;
}

/** tasks/get, tasks/update, tasks/cancel (the extension's methods; unknown ones while it is not served). */
async function taskMethod(
  ctx: GatewayContext,
  res: HttpResponse,
  method: string,
  params: Record<string, unknown>,
  meta: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (!(await ctx.tasks.served()))
    throw new McpError(
      JSONRPC_CODES.METHOD_NOT_FOUND,
      `Method not found: ${method}. The tasks extension is off on this gateway (MCP_TASKS, or its database could not be opened).`,
    );
  if (!declaresTasks(meta)) throw missingTasksCapability(method);
  const taskId = params.taskId;
  if (typeof taskId !== 'string' || taskId === '' || taskId.length > 200)
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `${method} needs params.taskId, the id a tools/call answered with resultType "task".`);
  const principal = principalOf(res);
  if (method === 'tasks/get') return { resultType: 'complete', ...(await ctx.tasks.get(taskId, principal)) };
  if (method === 'tasks/cancel') {
    await ctx.tasks.cancel(taskId, principal);
    return { resultType: 'complete' };
  }
  if (!isPlainObject(params.inputResponses))
    throw new McpError(
      JSONRPC_CODES.INVALID_PARAMS,
      'tasks/update needs params.inputResponses, an object keyed by the inputRequests keys.',
    );
  await ctx.tasks.update(taskId, principal, params.inputResponses);
  return { resultType: 'complete' };
}
