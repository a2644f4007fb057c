/**
 * The gateway as a requester of a 2026-07-28 server's own tasks (SEP-2663, the
 * `io.modelcontextprotocol/tasks` extension), inside one downstream call: the server answers
 * `tools/call` with `resultType: "task"` and the gateway follows that task (tasks/get every
 * pollIntervalMs; what it asks put to the call's caller and answered with tasks/update; tasks/cancel
 * when the call is given up) until it ends, its result or error being the call's. The v2 SDK client
 * refuses `resultType: "task"` in every request it decodes, so these requests go raw: JSON-RPC
 * requests of the gateway's own ids on the session's transport, their answers taken by id as the
 * transport delivers them (readInbound's takeFirst), before the client sees them. The transport
 * writes Mcp-Method and Mcp-Name (`params.taskId` for tasks/*) from the body, as for its own requests.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isPlainObject, TASKS_EXTENSION } from '@mcp-fleet/kit';
import { closedError } from './answers';

/** Bounds of a server's pollIntervalMs as the gateway follows it (its default when it names none). */
export const MIN_POLL_MS = 50;
export const MAX_POLL_MS = 3000;
const DEFAULT_POLL_MS = 500;
/** How long a tasks/cancel sent for a call given up may take (best effort: nobody waits on it). */
const CANCEL_TIMEOUT_MS = 5000;
const TERMINAL: ReadonlySet<unknown> = new Set(['completed', 'failed', 'cancelled']);

/** What of a transport the raw requests use (the v2 SDK's Transport, both of its kinds). */
interface RawTransport {
  send(
    message: unknown,
    options?: { requestSignal?: AbortSignal; onRequestStreamEnd?: () => void; headers?: Record<string, string> },
  ): Promise<void>;
  /** Streamable HTTP: each request has its own response stream, closed to cancel it (2026-07-28). */
  readonly hasPerRequestStream?: boolean;
}

interface Waiting {
  resolve(result: Record<string, unknown>): void;
  reject(err: unknown): void;
}

/**
 * JSON-RPC requests the gateway sends on a 2026-07-28 session's transport itself (ids
 * `mcp-fleet-<n>`, never the SDK's numbers), answered by the response of the same id (take), which
 * no SDK decoding sees. Each carries the revision's `_meta` envelope (protocol version, client info,
 * and the client capabilities the request's own `_meta` names).
 */
export class RawRequests {
  private lastId = 0;
  private readonly waiting = new Map<string, Waiting>();

  constructor(
    private readonly transport: () => RawTransport | undefined,
    /** The `_meta` every request carries (protocol version, client info); the request's own keys win. */
    private readonly envelope: Record<string, unknown>,
  ) {}

  /** A response to one of these requests, taken before the SDK client sees it; true when taken. */
  readonly take = (message: unknown): boolean => {
    if (!isPlainObject(message) || typeof message.id !== 'string' || 'method' in message) return false;
    const waiting = this.waiting.get(message.id);
    if (!waiting) return false;
    this.waiting.delete(message.id);
    const { error, result } = message;
    if (isPlainObject(error))
      waiting.reject(
        new McpError(
          typeof error.code === 'number' ? error.code : ErrorCode.InternalError,
          typeof error.message === 'string' ? error.message : 'an error without a message',
          error.data,
        ),
      );
    else if (isPlainObject(result)) waiting.resolve(result);
    else waiting.reject(new McpError(ErrorCode.InternalError, 'the server answered with neither a result object nor an error'));
    return true;
  };

  /** One request and its result (an McpError for the server's error); the signal withdraws it. `headers`: HTTP headers of its POST (a tools/call's Mcp-Param ones). */
  request(
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    headers?: Record<string, string>,
  ): Promise<Record<string, unknown>> {
    const transport = this.transport();
    if (!transport) return Promise.reject(closedError('the connection to the server is closed'));
    if (signal.aborted) return Promise.reject(signal.reason);
    const id = `mcp-fleet-${++this.lastId}`;
    const _meta = { ...this.envelope, ...(isPlainObject(params._meta) ? params._meta : {}) };
    const message = { jsonrpc: '2.0', id, method, params: { ...params, _meta } };
    // HTTP: closing the request's stream withdraws it; stdio: notifications/cancelled, as the SDK does
    const stream = transport.hasPerRequestStream ? new AbortController() : undefined;
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const done = () => signal.removeEventListener('abort', onAbort);
      const onAbort = () => {
        if (!this.waiting.delete(id)) return;
        reject(signal.reason);
        if (stream) stream.abort();
        else
          void transport
            .send({
              jsonrpc: '2.0',
              method: 'notifications/cancelled',
              params: { requestId: id, reason: 'withdrawn', _meta },
            })
            .catch(() => undefined);
      };
      this.waiting.set(id, {
        resolve: (r) => (done(), resolve(r)),
        reject: (e) => (done(), reject(e)),
      });
      signal.addEventListener('abort', onAbort, { once: true });
      // a response stream that ends without this request's answer (its answer, if any, was delivered before the end)
      const onRequestStreamEnd = () =>
        setImmediate(() => this.waiting.get(id)?.reject(closedError(`the server ended the stream of ${method} without answering it`)));
      transport
        .send(message, { requestSignal: stream?.signal, onRequestStreamEnd, ...(headers ? { headers } : {}) })
        .catch((err: unknown) => {
          const waiting = this.waiting.get(id);
          if (!waiting) return;
          this.waiting.delete(id);
          waiting.reject(err);
        });
    });
  }

  /** The connection closed: every request still waiting fails with it. */
  close(): void {
    for (const waiting of this.waiting.values()) waiting.reject(closedError('the connection to the server closed'));
    this.waiting.clear();
  }
}

/** Whether capabilities name the tasks extension: a server's (server/discover) that offers it, or a caller's that declared it. */
export function offersTasks(capabilities: unknown): boolean {
  const extensions = isPlainObject(capabilities) ? capabilities.extensions : undefined;
  return isPlainObject(extensions) && isPlainObject(extensions[TASKS_EXTENSION]);
}

/** How one call follows its server's task. */
export interface TaskFollower {
  /** The call in words, for errors: `The tool x`. */
  what: string;
  raw: RawRequests;
  /** The `_meta` of tasks/* (the client capabilities of the call, the extension declared). */
  meta: Record<string, unknown>;
  /** The call's own signal (its caller, its clock). */
  signal: AbortSignal;
  /** Puts the server's input requests to the call's caller: the answers, keyed as asked. */
  answer(inputRequests: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Told when a task the call gave up could not be cancelled at the server. */
  onCancelFailed(taskId: string, err: unknown): void;
}

/** The poll interval a task asks for, within MIN_POLL_MS..MAX_POLL_MS. */
export function pollDelay(task: Record<string, unknown>): number {
  const asked = typeof task.pollIntervalMs === 'number' && Number.isFinite(task.pollIntervalMs) ? task.pollIntervalMs : DEFAULT_POLL_MS;
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, asked));
}

/**
 * Follows a server's task (its CreateTaskResult `created`) to its end, as the call's result:
 * `completed` answers its `result`; `failed` throws its `error`; `cancelled` throws; `input_required`
 * puts its new inputRequests to the caller and sends the answers with tasks/update; else tasks/get
 * after pollIntervalMs. A call that ends otherwise (its signal aborted, its caller could not answer,
 * the server answered what is not a task) cancels the task at the server (best effort).
 */
export async function followTask(created: Record<string, unknown>, f: TaskFollower): Promise<Record<string, unknown>> {
  const { taskId } = created;
  if (typeof taskId !== 'string' || taskId === '')
    throw new McpError(ErrorCode.InternalError, `${f.what} answered a task without a taskId; the gateway cannot follow it.`);
  const request = (method: string, params: Record<string, unknown> = {}) =>
    f.raw.request(method, { taskId, ...params, _meta: f.meta }, f.signal);
  let task = created;
  /** The keys of the last answers sent: a tasks/get that still shows them (the server not there yet) is not asked again. */
  let answered = new Set<string>();
  try {
    for (;;) {
      if (task.status === 'completed') return completedResult(task, f.what, taskId);
      if (task.status === 'failed') throw failedError(task, f.what, taskId);
      if (task.status === 'cancelled')
        throw new McpError(
          ErrorCode.InternalError,
          `${f.what} did not finish: the server cancelled its task ${taskId}${statusMessage(task)}.`,
        );
      const asked = task.status === 'input_required' && isPlainObject(task.inputRequests) ? task.inputRequests : {};
      const fresh = Object.fromEntries(Object.entries(asked).filter(([key]) => !answered.has(key)));
      if (Object.keys(fresh).length > 0) {
        const inputResponses = await f.answer(fresh);
        await request('tasks/update', { inputResponses });
        answered = new Set(Object.keys(fresh));
      } else await sleep(pollDelay(task), undefined, { signal: f.signal });
      task = await request('tasks/get');
      if (task.taskId !== undefined && task.taskId !== taskId)
        throw new McpError(ErrorCode.InternalError, `${f.what}: tasks/get of ${taskId} answered task ${String(task.taskId)}.`);
    }
  } catch (err) {
    if (!TERMINAL.has(task.status))
      void f.raw
        .request('tasks/cancel', { taskId, _meta: f.meta }, AbortSignal.timeout(CANCEL_TIMEOUT_MS))
        .catch((cancelErr: unknown) => f.onCancelFailed(taskId, cancelErr));
    throw err;
  }
}

function statusMessage(task: Record<string, unknown>): string {
  return typeof task.statusMessage === 'string' ? ` (${task.statusMessage.slice(0, 500)})` : '';
}

/** A completed task's inlined result, checked as a tool result (an error the SDK's answer checks read: brokenAnswer). */
function completedResult(task: Record<string, unknown>, what: string, taskId: string): Record<string, unknown> {
  const { result } = task;
  if (!isPlainObject(result))
    throw new McpError(ErrorCode.InternalError, `${what}: the server's task ${taskId} completed without inlining its result.`);
  CallToolResultSchema.parse(result);
  return result;
}

/** A failed task's inlined error as the call's JSON-RPC error. */
function failedError(task: Record<string, unknown>, what: string, taskId: string): McpError {
  const error = isPlainObject(task.error) ? task.error : {};
  const message = typeof error.message === 'string' ? error.message : `${what} failed in the server's task ${taskId}${statusMessage(task)}`;
  return new McpError(typeof error.code === 'number' ? error.code : ErrorCode.InternalError, message, error.data);
}
