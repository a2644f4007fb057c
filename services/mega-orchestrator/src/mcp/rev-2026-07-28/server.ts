/**
 * MCP 2026-07-28, the stateless revision, beside the session-based 2025-11-25 transport on the same
 * POST /mcp. A request is taken as 2026-era when it says so in the MCP-Protocol-Version header or
 * in its `_meta`. No initialize, no session: every request carries its protocol version and client
 * capabilities in `_meta`, the Mcp-Method (and Mcp-Name) headers must agree with the body, every
 * result says its `resultType`, and list/read results carry cache hints (`ttlMs`, `cacheScope`).
 * `subscriptions/listen` answers a long-lived SSE stream of tools/prompts list changes (subscriptions.ts).
 * How a request is read and its answer written is the revision's codec (codec.ts); the methods both
 * revisions serve are the method table's (../methods.ts); this switch adds the revision's own.
 */
import type { IncomingMessage } from 'node:http';
import {
  isPlainObject,
  JSONRPC_CODES,
  META_CLIENT_CAPABILITIES as META_CAPABILITIES,
  META_SERVER_INFO,
  type HttpResponse,
} from '@mcp-fleet/kit';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../auth/auth';
import type { GatewayContext } from '../../core/context';
import type { McpContext } from '../context';
import { HttpRpcError, rpcError } from '../jsonrpc';
import { rpcErrorWithStatus } from '../errors';
import { parseFilter } from '../subscriptions';
import { forwardToPeer, HeldElsewhere, wasForwarded } from './peer-forward';
import { checkParamHeaders, paramHeaderScans } from './param-headers';
import { CAPABILITIES, callTool, checkCallParams, INSTRUCTIONS, watchedOwner } from '../server';
import { isMethod, runMethod } from '../methods';
import type { RequestContext } from '../request-context';
import { RESOURCE_URIS } from '../../core/views';
import { randomUUID } from 'node:crypto';
import { TASKS_EXTENSION, type TaskSupport } from '../../core/tasks';
import { ownerOf } from '../../auth/ownership';
import { LazyEventStream } from '../event-stream';
import type { CallListeners, Escalation } from '../client-requests';
import type { ClientRequester } from '../../downstream/http-client';
import { MAX_WATCHED } from '../../downstream/resource-watch';
import { callListeners, decodeRequest, encodeFailure, encodeResult, idOfBody, STATELESS_VERSION, SUPPORTED_VERSIONS } from './codec';
import { SERVICE_ID, VERSION } from '../../core/config';

export { isStatelessRequest } from '@mcp-fleet/kit';
export { STATELESS_VERSION, SUPPORTED_VERSIONS };

/** Methods of the 2025-11-25 tasks that the extension removed (the result is inlined in tasks/get; there is no listing). */
const REMOVED_TASK_METHODS = new Set(['tasks/list', 'tasks/result']);
const TASKS_REQUIRED = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };

export async function handleStateless(
  ctx: McpContext,
  req: IncomingMessage,
  res: HttpResponse,
  body: unknown,
  pageSize: number,
): Promise<void> {
  const id = idOfBody(body);
  // JSON, or an event stream once a tools/call has something to stream (progress, log messages)
  const stream = new LazyEventStream(res, (req.headers.accept ?? '').includes('text/event-stream'), {
    'MCP-Protocol-Version': STATELESS_VERSION,
  });
  const send = (status: number, payload: Record<string, unknown>) => stream.finish(status, payload);
  try {
    // a notification (no id) needs no answer
    const request = decodeRequest(req, res, body, pageSize);
    if (!request) {
      res.statusCode = 202;
      return void res.end();
    }
    const { method, params, meta, rc } = request;

    if (method === 'subscriptions/listen') {
      // The id names the subscription on every message of its stream.
      if (id === null)
        throw rpcErrorWithStatus(
          JSONRPC_CODES.INVALID_REQUEST,
          'Invalid Request: subscriptions/listen needs an "id" (a string or a number).',
        );
      const filter = parseFilter(params);
      if (filter.taskIds?.length) {
        if (!declaresTasks(rc)) throw missingTasksCapability('notifications/tasks (params.notifications.taskIds)');
        // Only the caller's own live tasks are acknowledged.
        filter.taskIds = await ctx.tasks.visible(filter.taskIds, rc.principal);
      }
      const watched = await watchResources(ctx, filter.resourceSubscriptions, rc.principal);
      try {
        return ctx.listen.serve(req, res, id, filter, { 'MCP-Protocol-Version': STATELESS_VERSION }, watched);
      } catch (err) {
        watched.onEnd();
        throw err;
      }
    }

    const result = await dispatch(ctx, req, method, params, meta, rc, stream);
    send(200, { jsonrpc: '2.0', id, result: encodeResult(method, result, rc) });
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
    const failure = encodeFailure(id, err, ctx.logger);
    return send(failure.status, failure.payload);
  }
}

/** The revision's own methods (discovery, tools/call with tasks and input_required, the tasks extension), then the table's. */
async function dispatch(
  ctx: McpContext,
  req: IncomingMessage,
  method: string,
  params: Record<string, unknown>,
  meta: Record<string, unknown>,
  rc: RequestContext,
  stream: LazyEventStream,
): Promise<Record<string, unknown>> {
  switch (method) {
    case 'server/discover':
      return {
        supportedVersions: SUPPORTED_VERSIONS,
        // What this endpoint really serves to 2026-era clients: list changes and resource updates
        // arrive on a subscriptions/listen stream; tasks when the task store is open.
        capabilities: (await ctx.tasks.served())
          ? { ...CAPABILITIES, extensions: { ...CAPABILITIES.extensions, [TASKS_EXTENSION]: {} } }
          : { ...CAPABILITIES },
        instructions: INSTRUCTIONS,
        _meta: { [META_SERVER_INFO]: { name: SERVICE_ID, title: 'mcp-fleet gateway', version: VERSION } },
      };
    case 'tools/call': {
      paramHeadersAgree(ctx, req, params);
      // Long-running tools may answer a task handle (one Map lookup for the others), once the call
      // has run MCP_TASK_MINT_MS without ending or asking (lazy minting); a retry carrying
      // requestState continues a call already running (input_required), never starts a new one.
      const support = ctx.tasks.supportOf(ctx.registry.catalog, params.name as string);
      const escalation =
        support !== undefined && params.requestState === undefined ? await taskEscalation(ctx, params, rc, support) : undefined;
      // A call that may become a task has a task's time limit from its start.
      const timeoutMs = escalation ? { timeoutMs: ctx.tasks.callTimeoutMs } : {};
      // progress and log messages stream as the request asked
      return withInput(
        ctx,
        params,
        rc,
        String(params.name),
        callListeners(meta, stream),
        (onClientRequest, signal, relay) => callTool(ctx, params, { ...rc, signal, onClientRequest, ...relay, ...timeoutMs }),
        escalation,
      );
    }
    // An MCP server behind a read or a prompt may ask the client something (input_required).
    case 'resources/read':
    case 'prompts/get': {
      const what = `${method} ${String(method === 'prompts/get' ? params.name : params.uri)}`;
      return withInput(ctx, params, rc, what, {}, async (onClientRequest, signal) =>
        runMethod(ctx, method, params, { ...rc, onClientRequest, signal }),
      );
    }
    case 'tasks/get':
    case 'tasks/update':
    case 'tasks/cancel':
      return taskMethod(ctx, method, params, rc);
    default:
      if (isMethod(method)) return runMethod(ctx, method, params, rc);
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
 * A request answered with its result, or `input_required` when the MCP server behind it asks the
 * client something (SEP-2322: tools/call, prompts/get, resources/read); a retry carrying
 * `requestState` delivers the client's `inputResponses` to the waiting request (client-requests.ts).
 * `what` names the request for the signed state ("tools/call x", "prompts/get y").
 */
async function withInput(
  ctx: McpContext,
  params: Record<string, unknown>,
  rc: RequestContext,
  what: string,
  listeners: CallListeners,
  run: (onClientRequest: ClientRequester, signal: AbortSignal, relay: CallListeners) => Promise<Record<string, unknown>>,
  escalation?: Escalation,
): Promise<Record<string, unknown>> {
  const caller = { owner: ownerOf(rc.principal) ?? '', tool: what, capabilities: rc.clientCapabilities };
  if (params.requestState !== undefined) return ctx.inputs.resume(params.requestState, params.inputResponses, caller, rc.signal, listeners);
  if (params.inputResponses !== undefined && !isPlainObject(params.inputResponses))
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.inputResponses must be an object keyed by the inputRequests keys.');
  return ctx.inputs.call(run, caller, rc.signal, listeners, params.inputResponses as Record<string, unknown> | undefined, escalation);
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
  principal: Principal | undefined,
): Promise<{ uris: ReadonlySet<string>; onEnd: () => void }> {
  const watcher = `listen:${randomUUID()}`;
  const watched = new Set<string>();
  const theirs = [...new Set(uris ?? [])].filter((uri) => !RESOURCE_URIS.has(uri) && uri.length <= 2048).slice(0, MAX_WATCHED);
  await Promise.all(
    theirs.map(async (uri) => {
      const service = watchedOwner(ctx, uri, principal);
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
function declaresTasks(rc: RequestContext): boolean {
  const caps = rc.clientCapabilities as Record<string, unknown>;
  const ext = isPlainObject(caps.extensions) ? caps.extensions[TASKS_EXTENSION] : undefined;
  return isPlainObject(ext) || ext === true;
}

const missingTasksCapability = (what: string) =>
  rpcErrorWithStatus(
    JSONRPC_CODES.MISSING_REQUIRED_CLIENT_CAPABILITY,
    `Missing required client capability: ${what} needs the tasks extension; declare "extensions": {"${TASKS_EXTENSION}": {}} in _meta["${META_CAPABILITIES}"].`,
    TASKS_REQUIRED,
  );

/**
 * tools/call of a tool that may run as a task: for a client that declared the extension, how the
 * call becomes a task (lazy minting, InputExchanges: once it has run MCP_TASK_MINT_MS without ending
 * or asking its caller, or when it ended within that window; a question before then is a round of
 * input_required with no task). A client that did not declare it gets a plain result, or -32021 when
 * the tool requires a task. Undefined: answer as any call (no task store, or MCP_MAX_TASKS reached
 * for an optional one). A caller holding MCP_TASK_MAX_PER_CALLER unfinished tasks gets -32603 for
 * either kind of tool before the call starts (the task manager throws it): its own backlog is the
 * cause, and a long call run synchronously instead would only hit DOWNSTREAM_TIMEOUT_MS.
 */
async function taskEscalation(
  ctx: GatewayContext,
  params: Record<string, unknown>,
  rc: RequestContext,
  support: TaskSupport,
): Promise<Escalation | undefined> {
  if (!(await ctx.tasks.served())) return undefined;
  if (!declaresTasks(rc)) {
    if (support === 'required') throw missingTasksCapability(`the tool "${String(params.name).slice(0, 100)}"`);
    return undefined;
  }
  checkCallParams(params);
  const tool = params.name as string;
  const { principal } = rc;
  const storeFull = () =>
    new HttpRpcError(
      503,
      JSONRPC_CODES.INTERNAL_ERROR,
      `The gateway holds MCP_MAX_TASKS (${ctx.config.MCP_MAX_TASKS}) unexpired tasks; retry once some expire (each is kept for ${ctx.config.MCP_TASK_TTL_MS} ms).`,
    );
  if (!(await ctx.tasks.admit(tool, principal))) {
    if (support === 'required') throw storeFull();
    return undefined;
  }
  return {
    afterMs: ctx.config.MCP_TASK_MINT_MS,
    // The task outlives this request: it is aborted by tasks/cancel, not by the client closing it.
    // The inlined result is what tools/call would have answered: a 2026-07-28 CallToolResult, resultType
    // included (an MCP server that answered a JSON-RPC error: callTool throws it, and the task failed with it).
    mint: async (call) => {
      const task = await ctx.tasks.adopt(
        tool,
        principal,
        { ...call, outcome: call.outcome.then((result) => ({ resultType: 'complete', ...result }) as unknown as CallToolResult) },
        rc.clientCapabilities,
      );
      if (task) return { resultType: 'task', ...task };
      if (support === 'required') throw storeFull();
      return undefined;
    },
  };
}

/** tasks/get, tasks/update, tasks/cancel (the extension's methods; unknown ones while it is not served). */
async function taskMethod(
  ctx: GatewayContext,
  method: string,
  params: Record<string, unknown>,
  rc: RequestContext,
): Promise<Record<string, unknown>> {
  if (!(await ctx.tasks.served()))
    throw new McpError(
      JSONRPC_CODES.METHOD_NOT_FOUND,
      `Method not found: ${method}. The tasks extension is off on this gateway (MCP_TASKS, or its database could not be opened).`,
    );
  if (!declaresTasks(rc)) throw missingTasksCapability(method);
  const taskId = params.taskId;
  if (typeof taskId !== 'string' || taskId === '' || taskId.length > 200)
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `${method} needs params.taskId, the id a tools/call answered with resultType "task".`);
  const { principal } = rc;
  if (method === 'tasks/get') return ctx.tasks.get(taskId, principal);
  if (method === 'tasks/cancel') {
    await ctx.tasks.cancel(taskId, principal);
    return {};
  }
  if (!isPlainObject(params.inputResponses))
    throw new McpError(
      JSONRPC_CODES.INVALID_PARAMS,
      'tasks/update needs params.inputResponses, an object keyed by the inputRequests keys.',
    );
  await ctx.tasks.update(taskId, principal, params.inputResponses);
  return {};
}
