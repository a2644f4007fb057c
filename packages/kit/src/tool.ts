import { z } from 'zod';
import { AppError } from './errors';
import type { Logger } from './logger';
import { parseOrThrow } from './validation';

export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * MCP's tool execution hints. `taskSupport` says whether an MCP client may get the call as a task
 * (2026-07-28 tasks extension, through the gateway): "optional" for work that may run long (the
 * gateway answers a task handle to clients that declared the extension, a plain result to the
 * others), "required" when only a task makes sense, "forbidden" (the default) never.
 */
export interface ToolExecution {
  taskSupport?: 'forbidden' | 'optional' | 'required';
}

export interface ToolContext {
  service: string;
  requestId: string;
  logger: Logger;
  /** Aborted when the call's time limit passes or the client goes away. */
  signal: AbortSignal;
  /**
   * This call's time limit, so handlers can size engine-side timeouts below it: the tool's own
   * (`timeoutMs`, else TOOL_TIMEOUT_MS), or less when the caller sent a shorter time budget (BUDGET_HEADER).
   */
  timeoutMs: number;
  /**
   * When the time limit passes (Date.now() milliseconds): `ctx.deadline - Date.now()` is the time
   * left, e.g. to stop a child process a little before it so the handler answers its own result.
   */
  deadline: number;
  /** The HTTP Authorization header of a direct call, for tools that take a credential. */
  authorization?: string;
  /** W3C traceparent of this call's span, for tools that call further services. */
  traceparent?: string;
  /**
   * Reports progress of long work (MCP's notifications/progress when the caller asked for it through
   * the gateway; a no-op otherwise). `progress` grows; `total` when known.
   */
  progress(progress: number, total?: number, message?: string): void;
}

/** Tool inputs are objects: a z.object, or a discriminated union of objects (one schema per action). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyObjectSchema = z.ZodObject<any> | z.ZodDiscriminatedUnion<any> | z.ZodUnion<any>;

export interface ToolDefinition<S extends AnyObjectSchema = AnyObjectSchema, R = unknown> {
  name: string;
  title?: string;
  /** What it does, and its size and time caps (decisions.md, "Lists and limits"). */
  description: string;
  input: S;
  annotations?: ToolAnnotations;
  /** Long-running work: `{taskSupport: "optional"}` lets the gateway run calls of it as MCP tasks. */
  execution?: ToolExecution;
  /** Overrides the service's TOOL_TIMEOUT_MS for this tool. */
  timeoutMs?: number;
  /** Declared as a method so that a list of differently typed tools is a plain `ToolDefinition[]`. */
  handler(args: z.output<S>, ctx: ToolContext): Promise<R> | R;
}

export interface ToolJson {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: ToolAnnotations;
  execution?: ToolExecution;
}

export function defineTool<S extends AnyObjectSchema, R>(def: ToolDefinition<S, R>): ToolDefinition<S, R> {
  if (!TOOL_NAME.test(def.name)) throw new Error(`Tool name "${def.name}" does not match ${TOOL_NAME}`);
  return def;
}

const jsonCache = new WeakMap<ToolDefinition, ToolJson>();

/** The tool's listing, generated from its zod schema: `/tools/list` is the documentation. */
export function toolToJson(tool: ToolDefinition): ToolJson {
  const cached = jsonCache.get(tool);
  if (cached) return cached;
  const schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema.$schema;
  // MCP requires an object schema at the top; unions of objects get it stated explicitly.
  if (schema.type === undefined) schema.type = 'object';
  const json: ToolJson = {
    name: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    description: tool.description,
    inputSchema: schema,
    annotations: { ...(tool.title ? { title: tool.title } : {}), ...tool.annotations },
    ...(tool.execution ? { execution: { ...tool.execution } } : {}),
  };
  jsonCache.set(tool, json);
  return json;
}

/**
 * The caller's time budget for one tool call, in milliseconds: a request header of POST /tools/call
 * (and `budgetMs` in a channel frame). The gateway sends what is left of its own time limit less a
 * margin, so the tool ends the call (TIMEOUT, or a handler's own timed-out result) before the gateway
 * gives up on it. A budget can only shorten the tool's limit, never lengthen it.
 */
export const BUDGET_HEADER = 'x-fleet-budget-ms';
/** setTimeout's largest delay; a longer budget is no budget. */
const MAX_BUDGET_MS = 2_147_483_647;
const BUDGET_TEXT = /^[0-9]{1,10}$/;

/** A time budget as sent (header text or frame number): a whole number of ms from 1 up; anything else is ignored (undefined). */
export function budgetFrom(raw: unknown): number | undefined {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && BUDGET_TEXT.test(raw) ? Number(raw) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= MAX_BUDGET_MS ? n : undefined;
}

export interface InvokeOptions {
  service: string;
  requestId: string;
  logger: Logger;
  defaultTimeoutMs: number;
  /** The caller's time budget (budgetFrom): the call's limit is the smaller of it and the tool's own. */
  budgetMs?: number;
  /** Aborts the call, e.g. when the HTTP client disconnects. */
  signal?: AbortSignal;
  /** The call's own controller (see CallOptions.controller): the time limit aborts it, and `signal` is then not followed (it is this controller's). */
  controller?: AbortController;
  authorization?: string;
  traceparent?: string;
  progress?: ToolContext['progress'];
}

const noProgress = () => undefined;

/**
 * A call's ToolContext. Its `signal` is the call's controller's, made when the tool first reads it:
 * Node 20 takes microseconds to make an AbortSignal (3.4 µs a call in filesystem-mcp's profile
 * under load), and a tool that never looks at it (a plain listing) need not pay for one. A class,
 * because V8 builds an object literal with a getter through a runtime call.
 */
class CallContext implements ToolContext {
  readonly service: string;
  readonly requestId: string;
  readonly logger: Logger;
  readonly authorization: string | undefined;
  readonly traceparent: string | undefined;
  readonly progress: ToolContext['progress'];
  readonly #controller: AbortController;

  constructor(
    options: InvokeOptions,
    controller: AbortController,
    readonly timeoutMs: number,
    readonly deadline: number,
  ) {
    this.service = options.service;
    this.requestId = options.requestId;
    this.logger = options.logger;
    this.authorization = options.authorization;
    this.traceparent = options.traceparent;
    this.progress = options.progress ?? noProgress;
    this.#controller = controller;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }
}

/** Validate at the edge, then run the handler under its time limit. */
export async function invokeTool(tool: ToolDefinition, rawArgs: unknown, options: InvokeOptions): Promise<unknown> {
  const args = parseOrThrow(tool.input, rawArgs ?? {}, `arguments for ${tool.name}`);
  const own = tool.timeoutMs ?? options.defaultTimeoutMs;
  const budget = options.budgetMs;
  const byBudget = budget !== undefined && budget > 0 && budget < own;
  const timeoutMs = byBudget ? budget : own;
  const deadline = Date.now() + timeoutMs;
  // One controller per call: the caller's own when it handed one over (its signal is the call's),
  // else one here that follows the caller's signal. Creating an AbortController costs ~2 µs.
  const controller = options.controller ?? new AbortController();
  const onAbort = options.controller ? undefined : () => controller.abort(options.signal?.reason);
  if (onAbort) options.signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<unknown>((resolve, reject) => {
      timer = setTimeout(() => {
        const err = new AppError(
          'TIMEOUT',
          byBudget
            ? `${tool.name} did not finish within ${timeoutMs} ms, the time its caller had left for it (${BUDGET_HEADER}); narrow the request or give the call more time.`
            : `${tool.name} did not finish within ${timeoutMs} ms; narrow the request or raise its timeout.`,
        );
        controller.abort(err);
        reject(err);
      }, timeoutMs);
      const ctx = new CallContext(options, controller, timeoutMs, deadline);
      Promise.resolve()
        .then(() => tool.handler(args, ctx))
        .then(resolve, reject);
    });
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener('abort', onAbort);
  }
}
