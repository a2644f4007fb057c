/**
 * MCP 2026-07-28 `subscriptions/listen`: a POST whose answer is a long-lived SSE stream carrying the
 * change notifications the client opted in to. The stream opens with
 * `notifications/subscriptions/acknowledged` (the honored subset of the filter), every message on it
 * carries `_meta["io.modelcontextprotocol/subscriptionId"]` (the listen request's id), a comment line
 * keeps it alive when quiet, and the gateway ends it on shutdown with the listen request's result
 * (graceful closure). The client ends it by closing the stream. Clients that declared the tasks
 * extension may name `taskIds` and get `notifications/tasks` when those tasks change.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isPlainObject, JSONRPC_CODES, META_SERVER_INFO, type Logger } from '@mcp-fleet/kit';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { RESOURCE_URIS } from '../core/types';
import { HttpRpcError } from './jsonrpc';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** The list changes the gateway pushes (resources: those of the MCP servers behind it come and go). */
export type ListKind = 'tools' | 'prompts' | 'resources';
const FILTER_FIELD: Record<ListKind, 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged'> = {
  tools: 'toolsListChanged',
  prompts: 'promptsListChanged',
  resources: 'resourcesListChanged',
};

export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
  /** Tasks extension: notifications/tasks for these task ids (the caller's own, checked before serve). */
  taskIds?: string[];
}

/** params.notifications checked as the schema's SubscriptionFilter (unknown fields are ignored); bad -> -32602. */
export function parseFilter(params: Record<string, unknown>): SubscriptionFilter {
  const n = params.notifications;
  if (!isPlainObject(n))
    throw new McpError(
      JSONRPC_CODES.INVALID_PARAMS,
      'subscriptions/listen needs params.notifications, an object such as {"toolsListChanged": true, "promptsListChanged": true}.',
    );
  const filter: SubscriptionFilter = {};
  for (const key of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) {
    if (n[key] === undefined) continue;
    if (typeof n[key] !== 'boolean') throw new McpError(JSONRPC_CODES.INVALID_PARAMS, `params.notifications.${key} must be a boolean.`);
    filter[key] = n[key];
  }
  if (n.resourceSubscriptions !== undefined) {
    if (!Array.isArray(n.resourceSubscriptions) || n.resourceSubscriptions.some((u) => typeof u !== 'string'))
      throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.notifications.resourceSubscriptions must be an array of URI strings.');
    filter.resourceSubscriptions = n.resourceSubscriptions as string[];
  }
  if (n.taskIds !== undefined) {
    if (!Array.isArray(n.taskIds) || n.taskIds.some((u) => typeof u !== 'string') || n.taskIds.length > 500)
      throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.notifications.taskIds must be an array of at most 500 task ids (strings).');
    filter.taskIds = n.taskIds as string[];
  }
  return filter;
}

/**
 * What the gateway agrees to deliver: tools, prompts and resources list changes, and updates of the
 * resources among `resourceSubscriptions` that are its own or that `watched` holds (those of MCP
 * servers behind it, subscribed to there). Unknown URIs are left out of the acknowledgement.
 */
export function honored(filter: SubscriptionFilter, watched: ReadonlySet<string> = new Set()): SubscriptionFilter {
  const resources = [...new Set(filter.resourceSubscriptions ?? [])].filter((uri) => RESOURCE_URIS.has(uri) || watched.has(uri));
  return {
    ...(filter.toolsListChanged ? { toolsListChanged: true } : {}),
    ...(filter.promptsListChanged ? { promptsListChanged: true } : {}),
    ...(filter.resourcesListChanged ? { resourcesListChanged: true } : {}),
    ...(resources.length ? { resourceSubscriptions: resources } : {}),
    ...(filter.taskIds?.length ? { taskIds: [...new Set(filter.taskIds)] } : {}),
  };
}

interface Stream {
  id: string | number;
  filter: SubscriptionFilter;
  res: ServerResponse;
  timer: NodeJS.Timeout;
  end(graceful: boolean): void;
}

export interface ListenStreamsOptions {
  maxStreams: number;
  keepAliveMs: number;
  logger: Logger;
  serverInfo: { name: string; version: string };
}

export class ListenStreams {
  private readonly open = new Set<Stream>();
  private closed = false;
  /** Task ids named by open streams, with how many name each (the task manager reads only these). */
  readonly followedTasks = new Map<string, number>();

  constructor(private readonly options: ListenStreamsOptions) {}

  get count(): number {
    return this.open.size;
  }

  /** Answers the listen request with its stream (the caller has checked headers, `_meta` and the id). */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    id: string | number,
    filter: SubscriptionFilter,
    headers: Record<string, string>,
    /** Resources of MCP servers subscribed to for this stream, and what to do when it ends (unsubscribe). */
    watched: { uris: ReadonlySet<string>; onEnd: () => void } = { uris: new Set(), onEnd: () => undefined },
  ): void {
    if (this.closed)
      throw new HttpRpcError(503, JSONRPC_CODES.INTERNAL_ERROR, 'The gateway is shutting down; listen again once it is back.');
    if (this.open.size >= this.options.maxStreams)
      throw new HttpRpcError(
        503,
        JSONRPC_CODES.INTERNAL_ERROR,
        `Too many open subscriptions/listen streams (MCP_MAX_LISTEN_STREAMS=${this.options.maxStreams}); close one or try later.`,
      );
    const ack = honored(filter, watched.uris);
    res.statusCode = 200;
    const streamHeaders = {
      ...headers,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    };
    for (const [name, value] of Object.entries(streamHeaders)) res.setHeader(name, value);
    res.flushHeaders();
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);
    const write = (frame: string) => {
      if (!res.writableEnded && !res.destroyed) res.write(frame);
    };
    const stream: Stream = {
      id,
      filter: ack,
      res,
      timer: setInterval(() => write(': keepalive\n\n'), this.options.keepAliveMs),
      end: (graceful) => {
        if (!this.open.delete(stream)) return;
        clearInterval(stream.timer);
        watched.onEnd();
        for (const taskId of ack.taskIds ?? []) {
          const n = (this.followedTasks.get(taskId) ?? 1) - 1;
          if (n > 0) this.followedTasks.set(taskId, n);
          else this.followedTasks.delete(taskId);
        }
        if (graceful)
          write(
            frame({
              jsonrpc: '2.0',
              id,
              result: { resultType: 'complete', _meta: { [SUBSCRIPTION_ID]: id, [META_SERVER_INFO]: this.options.serverInfo } },
            }),
          );
        if (!res.writableEnded) res.end();
      },
    };
    stream.timer.unref();
    this.open.add(stream);
    for (const taskId of ack.taskIds ?? []) this.followedTasks.set(taskId, (this.followedTasks.get(taskId) ?? 0) + 1);
    res.on('close', () => stream.end(false));
    write(frame(notification('notifications/subscriptions/acknowledged', id, { notifications: ack })));
    this.options.logger.debug('subscriptions/listen opened', { id, honored: ack, open: this.open.size });
  }

  /** One list changed: every stream that opted in gets its notification. */
  notify(kind: ListKind): void {
    const field = FILTER_FIELD[kind];
    for (const s of this.open) {
      if (!s.filter[field] || s.res.writableEnded) continue;
      s.res.write(frame(notification(`notifications/${kind}/list_changed`, s.id)));
    }
  }

  /** Resources changed: every stream subscribed to one of them gets notifications/resources/updated. */
  notifyResources(uris: readonly string[]): void {
    for (const s of this.open) {
      if (s.res.writableEnded) continue;
      for (const uri of uris)
        if (s.filter.resourceSubscriptions?.includes(uri))
          s.res.write(frame(notification('notifications/resources/updated', s.id, { uri })));
    }
  }

  /** A task changed (tasks extension): the streams subscribed to it get notifications/tasks with the whole task. */
  notifyTask(task: { taskId: string } & Record<string, unknown>): void {
    for (const s of this.open) {
      if (s.res.writableEnded || !s.filter.taskIds?.includes(task.taskId)) continue;
      s.res.write(frame(notification('notifications/tasks', s.id, task)));
    }
  }

  /** Shutdown: every stream gets the listen request's result (graceful closure), then ends. */
  close(): void {
    this.closed = true;
    for (const s of [...this.open]) s.end(true);
  }
}

const frame = (message: unknown) => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

function notification(method: string, id: string | number, params: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', method, params: { ...params, _meta: { [SUBSCRIPTION_ID]: id } } };
}
