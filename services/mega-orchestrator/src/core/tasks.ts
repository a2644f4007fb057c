/**
 * MCP tasks (the 2026-07-28 extension io.modelcontextprotocol/tasks, SEP-2663): a tools/call of a
 * long-running tool answers a task handle and runs on in the background (minted lazily: once the call
 * has run MCP_TASK_MINT_MS without ending or asking its caller, mcp/client-requests.ts); the requester
 * polls tasks/get (the result inlined once terminal) and may tasks/cancel it. Tasks live in the
 * history database (SQLite, or PostgreSQL shared by every instance), so any instance answers
 * tasks/get and tasks/cancel. The instance running a task renews its lease; a task whose instance
 * died (crash, restart) reads failed once its lease lapses, never working forever. On PostgreSQL the
 * instances tell each other which task changed (LISTEN/NOTIFY, task-channel.ts), so a
 * subscriptions/listen stream on any instance hears notifications/tasks of a task running on another.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { JSONRPC_CODES, KeyedSerial, type Logger } from '@mcp-fleet/kit';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/auth';
import type { CallHistory } from '../history/call-history';
import type { Catalog } from './catalog';
import type { ClientRequester, ProgressListener } from '../downstream/http-client';
import { cannotAnswer, checkAnswers, clientCan, OpenRequests } from './client-requests';
import type { HistoryDb } from '../history/history-db';
import { ownerOf } from '../auth/ownership';
import { TaskChannel } from './task-channel';
import { HeldElsewhere, withoutMcpErrorPrefix } from './held-elsewhere';

export { TASKS_EXTENSION } from '@mcp-fleet/kit';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
export type TaskSupport = 'optional' | 'required';

interface TaskRow {
  task_id: string;
  owner: string | null;
  tool: string;
  status: TaskStatus;
  status_message: string | null;
  created_at: number;
  updated_at: number;
  ttl_ms: number;
  expires_at: number;
  poll_ms: number;
  instance: string;
  /** MCP_INSTANCE_URL of that instance: where a tasks/update reaching another instance is forwarded. */
  instance_url?: string | null;
  lease_until: number;
  result: string | null;
  error: string | null;
  /** The open requests (an inputRequests map, JSON) while the task is input_required. */
  input_requests?: string | null;
}

/** A task on the wire: the Task fields, plus `result` or `error` once terminal (DetailedTask). */
export type TaskView = Record<string, unknown> & { taskId: string; status: TaskStatus };

/** The task ids someone here listens to (the open subscriptions/listen streams): only these are read for notifications/tasks. */
export type TaskFollowers = Pick<ReadonlyMap<string, unknown>, 'has' | 'keys'>;

export interface TaskManagerOptions {
  history: CallHistory;
  logger: Logger;
  /** MCP_TASKS: off, the extension is neither advertised nor served. */
  enabled: boolean;
  /** MCP_TASK_TOOLS: names run as tasks beside those whose definition asks for it. */
  toolNames: readonly string[];
  ttlMs: number;
  timeoutMs: number;
  pollMs: number;
  maxTasks: number;
  /** MCP_TASK_MAX_PER_CALLER: unfinished tasks one owner (ownerOf) may hold; 0: no such cap. */
  maxPerCaller: number;
  maxResultBytes: number;
  leaseMs: number;
  /** MCP_INSTANCE_URL: stored with each task started here, so that another instance forwards its tasks/update. */
  instanceUrl?: string;
}

/**
 * Runs the task's tool call; the signal aborts it (tasks/cancel, shutdown); progress reports go to
 * onProgress; what its MCP server asks the client goes to onClientRequest (the task reads
 * input_required until tasks/update answers).
 */
export type TaskRun = (
  signal: AbortSignal,
  timeoutMs: number,
  onProgress: ProgressListener,
  onClientRequest: ClientRequester,
) => Promise<CallToolResult>;

/**
 * A tool call already running when it becomes a task (TaskManager.adopt): its outcome, what aborts
 * it, whether it already ended, and `attach`, which routes what its MCP server asks from then on
 * (and its progress) to the task.
 */
export interface RunningCall {
  outcome: Promise<CallToolResult>;
  controller: AbortController;
  ended: boolean;
  attach(onClientRequest: ClientRequester, onProgress: ProgressListener): void;
}

/** A running task's requests to its client, and the writes of its state they cause (in order). */
interface TaskInput {
  open: OpenRequests;
  written: () => Promise<void>;
}

/** A running task's progress is written to its statusMessage at most this often. */
const PROGRESS_WRITE_MS = 1000;

const CHUNK = 500;
const EMITTED_MAX = 10_000;
const RESTARTED = 'The gateway instance running this task stopped before it finished (a restart or a crash); call the tool again.';
const SHUT_DOWN = 'The gateway shut down before this task finished; call the tool again.';

/** A working or input_required task: one that still counts against MCP_TASK_MAX_PER_CALLER. */
const UNFINISHED = "status IN ('working', 'input_required')";

const notFound = (why: 'Task not found' | 'Task has expired') =>
  new McpError(
    JSONRPC_CODES.INVALID_PARAMS,
    `Failed to retrieve task: ${why}. Task ids come from a tools/call answered with resultType "task"; a task is kept for its ttlMs.`,
  );

export class TaskManager extends EventEmitter {
  /** This process's id in the store: the instance that runs (and renews) a task. */
  readonly instance = randomUUID();
  private db?: HistoryDb;
  private readonly ready: Promise<void>;
  private readonly running = new Map<string, AbortController>();
  private readonly inputs = new Map<string, TaskInput>();
  private readonly supportCache = new WeakMap<Catalog, Map<string, TaskSupport>>();
  private readonly extraTools: ReadonlySet<string>;
  private heartbeat?: NodeJS.Timeout;
  private pruneTimer?: NodeJS.Timeout;
  private closed = false;
  /** Writes of finished tasks not yet done (close waits for them). */
  private readonly pending = new Set<Promise<void>>();
  /** PostgreSQL: hears the changes other instances make (and tells them ours). */
  private channel?: TaskChannel;
  private followers?: TaskFollowers;
  /** Changed tasks to read and emit, in order, one read at a time. */
  private readonly inbox = new Set<string>();
  private draining = false;
  /** The state last emitted per task (the newest EMITTED_MAX tasks). */
  private readonly emitted = new Map<string, string>();
  /** Task creations, one at a time per owner (MCP_TASK_MAX_PER_CALLER). */
  private readonly creations = new KeyedSerial();

  constructor(private readonly options: TaskManagerOptions) {
    super();
    this.extraTools = new Set(options.toolNames);
    this.ready = this.open();
  }

  private async open(): Promise<void> {
    if (!this.options.enabled) return;
    const db = await this.options.history.database();
    if (!db) {
      this.options.logger.warn('MCP tasks are not served: the history database could not be opened (see the error above)');
      return;
    }
    try {
      // SQLite serves one gateway: whatever it left working died with it. PostgreSQL: only lapsed leases.
      const now = Date.now();
      const orphans =
        db.kind === 'sqlite'
          ? ["status IN ('working', 'input_required')", []]
          : ["status IN ('working', 'input_required') AND lease_until < ?", [now]];
      await db.run(`UPDATE tasks SET status = 'failed', status_message = ?, error = ?, updated_at = ? WHERE ${orphans[0] as string}`, [
        RESTARTED,
        JSON.stringify({ code: JSONRPC_CODES.INTERNAL_ERROR, message: RESTARTED }),
        now,
        ...(orphans[1] as unknown[]),
      ]);
      await this.prune();
    } catch (err) {
      this.options.logger.error('MCP tasks are not served: the task table could not be read', { err });
      return;
    }
    this.db = db;
    this.pruneTimer = setInterval(() => void this.prune(), Math.min(60_000, this.options.ttlMs));
    this.pruneTimer.unref();
    const url = this.options.history.databaseUrl;
    if (db.kind === 'postgres' && url) {
      this.channel = new TaskChannel({
        url,
        db,
        instance: this.instance,
        logger: this.options.logger,
        onTask: (taskId) => this.announce([taskId]),
        onResync: () => this.announce(this.followers?.keys() ?? []),
      });
      await this.channel.start().catch((err: unknown) => {
        this.options.logger.warn('notifications/tasks reach only listeners on the instance where the task changed', { err });
        this.channel = undefined;
      });
    }
  }

  /**
   * The task ids listened to on this instance: from then on only their changes are read and emitted
   * as 'task' events (made here or, on PostgreSQL, by another instance). Unset: every change here.
   */
  follow(followers: TaskFollowers): void {
    this.followers = followers;
  }

  /** PostgreSQL: whether this instance hears the other instances' task changes now, and how many it heard. */
  get otherInstances(): { listening: boolean; heard: number } {
    return { listening: this.channel?.listening ?? false, heard: this.channel?.received ?? 0 };
  }

  /** True once the task store is open (and MCP_TASKS is on): only then is the extension advertised and served. */
  async served(): Promise<boolean> {
    await this.ready;
    return this.db !== undefined && !this.closed;
  }

  /** Tasks running in this process. */
  get runningCount(): number {
    return this.running.size;
  }

  /**
   * Whether calls of a listed name may become tasks: the tool's execution.taskSupport ("optional",
   * "required"), or MCP_TASK_TOOLS. One Map lookup per call (cached per catalog).
   */
  supportOf(catalog: Catalog, name: string): TaskSupport | undefined {
    let map = this.supportCache.get(catalog);
    if (!map) {
      map = new Map();
      for (const e of catalog.entries) {
        const declared = e.tool.execution?.taskSupport;
        const support: TaskSupport | undefined =
          declared === 'required' || declared === 'optional'
            ? declared
            : this.extraTools.has(e.name) || this.extraTools.has(e.qualifiedName)
              ? 'optional'
              : undefined;
        if (!support) continue;
        map.set(e.name, support);
        map.set(e.qualifiedName, support);
      }
      this.supportCache.set(catalog, map);
    }
    return map.size === 0 ? undefined : map.get(name);
  }

  /** The time limit of a task's downstream call: MCP_TASK_TIMEOUT_MS, ended before the task's ttl. */
  get callTimeoutMs(): number {
    return Math.min(this.options.timeoutMs, this.options.ttlMs - 1000);
  }

  /**
   * Whether a call of this tool by this principal may become a task, asked before the call starts
   * (lazy minting stores the task only later): false when the store is not open or holds
   * MCP_MAX_TASKS unexpired tasks; -32603 when the principal already holds MCP_TASK_MAX_PER_CALLER
   * unfinished ones (the tool is then not run at all). adopt counts again when it stores the task.
   */
  async admit(tool: string, principal: Principal | undefined): Promise<boolean> {
    return this.guard(this.admits(tool, principal));
  }

  private async admits(tool: string, principal: Principal | undefined): Promise<boolean> {
    if (!(await this.served())) return false;
    const db = this.db!;
    const now = Date.now();
    const stored = (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM tasks WHERE expires_at >= ?', [now]))?.n ?? 0;
    if (stored >= this.options.maxTasks) {
      this.options.logger.warn('MCP task not created: MCP_MAX_TASKS unexpired tasks are stored', { max: this.options.maxTasks, tool });
      return false;
    }
    const owner = ownerOf(principal);
    if (this.options.maxPerCaller > 0 && (await this.unfinishedOf(db, owner, now)) >= this.options.maxPerCaller) {
      this.options.logger.info('MCP task refused: MCP_TASK_MAX_PER_CALLER reached', { owner, max: this.options.maxPerCaller, tool });
      throw this.overCallerCap(owner);
    }
    return true;
  }

  /**
   * Makes a call already running a task (lazy minting: the 2026-07-28 tools/call ran it first, and
   * it neither ended nor asked its caller anything within MCP_TASK_MINT_MS): stores the task
   * (durably: tasks/get finds it as soon as this resolves) and follows the call's outcome in it. From
   * then on what its MCP server asks goes to the task (input_required, tasks/update) and its progress
   * to the task's statusMessage (`call.attach`); tasks/cancel aborts `call.controller`. A call that
   * already `ended` within the window is stored with its outcome, and answered terminal (completed,
   * or failed). Undefined when the store is not open; -32603 when the principal holds
   * MCP_TASK_MAX_PER_CALLER unfinished tasks by now (the caller then stops the call).
   */
  async adopt(tool: string, principal: Principal | undefined, call: RunningCall, capabilities?: unknown): Promise<TaskView | undefined> {
    return this.guard(this.store(tool, principal, call, capabilities));
  }

  private async store(
    tool: string,
    principal: Principal | undefined,
    call: RunningCall,
    capabilities: unknown,
  ): Promise<TaskView | undefined> {
    if (!(await this.served())) return undefined;
    const db = this.db!;
    const now = Date.now();
    const row: TaskRow = {
      task_id: randomUUID(),
      owner: ownerOf(principal),
      tool,
      status: 'working',
      status_message: null,
      created_at: now,
      updated_at: now,
      ttl_ms: this.options.ttlMs,
      expires_at: now + this.options.ttlMs,
      poll_ms: this.options.pollMs,
      instance: this.instance,
      instance_url: this.options.instanceUrl ?? null,
      lease_until: now + this.options.leaseMs,
      result: null,
      error: null,
    };
    // A call that already ended holds no place under the per-caller cap (admit counted before it ran).
    if (this.options.maxPerCaller > 0 && !call.ended)
      // One creation of a caller at a time here: its count after the insert is exact on one instance.
      await this.creations.run(row.owner ?? '', async () => {
        await insertTask(db, row);
        await this.withinCallerCap(db, row);
      });
    else await insertTask(db, row);
    this.running.set(row.task_id, call.controller);
    this.keepLeases();
    const run: TaskRun = (_signal, _timeoutMs, onProgress, onClientRequest) => {
      call.attach(onClientRequest, onProgress);
      return call.outcome;
    };
    const done = this.execute(row, call.controller, run, capabilities).finally(() => this.pending.delete(done));
    this.pending.add(done);
    this.options.logger.info('MCP task created', { taskId: row.task_id, tool, ended: call.ended });
    if (!call.ended) return view(row, false);
    // its outcome is stored before the handle is answered: tasks/get reads it at once
    await done;
    return view((await db.get<TaskRow>('SELECT * FROM tasks WHERE task_id = ?', [row.task_id])) ?? row, false);
  }

  /** Unfinished tasks of an owner: working or input_required, with a live lease. */
  private async unfinishedOf(db: HistoryDb, owner: string | null, now: number): Promise<number> {
    const n = await db.get<{ n: number }>(
      `SELECT COUNT(*) AS n FROM tasks WHERE ${owner === null ? 'owner IS NULL' : 'owner = ?'} AND ${UNFINISHED} AND lease_until >= ? AND expires_at >= ?`,
      [...(owner === null ? [] : [owner]), now, now],
    );
    return n?.n ?? 0;
  }

  private overCallerCap(owner: string | null): McpError {
    const max = this.options.maxPerCaller;
    return new McpError(
      JSONRPC_CODES.INTERNAL_ERROR,
      `You already hold ${max} unfinished task${max === 1 ? '' : 's'}, the most one caller may (MCP_TASK_MAX_PER_CALLER)${
        owner === null ? '; without authorization every caller counts as the same one' : ''
      }. Wait until some finish (tasks/get, or notifications/tasks on subscriptions/listen) or cancel some (tasks/cancel), then call again.`,
      { maxPerCaller: max },
    );
  }

  /**
   * MCP_TASK_MAX_PER_CALLER, counted once the new row is stored (it included): over it, the row is
   * deleted again and the call refused. Creations of one caller racing on two instances may then
   * both be refused at the edge of the cap, never both admitted. Unfinished means working with a
   * live lease (a task whose instance died does not count).
   */
  private async withinCallerCap(db: HistoryDb, row: TaskRow): Promise<void> {
    const max = this.options.maxPerCaller;
    if (max <= 0) return;
    let held: number;
    try {
      held = await this.unfinishedOf(db, row.owner, Date.now());
    } catch (err) {
      await db.run('DELETE FROM tasks WHERE task_id = ?', [row.task_id]).catch(() => undefined);
      throw err;
    }
    if (held <= max) return;
    // Not followed (the caller stops the call): a row the delete missed is not renewed, so it reads failed once its lease lapses.
    await db.run('DELETE FROM tasks WHERE task_id = ?', [row.task_id]);
    this.options.logger.info('MCP task refused: MCP_TASK_MAX_PER_CALLER reached', { owner: row.owner, max, tool: row.tool });
    throw this.overCallerCap(row.owner);
  }

  private async execute(row: TaskRow, controller: AbortController, run: TaskRun, capabilities: unknown): Promise<void> {
    // The call ends before the task's ttl does.
    const timeoutMs = Math.min(this.options.timeoutMs, row.ttl_ms - 1000);
    let status: 'completed' | 'failed';
    let message: string | null = null;
    let result: string | null = null;
    let error: string | null = null;
    const progress = this.progressWriter(row.task_id);
    // What the tool's MCP server asks the client: the task reads input_required with these requests.
    let written: Promise<void> = Promise.resolve();
    const open = new OpenRequests(() => (written = written.then(() => this.writeInput(row.task_id, open))));
    this.inputs.set(row.task_id, { open, written: () => written });
    const ask: ClientRequester = (method, params, signal, key) =>
      clientCan(capabilities, method, params) ? open.ask(method, params, signal, key) : Promise.reject(cannotAnswer(method, params));
    ask.capabilities = capabilities;
    ask.revision = '2026-07-28';
    try {
      const answer = await run(controller.signal, timeoutMs, progress.report, ask);
      result = JSON.stringify(answer);
      const bytes = Buffer.byteLength(result);
      if (bytes > this.options.maxResultBytes) {
        result = null;
        status = 'failed';
        message = `The result is ${bytes} bytes, over the ${this.options.maxResultBytes} a task keeps (MCP_TASK_MAX_RESULT_BYTES); narrow the request or raise the limit.`;
        error = JSON.stringify({ code: JSONRPC_CODES.INTERNAL_ERROR, message });
      } else {
        status = 'completed';
        // A tool's own failure is a completed task whose result says isError (the spec keeps failed for JSON-RPC errors).
        if (answer.isError) message = 'The tool reported an error: result.isError is true.';
      }
    } catch (err) {
      status = 'failed';
      if (err instanceof McpError) {
        message = withoutMcpErrorPrefix(err.message);
        error = JSON.stringify({ code: err.code, message, ...(err.data !== undefined ? { data: err.data } : {}) });
      } else {
        this.options.logger.error('MCP task failed', { err, taskId: row.task_id, tool: row.tool });
        message = 'Internal error; the gateway log has the cause.';
        error = JSON.stringify({ code: JSONRPC_CODES.INTERNAL_ERROR, message });
      }
    } finally {
      this.running.delete(row.task_id);
      this.inputs.delete(row.task_id);
      open.failAll(new McpError(JSONRPC_CODES.INVALID_REQUEST, 'The task this request belonged to has ended.'));
      await progress.stop();
      await written;
    }
    if (this.closed || !this.db) return;
    const now = Date.now();
    try {
      // Only a task still running: one cancelled meanwhile stays cancelled.
      await this.db.run(
        `UPDATE tasks SET status = ?, status_message = ?, result = ?, error = ?, input_requests = NULL, updated_at = ? WHERE task_id = ? AND status IN ('working', 'input_required')`,
        [status, message, result, error, now, row.task_id],
      );
    } catch (err) {
      this.options.logger.error('could not store the outcome of an MCP task; it will read failed once its lease lapses', {
        err,
        taskId: row.task_id,
      });
      return;
    }
    this.changed(row.task_id);
  }

  /**
   * The progress of a running task as its statusMessage ("Transcribing: 3/7"), so a requester that
   * polls tasks/get sees the work move: the latest report, written at most once a second (and told on
   * notifications/tasks). Stopped before the outcome is written.
   */
  private progressWriter(taskId: string): { report: ProgressListener; stop: () => Promise<void> } {
    let latest: string | undefined;
    let lastWrite = 0;
    let timer: NodeJS.Timeout | undefined;
    let writing: Promise<void> = Promise.resolve();
    const write = () => {
      timer = undefined;
      const text = latest;
      if (text === undefined || !this.db || this.closed) return;
      latest = undefined;
      lastWrite = Date.now();
      writing = this.db
        .run(`UPDATE tasks SET status_message = ?, updated_at = ? WHERE task_id = ? AND status = 'working'`, [text, lastWrite, taskId])
        .then(() => this.changed(taskId))
        .catch((err: unknown) => {
          this.options.logger.warn('could not record the progress of an MCP task', { err, taskId });
        });
    };
    return {
      report: (done, total, message) => {
        const amount = total !== undefined ? `${done}/${total}` : String(done);
        latest = (message ? `${message.slice(0, 200)}: ${amount}` : `Progress: ${amount}`).slice(0, 300);
        if (!timer) timer = setTimeout(write, Math.max(0, lastWrite + PROGRESS_WRITE_MS - Date.now()));
      },
      stop: async () => {
        clearTimeout(timer);
        await writing;
      },
    };
  }

  /** The task as tasks/get answers it; a task of another principal is answered as not found. */
  async get(taskId: string, principal: Principal | undefined): Promise<TaskView> {
    return view(await this.guard(this.row(taskId, principal)), true);
  }

  /** A store failure (PostgreSQL down, the file gone) is -32603 saying so, not an HTTP 500. */
  private async guard<T>(work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (err) {
      if (err instanceof McpError) throw err;
      this.options.logger.error('the MCP task store failed', { err });
      throw new McpError(JSONRPC_CODES.INTERNAL_ERROR, 'The task store is unavailable (the gateway log has the cause); retry shortly.');
    }
  }

  /**
   * tasks/cancel: a working task reads cancelled at once and its downstream call is aborted (here,
   * or by the instance running it at its next lease renewal). A terminal task is left as it is: the
   * same empty acknowledgement (the extension reserves errors for unknown ids).
   */
  async cancel(taskId: string, principal: Principal | undefined): Promise<void> {
    const row = await this.guard(this.row(taskId, principal));
    if (row.status !== 'working' && row.status !== 'input_required') return;
    await this.guard(
      this.db!.run(
        `UPDATE tasks SET status = 'cancelled', status_message = ?, updated_at = ? WHERE task_id = ? AND status IN ('working', 'input_required')`,
        ['Cancelled by tasks/cancel.', Date.now(), taskId],
      ),
    );
    this.running.get(taskId)?.abort();
    this.options.logger.info('MCP task cancelled', { taskId, tool: row.tool });
    this.changed(taskId);
  }

  /**
   * A running task's open requests as its state: input_required with them (inputRequests on tasks/get
   * and notifications/tasks), or working again once all are answered.
   */
  private async writeInput(taskId: string, open: OpenRequests): Promise<void> {
    if (!this.db || this.closed) return;
    const waiting = open.size > 0;
    const methods = [...new Set([...open.byKey.values()].map((a) => a.method))].join(', ');
    try {
      await this.db.run(
        `UPDATE tasks SET status = ?, status_message = ?, input_requests = ?, updated_at = ? WHERE task_id = ? AND status IN ('working', 'input_required')`,
        [
          waiting ? 'input_required' : 'working',
          waiting ? `Waiting for the client to answer ${methods} (tasks/update with inputResponses).` : null,
          waiting ? JSON.stringify(open.list()) : null,
          Date.now(),
          taskId,
        ],
      );
      this.changed(taskId);
    } catch (err) {
      this.options.logger.warn('could not record the open requests of an MCP task', { err, taskId });
    }
  }

  /**
   * tasks/update: the client's answers (inputResponses, keyed as inputRequests) go to the requests
   * the task's MCP server is waiting on, checked first (-32602 for one of the wrong shape, nothing
   * delivered); keys of no open request are ignored, and a subset leaves the task input_required with
   * the rest. Acknowledged once the task's new state is stored. The open requests live in the instance
   * running the task: behind a load balancer, tasks/update is routed there by its Mcp-Name (the task id).
   */
  async update(taskId: string, principal: Principal | undefined, responses: unknown): Promise<void> {
    const row = await this.guard(this.row(taskId, principal));
    const here = this.inputs.get(taskId);
    if (!here) {
      checkAnswers(new Map(), responses, 'send tasks/update again');
      if (row.status === 'input_required') {
        const refusal =
          'This task runs on another gateway instance, which holds its open requests: route tasks/update to it by its Mcp-Name header (the task id), or set MCP_INSTANCE_URL on every instance so that they forward it.';
        if (row.instance !== this.instance && row.instance_url) throw new HeldElsewhere(row.instance_url, refusal);
        throw new McpError(JSONRPC_CODES.INVALID_PARAMS, refusal);
      }
      return;
    }
    here.open.answer(checkAnswers(here.open.byKey, responses, 'send tasks/update again'));
    await here.written();
  }

  /** The ids among these that exist, are unexpired and belong to this principal (for notifications/tasks). */
  async visible(taskIds: readonly string[], principal: Principal | undefined): Promise<string[]> {
    if (!(await this.served()) || taskIds.length === 0) return [];
    const ids = [...new Set(taskIds)].slice(0, CHUNK);
    const rows = await this.guard(
      this.db!.all<{ task_id: string; owner: string | null }>(
        `SELECT task_id, owner FROM tasks WHERE expires_at >= ? AND task_id IN (${ids.map(() => '?').join(', ')})`,
        [Date.now(), ...ids],
      ),
    );
    const owner = ownerOf(principal);
    const ok = new Set(rows.filter((r) => r.owner === owner).map((r) => r.task_id));
    return ids.filter((id) => ok.has(id));
  }

  private async row(taskId: string, principal: Principal | undefined): Promise<TaskRow> {
    if (!(await this.served())) throw notFound('Task not found');
    let row = await this.db!.get<TaskRow>('SELECT * FROM tasks WHERE task_id = ?', [taskId]);
    if (!row || row.owner !== ownerOf(principal)) throw notFound('Task not found');
    const now = Date.now();
    if (row.expires_at < now) throw notFound('Task has expired');
    if ((row.status === 'working' || row.status === 'input_required') && row.lease_until < now && !this.running.has(taskId)) {
      // Its instance stopped renewing it: it died with the task.
      await this.db!.run(
        `UPDATE tasks SET status = 'failed', status_message = ?, error = ?, updated_at = ? WHERE task_id = ? AND status IN ('working', 'input_required') AND lease_until < ?`,
        [RESTARTED, JSON.stringify({ code: JSONRPC_CODES.INTERNAL_ERROR, message: RESTARTED }), now, taskId, now],
      );
      row = (await this.db!.get<TaskRow>('SELECT * FROM tasks WHERE task_id = ?', [taskId])) ?? row;
      this.changed(taskId);
    }
    return row;
  }

  /** A task changed here: its state is emitted for notifications/tasks here, and the other instances are told. */
  private changed(taskId: string): void {
    void this.channel?.publish([taskId]);
    this.announce([taskId]);
  }

  /**
   * Emits these tasks as they are now ('task' events: what notifications/tasks sends), those followed
   * only. Reads run one at a time, in the order of the changes, so a listener never gets an older
   * state after a newer one; a task changed twice before it is read is read once.
   */
  private announce(taskIds: Iterable<string>): void {
    if (this.listenerCount('task') === 0 || !this.db) return;
    for (const id of taskIds) if (!this.followers || this.followers.has(id)) this.inbox.add(id);
    if (this.draining || this.inbox.size === 0) return;
    this.draining = true;
    void this.drain(this.db);
  }

  private async drain(db: HistoryDb): Promise<void> {
    try {
      while (this.inbox.size > 0 && !this.closed) {
        const ids = [...this.inbox].slice(0, CHUNK);
        for (const id of ids) this.inbox.delete(id);
        const rows = await db
          .all<TaskRow>(`SELECT * FROM tasks WHERE task_id IN (${ids.map(() => '?').join(', ')})`, ids)
          .catch(() => [] as TaskRow[]);
        const byId = new Map(rows.map((r) => [r.task_id, r]));
        for (const id of ids) {
          const row = byId.get(id);
          // A state read twice (two notifications, one read after both changes) is sent once.
          const state = row && `${row.status}@${row.updated_at}@${row.input_requests ?? ''}`;
          if (!row || this.emitted.get(id) === state) continue;
          this.emitted.delete(id);
          this.emitted.set(id, state!);
          if (this.emitted.size > EMITTED_MAX) this.emitted.delete(this.emitted.keys().next().value!);
          this.emit('task', { owner: row.owner, task: view(row, true) });
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** While tasks run here: renew their leases, and abort those cancelled through another instance. */
  private keepLeases(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.options.leaseMs / 3)));
    this.heartbeat.unref();
  }

  private async renew(): Promise<void> {
    if (this.running.size === 0 || !this.db) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
      return;
    }
    const ids = [...this.running.keys()];
    try {
      for (let i = 0; i < ids.length; i += CHUNK) {
        const chunk = ids.slice(i, i + CHUNK);
        const list = chunk.map(() => '?').join(', ');
        // The calls running here only: a row whose outcome could not be written lets its lease lapse.
        await this.db.run(`UPDATE tasks SET lease_until = ? WHERE ${UNFINISHED} AND task_id IN (${list})`, [
          Date.now() + this.options.leaseMs,
          ...chunk,
        ]);
        const rows = await this.db.all<{ task_id: string; status: string }>(
          `SELECT task_id, status FROM tasks WHERE task_id IN (${list})`,
          chunk,
        );
        const working = new Set(rows.filter((r) => r.status === 'working' || r.status === 'input_required').map((r) => r.task_id));
        for (const id of chunk) if (!working.has(id)) this.running.get(id)?.abort();
      }
    } catch (err) {
      this.options.logger.warn('could not renew the leases of running MCP tasks', { err, running: ids.length });
    }
  }

  private async prune(): Promise<void> {
    if (!this.db && this.closed) return;
    const db = this.db ?? (await this.options.history.database());
    const now = Date.now();
    try {
      // An expired task's result goes at once; its id is remembered a while longer, so tasks/get can say "expired".
      await db?.run('UPDATE tasks SET result = NULL, error = NULL WHERE expires_at < ? AND (result IS NOT NULL OR error IS NOT NULL)', [
        now,
      ]);
      await db?.run('DELETE FROM tasks WHERE expires_at < ?', [now - Math.min(this.options.ttlMs, 3_600_000)]);
    } catch (err) {
      this.options.logger.warn('could not delete expired MCP tasks', { err });
    }
  }

  /** Shutdown: running tasks are aborted and read failed (call the tool again); then nothing more is stored. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.ready;
    clearInterval(this.heartbeat);
    clearInterval(this.pruneTimer);
    const ids = [...this.running.keys()];
    this.closed = true;
    for (const c of this.running.values()) c.abort();
    if (this.db && ids.length) {
      const now = Date.now();
      await this.db
        .run(
          `UPDATE tasks SET status = 'failed', status_message = ?, error = ?, updated_at = ? WHERE status IN ('working', 'input_required') AND task_id IN (${ids
            .map(() => '?')
            .join(', ')})`,
          [SHUT_DOWN, JSON.stringify({ code: JSONRPC_CODES.INTERNAL_ERROR, message: SHUT_DOWN }), now, ...ids],
        )
        .catch((err: unknown) => this.options.logger.error('could not mark the running MCP tasks failed on shutdown', { err }));
      this.options.logger.info('MCP tasks still running at shutdown were marked failed', { count: ids.length });
      // listeners on the other instances hear it
      await this.channel?.publish(ids);
    }
    await this.channel?.close();
    await Promise.allSettled([...this.pending]);
  }
}

async function insertTask(db: HistoryDb, row: TaskRow): Promise<void> {
  await db.run(
    `INSERT INTO tasks (task_id, owner, tool, status, status_message, created_at, updated_at, ttl_ms, expires_at, poll_ms, instance, instance_url, lease_until, result, error)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      row.task_id,
      row.owner,
      row.tool,
      row.status,
      row.status_message,
      row.created_at,
      row.updated_at,
      row.ttl_ms,
      row.expires_at,
      row.poll_ms,
      row.instance,
      row.instance_url ?? null,
      row.lease_until,
      row.result,
      row.error,
    ],
  );
}

function view(row: TaskRow, detailed: boolean): TaskView {
  const out: TaskView = {
    taskId: row.task_id,
    status: row.status,
    ...(row.status_message ? { statusMessage: row.status_message } : {}),
    createdAt: new Date(row.created_at).toISOString(),
    lastUpdatedAt: new Date(row.updated_at).toISOString(),
    ttlMs: row.ttl_ms,
    pollIntervalMs: row.poll_ms,
  };
  if (row.status === 'input_required' && row.input_requests) out.inputRequests = JSON.parse(row.input_requests) as Record<string, unknown>;
  if (!detailed) return out;
  if (row.status === 'completed' && row.result) out.result = JSON.parse(row.result) as Record<string, unknown>;
  if (row.status === 'failed' && row.error) out.error = JSON.parse(row.error) as Record<string, unknown>;
  return out;
}
