/**
 * Tasks for 2025-era sessions (MCP 2025-11-25, "Tasks", SEP-1686): a `tools/call` with `params.task`
 * answers a task at once (`{task: {taskId, status: "working", ttl, pollInterval, ...}}`) and runs on;
 * the client polls `tasks/get`, fetches the answer with `tasks/result` (it waits for the end),
 * lists its tasks with `tasks/list` and stops one with `tasks/cancel`. The SDK's Protocol answers
 * those four methods from this store; the gateway runs the calls. A session's tasks live with the
 * session, in memory on its instance (sessions are sticky there anyway), so no other session sees
 * them; the 2026-07-28 extension's durable tasks are src/tasks.ts.
 */
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import type { CreateTaskOptions } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { McpError, type Request, type RequestId, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import { JSONRPC_CODES } from '@mcp-fleet/kit';

export interface SessionTaskLimits {
  /** MCP_TASK_TTL_MS: the longest a task is kept (a client's shorter ttl is kept as asked). */
  ttlMs: number;
  /** MCP_TASK_POLL_MS: the pollInterval suggested. */
  pollMs: number;
  /** MCP_TASK_MAX_PER_CALLER: unfinished tasks a session may hold; 0: no cap. */
  maxUnfinished: number;
}

type Timers = { cleanupTimers: Map<string, NodeJS.Timeout> };

export class SessionTaskStore extends InMemoryTaskStore {
  /** The calls running for this session's tasks, aborted by tasks/cancel or the session's end. */
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly limits: SessionTaskLimits) {
    super();
  }

  private get internals(): Timers {
    return this as unknown as Timers;
  }

  /** Expiry timers must not keep the process alive. */
  private unref(taskId: string): void {
    this.internals.cleanupTimers.get(taskId)?.unref();
  }

  override async createTask(params: CreateTaskOptions, requestId: RequestId, request: Request, sessionId?: string): Promise<Task> {
    if (this.limits.maxUnfinished > 0 && this.running.size >= this.limits.maxUnfinished)
      throw new McpError(
        JSONRPC_CODES.INTERNAL_ERROR,
        `This session already runs ${this.running.size} tasks (MCP_TASK_MAX_PER_CALLER); wait for one to end, or tasks/cancel one.`,
      );
    const asked = typeof params.ttl === 'number' && params.ttl > 0 ? params.ttl : this.limits.ttlMs;
    const task = await super.createTask(
      { ttl: Math.min(asked, this.limits.ttlMs), pollInterval: this.limits.pollMs },
      requestId,
      request,
      sessionId,
    );
    this.unref(task.taskId);
    return task;
  }

  /** Runs a task's call: aborted when the task is cancelled or the session ends. */
  track(taskId: string): AbortController {
    const controller = new AbortController();
    this.running.set(taskId, controller);
    return controller;
  }

  untrack(taskId: string): void {
    this.running.delete(taskId);
  }

  override async storeTaskResult(taskId: string, status: 'completed' | 'failed', result: Result, sessionId?: string): Promise<void> {
    await super.storeTaskResult(taskId, status, result, sessionId);
    this.unref(taskId);
  }

  override async updateTaskStatus(taskId: string, status: Task['status'], statusMessage?: string, sessionId?: string): Promise<void> {
    await super.updateTaskStatus(taskId, status, statusMessage, sessionId);
    this.unref(taskId);
    if (status === 'cancelled') this.running.get(taskId)?.abort();
  }

  /** The session ended: its running calls are aborted and its tasks dropped. */
  close(): void {
    for (const controller of this.running.values()) controller.abort();
    this.running.clear();
    this.cleanup();
  }
}
