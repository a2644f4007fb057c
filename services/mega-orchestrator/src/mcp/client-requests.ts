/**
 * What an MCP server behind the gateway asks its client during a tool call (elicitation/create,
 * sampling/createMessage, roots/list) reaches the caller of that call:
 * - a 2025-era session's client as a JSON-RPC request on the call's event stream (session-transport.ts);
 * - a 2026-07-28 client as an `input_required` result (SEP-2322, multi round-trip requests): the
 *   server's call stays open in this gateway instance while the client answers, and the client's
 *   retry of the same tools/call, with `inputResponses` and the `requestState` it was given, delivers
 *   the answers to the waiting server. InputExchanges below keeps those calls.
 * docs/gateway.md, "Questions from MCP servers", tells the whole story.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { JSONRPC_CODES, sameSecret, type Logger } from '@mcp-fleet/kit';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ClientRequester, LogListener, ProgressListener } from '../downstream/http-client';
import {
  answerProblem,
  awaitAnswer,
  cannotAnswer,
  checkAnswers,
  clientCan,
  inputKey,
  neededCapability,
  OpenRequests,
} from '../core/client-requests';
import { rpcErrorWithStatus } from './errors';
import { HeldElsewhere } from '../core/held-elsewhere';

// what the server asks, as core keeps it (the 2025 session transport and tests read it from here)
export { answerProblem, awaitAnswer, cannotAnswer, checkAnswers, clientCan, inputKey, neededCapability, OpenRequests };

type Outcome = { ok: true; result: Record<string, unknown> } | { ok: false; error: unknown };

/** One tool call whose server asked its caller something, waiting between rounds. */
interface Exchange {
  id: string;
  owner: string;
  tool: string;
  /** The round the latest requestState names; bumped as soon as answers are taken, so an old state is stale. */
  round: number;
  /** Requests not yet answered, by their inputRequests key. */
  asked: OpenRequests;
  controller: AbortController;
  settled?: Outcome;
  /** Set while a round waits for news (a request, or the call's end). */
  wake?: () => void;
  /** The open round's listeners: progress and logs of the call go to the request that is waiting now. */
  listeners?: CallListeners;
  expiry?: NodeJS.Timeout;
  /** The call's result (or its error), as its run answers it. */
  running?: Promise<Record<string, unknown>>;
  /** A task-augmented call: how it becomes a task (unset once it is one, or once it cannot be). */
  escalation?: Escalation;
  /** Set while the call is being made a task: what its server asks meanwhile waits for it. */
  handover?: Promise<void>;
  /** Set once the call is a task: where what its server asks, and its progress, go. */
  task?: { ask: ClientRequester; onProgress: ProgressListener };
  /** Ended in a way no task may carry: refused (-32021) or abandoned by its client. */
  noTask?: boolean;
}

/**
 * How a task-augmented 2026-07-28 tools/call becomes a task (lazy minting, SEP-2663 with SEP-2322):
 * it is run as any call first; only when it has neither ended nor asked its caller anything within
 * `afterMs` (MCP_TASK_MINT_MS) is its task minted, and the round answers the task's handle. What its
 * server asks before that is a round of input_required, as for any call, with no task; the retry
 * carrying the answers continues the same call, and the window starts again. A call that ends within
 * the window is minted too, terminal (a task-supporting tool called this way always ends in a
 * CreateTaskResult, unless it asks).
 */
export interface Escalation {
  /** MCP_TASK_MINT_MS; 0: the task is minted at once (what the server asks then goes to the task). */
  afterMs: number;
  /**
   * Makes the running (or ended) call a task: its handle (a CreateTaskResult). Undefined: no task
   * after all (the call goes on as any other). A throw stops the call and is the round's answer.
   */
  mint(call: RunningCall): Promise<Record<string, unknown> | undefined>;
}

/** The call being made a task, as Escalation.mint gets it. */
export interface RunningCall {
  outcome: Promise<Record<string, unknown>>;
  controller: AbortController;
  /** It already ended (within the window). */
  ended: boolean;
  /** From now on what the call's server asks goes to `ask`, and its progress to `onProgress`. */
  attach(ask: ClientRequester, onProgress: ProgressListener): void;
}

/** What a call streams to the round of its client that is open (progress, log messages). */
export interface CallListeners {
  onProgress?: ProgressListener;
  onLog?: LogListener;
}

/** Who is calling: the principal's owner key (empty without authorization), the tool, the declared capabilities. */
export interface ExchangeCaller {
  owner: string;
  tool: string;
  capabilities: unknown;
}

export interface InputExchangesOptions {
  /** How long a call waits for the client's retry (MCP_INPUT_TIMEOUT_MS). */
  ttlMs: number;
  logger: Logger;
  /** Requests a server sends together (within this many ms) are asked in one round. */
  gatherMs?: number;
  /** Calls waiting for their client at most; beyond it a call that asks something fails. */
  maxOpen?: number;
  /** MCP_INSTANCE_URL: named in each requestState, so that another instance forwards the retry here. */
  instanceUrl?: string;
  /** MCP_STATE_SECRET: the signing key shared by the instances (default: random per process). */
  secret?: string;
}

const STATE_VERSION = 'v2';

/**
 * 2026-07-28 tools/calls whose MCP server asked the caller something: each answered `input_required`
 * with the open requests and an HMAC-signed `requestState` (its call id and round, bound to the
 * caller and the tool), kept in memory until the client retries with the answers, or MCP_INPUT_TIMEOUT_MS
 * passes (the server's call is then aborted). The call lives in this instance: the requestState
 * names it (MCP_INSTANCE_URL), so that another instance sharing the key forwards the retry here
 * (HeldElsewhere, peer-forward.ts); without it, another instance can only say it does not hold the call.
 */
export class InputExchanges {
  private readonly open = new Map<string, Exchange>();
  private readonly key: Buffer;
  /** This instance in a requestState: its URL, base64url ('' when none is configured). */
  private readonly here: string;

  constructor(private readonly options: InputExchangesOptions) {
    this.key = options.secret ? Buffer.from(options.secret) : randomBytes(32);
    this.here = options.instanceUrl ? Buffer.from(options.instanceUrl).toString('base64url') : '';
  }

  get waiting(): number {
    return this.open.size;
  }

  /** Runs a call whose server's requests become input_required results: its result, or the first round. */
  async call(
    run: (requester: ClientRequester, signal: AbortSignal, relay: CallListeners) => Promise<Record<string, unknown>>,
    caller: ExchangeCaller,
    requestSignal: AbortSignal,
    listeners: CallListeners = {},
    /** Answers the client sent with its first request (for a 2026-07-28 server that takes them). */
    inputResponses?: Record<string, unknown>,
    /** A task-augmented call: how it becomes a task (lazy minting). */
    escalation?: Escalation,
  ): Promise<Record<string, unknown>> {
    const ex: Exchange = {
      id: randomUUID(),
      owner: caller.owner,
      tool: caller.tool,
      round: 1,
      asked: new OpenRequests(() => ex.wake?.()),
      controller: new AbortController(),
      escalation,
    };
    // Once the call is a task, what its server asks goes to the task; while it is being made one, it waits.
    const requester: ClientRequester = (method, params, signal, key) => {
      if (ex.task) return ex.task.ask(method, params, signal, key);
      if (ex.handover) return ex.handover.then(() => requester(method, params, signal, key));
      return askClient(method, params, signal, key);
    };
    const askClient: ClientRequester = (method, params, signal, key) => {
      if (clientCan(caller.capabilities, method, params)) return ex.asked.ask(method, params, signal, key);
      // roots/list is also asked unprompted (server-everything asks it 350 ms after it starts), and a
      // stdio server's request names no call: it may not be this call's, so only the server is refused.
      if (method === 'roots/list') return Promise.reject(cannotAnswer(method, params));
      // A 2026-07-28 server must not rely on an undeclared capability: the client is told which one (-32021).
      const need = neededCapability(method, params);
      this.settle(
        ex,
        {
          ok: false,
          error: rpcErrorWithStatus(
            JSONRPC_CODES.MISSING_REQUIRED_CLIENT_CAPABILITY,
            `Missing required client capability: the MCP server behind ${caller.tool.slice(0, 100)} asks ${method}; declare ${JSON.stringify(need)} in _meta["io.modelcontextprotocol/clientCapabilities"].`,
            { requiredCapabilities: need },
          ),
        },
        true,
      );
      return Promise.reject(cannotAnswer(method, params));
    };
    requester.capabilities = caller.capabilities;
    requester.revision = '2026-07-28';
    if (inputResponses) requester.inputResponses = inputResponses;
    ex.listeners = listeners;
    // What the first request asked for is relayed for the whole call, to whichever round is open
    // (progress always for a call that may become a task: its statusMessage shows it then).
    const relay: CallListeners = {
      ...(listeners.onProgress || escalation
        ? { onProgress: (...a) => (ex.task ? ex.task.onProgress(...a) : ex.listeners?.onProgress?.(...a)) }
        : {}),
      ...(listeners.onLog ? { onLog: (log) => ex.listeners?.onLog?.(log) } : {}),
    };
    ex.running = run(requester, ex.controller.signal, relay);
    void ex.running.then(
      (result) => this.settle(ex, { ok: true, result }),
      (error: unknown) => this.settle(ex, { ok: false, error }),
    );
    return this.next(ex, requestSignal);
  }

  /** A retry with requestState (and inputResponses): the answers go to the waiting server; then its result or the next round. */
  async resume(
    state: unknown,
    responses: unknown,
    caller: ExchangeCaller,
    requestSignal: AbortSignal,
    listeners: CallListeners = {},
  ): Promise<Record<string, unknown>> {
    const ex = this.exchangeOf(state, caller);
    const given = checkAnswers(ex.asked.byKey, responses, 'retry with the same requestState');
    clearTimeout(ex.expiry);
    ex.round += 1;
    ex.listeners = listeners;
    ex.asked.answer(given);
    // Keys it was asked and did not answer (extra keys are ignored) are asked again.
    if (ex.asked.size > 0 && !ex.settled) return this.inputRequired(ex);
    return this.next(ex, requestSignal);
  }

  /** The exchange a requestState names, checked: signature, caller and tool, still open, the latest round. */
  private exchangeOf(state: unknown, caller: ExchangeCaller): Exchange {
    const parts = typeof state === 'string' ? state.split('.') : [];
    const [version, instance, id, round, mac] = parts;
    if (
      parts.length !== 5 ||
      version !== STATE_VERSION ||
      !/^\d{1,9}$/.test(round ?? '') ||
      !this.verify(`${version}.${instance}.${id}.${round}`, caller, mac)
    )
      throw new McpError(
        JSONRPC_CODES.INVALID_PARAMS,
        'params.requestState failed its integrity check: it was altered, was issued for another tool or caller, or by a gateway instance with another MCP_STATE_SECRET. Send it back exactly as the input_required result gave it, or call the tool again without it.',
      );
    const gone =
      'params.requestState names a call that is no longer waiting: it expired (MCP_INPUT_TIMEOUT_MS), ended, or lives on another gateway instance. Call the tool again without requestState.';
    if (instance !== this.here) {
      const url = Buffer.from(instance!, 'base64url').toString();
      if (/^https?:\/\//.test(url)) throw new HeldElsewhere(url, gone);
    }
    const ex = this.open.get(id);
    if (!ex || ex.owner !== caller.owner || ex.tool !== caller.tool) throw new McpError(JSONRPC_CODES.INVALID_PARAMS, gone);
    if (Number(round) !== ex.round)
      throw new McpError(
        JSONRPC_CODES.INVALID_PARAMS,
        `params.requestState is from round ${round} of this call, which is at round ${ex.round}: send the requestState of the latest input_required result.`,
      );
    return ex;
  }

  private sign(payload: string, caller: { owner: string; tool: string }): string {
    return createHmac('sha256', this.key).update(`${payload}\n${caller.owner}\n${caller.tool}`).digest('base64url');
  }

  private verify(payload: string, caller: ExchangeCaller, mac: string | undefined): boolean {
    return !!mac && sameSecret(mac, this.sign(payload, caller));
  }

  /**
   * Waits for news: the call's result (answered), or requests to put to the client (one round). A
   * task-augmented call still running, having asked nothing, when its window (Escalation.afterMs)
   * passes, and one that ended within it, become a task: the round answers its handle.
   */
  private async next(ex: Exchange, requestSignal: AbortSignal): Promise<Record<string, unknown>> {
    const abandon = () => this.abandon(ex, 'the client closed its request');
    requestSignal.addEventListener('abort', abandon, { once: true });
    let due = ex.escalation?.afterMs === 0;
    const window =
      ex.escalation && !due
        ? setTimeout(() => {
            due = true;
            ex.wake?.();
          }, ex.escalation.afterMs)
        : undefined;
    try {
      for (;;) {
        while (!ex.settled && ex.asked.size === 0 && !due) await new Promise<void>((wake) => (ex.wake = wake));
        ex.wake = undefined;
        // Requests a server sends at once (Promise.all) are asked together.
        if (!ex.settled && ex.asked.size > 0 && this.options.gatherMs !== 0)
          await new Promise((r) => setTimeout(r, this.options.gatherMs ?? 5));
        // All withdrawn meanwhile: nothing to ask, wait on (unless it is time for the task).
        if (ex.settled || ex.asked.size > 0 || due) break;
      }
    } finally {
      clearTimeout(window);
      requestSignal.removeEventListener('abort', abandon);
    }
    if (ex.settled) {
      this.forget(ex);
      if (ex.escalation && !ex.noTask) {
        const task = await this.escalate(ex, true);
        if (task) return task;
      }
      if (ex.settled.ok) return ex.settled.result;
      throw ex.settled.error;
    }
    if (ex.asked.size > 0) return this.inputRequired(ex);
    // Running past its window without asking: a task from now on (or, if none can be made, a call as any other).
    return (await this.escalate(ex, false)) ?? this.next(ex, requestSignal);
  }

  /**
   * Makes the call a task (Escalation.mint): the exchange is forgotten first, so its requestState
   * continues nothing any more (a replay is refused, never a second task). What the server asks
   * meanwhile waits and then goes to the task. A minting that fails stops the call.
   */
  private async escalate(ex: Exchange, ended: boolean): Promise<Record<string, unknown> | undefined> {
    const escalation = ex.escalation!;
    ex.escalation = undefined;
    this.forget(ex);
    let release!: () => void;
    ex.handover = new Promise<void>((resolve) => (release = resolve));
    try {
      return await escalation.mint({
        outcome: ex.running!,
        controller: ex.controller,
        ended,
        attach: (ask, onProgress) => {
          ex.task = { ask, onProgress };
          // the round's response is answered: nothing more is streamed to it
          ex.listeners = undefined;
        },
      });
    } catch (err) {
      if (!ended) {
        ex.noTask = true;
        ex.controller.abort(new Error('its task could not be created'));
        this.settle(ex, { ok: false, error: err });
      }
      throw err;
    } finally {
      ex.handover = undefined;
      release();
    }
  }

  private inputRequired(ex: Exchange): Record<string, unknown> {
    if (!this.open.has(ex.id) && this.open.size >= (this.options.maxOpen ?? 1000)) {
      this.abandon(ex, 'too many calls are waiting for their clients');
      throw new McpError(
        JSONRPC_CODES.INTERNAL_ERROR,
        `The gateway holds ${this.open.size} tool calls waiting for their clients' answers; retry once some finish.`,
      );
    }
    this.open.set(ex.id, ex);
    clearTimeout(ex.expiry);
    ex.expiry = setTimeout(() => this.abandon(ex, `no answer within ${this.options.ttlMs} ms`), this.options.ttlMs);
    ex.expiry.unref();
    const payload = `${STATE_VERSION}.${this.here}.${ex.id}.${ex.round}`;
    return {
      resultType: 'input_required',
      inputRequests: ex.asked.list(),
      requestState: `${payload}.${this.sign(payload, ex)}`,
    };
  }

  /** The call's outcome (the first one counts); `abort`: the server's call is stopped too. */
  private settle(ex: Exchange, outcome: Outcome, abort = false): void {
    if (ex.settled) return;
    ex.settled = outcome;
    if (abort) {
      ex.noTask = true;
      ex.controller.abort(new Error('the call was refused'));
    }
    ex.asked.failAll(new McpError(ErrorCode.InvalidRequest, 'The tool call this request belonged to has ended.'));
    ex.wake?.();
  }

  /** The client went away or never came back: the server's call is aborted and its requests withdrawn. */
  private abandon(ex: Exchange, why: string): void {
    if (ex.settled && !this.open.has(ex.id)) return;
    this.options.logger.info('a tool call waiting for its client was abandoned', { tool: ex.tool, why });
    ex.noTask = true;
    ex.controller.abort(new Error(why));
    const error = new McpError(ErrorCode.RequestTimeout, `The client did not answer: ${why}.`);
    ex.asked.failAll(error);
    this.forget(ex);
    // A round still being gathered for the closed request ends now, not with a fresh requestState.
    this.settle(ex, { ok: false, error });
  }

  private forget(ex: Exchange): void {
    clearTimeout(ex.expiry);
    this.open.delete(ex.id);
  }

  /** Every waiting call aborted (the gateway is closing). */
  close(): void {
    for (const ex of [...this.open.values()]) this.abandon(ex, 'the gateway is shutting down');
  }
}
