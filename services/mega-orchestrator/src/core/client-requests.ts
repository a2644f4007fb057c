/**
 * What an MCP server behind the gateway asks its client during a call (elicitation/create,
 * sampling/createMessage, roots/list), as the gateway keeps it whichever way the caller is reached
 * (a 2025-era session's event stream, a 2026-07-28 input_required result, a task's tasks/update):
 * whether the caller declared what a request needs, how its answer is checked, the keys of the
 * open requests. The protocol's side of it is mcp/client-requests.ts; docs/gateway.md, "Questions
 * from MCP servers", tells the whole story.
 */
import { isPlainObject, JSONRPC_CODES } from '@mcp-fleet/kit';
import {
  CreateMessageResultSchema,
  CreateMessageResultWithToolsSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { ClientRequestMethod } from '../downstream/http-client';

/** The capability each request needs. */
const CAPABILITY: Record<ClientRequestMethod, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/**
 * True when these client capabilities cover the request: elicitation in the mode it asks for (an
 * empty elicitation object is form mode, as 2025-06-18 clients declare it), sampling with tools only
 * when the client declared sampling.tools.
 */
export function clientCan(caps: unknown, method: ClientRequestMethod, params: Record<string, unknown>): boolean {
  if (!isPlainObject(caps)) return false;
  const cap = caps[CAPABILITY[method]];
  if (!isPlainObject(cap)) return false;
  if (method === 'elicitation/create') {
    if (params.mode === 'url') return isPlainObject(cap.url);
    return isPlainObject(cap.form) || (!('form' in cap) && !('url' in cap));
  }
  if (method === 'sampling/createMessage' && (params.tools !== undefined || params.toolChoice !== undefined))
    return isPlainObject(cap.tools);
  return true;
}

/** The capability a request needs, as a ClientCapabilities object ({"sampling": {}}, {"elicitation": {"url": {}}}). */
export function neededCapability(method: ClientRequestMethod, params: Record<string, unknown>): Record<string, unknown> {
  if (method === 'elicitation/create' && params.mode === 'url') return { elicitation: { url: {} } };
  if (method === 'sampling/createMessage' && (params.tools !== undefined || params.toolChoice !== undefined))
    return { sampling: { tools: {} } };
  return { [CAPABILITY[method]]: {} };
}

/** The error the MCP server gets when the caller did not declare what its request needs. */
export function cannotAnswer(method: ClientRequestMethod, params: Record<string, unknown>): McpError {
  const need = method === 'elicitation/create' && params.mode === 'url' ? 'elicitation.url' : CAPABILITY[method];
  return new McpError(
    JSONRPC_CODES.METHOD_NOT_FOUND,
    `The caller of this tool call cannot answer ${method}: its MCP client did not declare the "${need}" capability.`,
  );
}

/** How the answer to each request is checked before the waiting server gets it (the SDK's own result schemas). */
export function answerProblem(method: ClientRequestMethod, params: Record<string, unknown>, answer: unknown): string | undefined {
  const schema =
    method === 'elicitation/create'
      ? ElicitResultSchema
      : method === 'roots/list'
        ? ListRootsResultSchema
        : params.tools !== undefined || params.toolChoice !== undefined
          ? CreateMessageResultWithToolsSchema
          : CreateMessageResultSchema;
  if (!isPlainObject(answer)) return 'it is not an object';
  const parsed = schema.safeParse(answer);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0];
  return `${issue.path.join('.') || '(the object)'}: ${issue.message}`;
}

const KEY_PREFIX: Record<ClientRequestMethod, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};
/** The inputRequests key of a call's n-th request: "elicitation-1", "sampling-2", ... */
export const inputKey = (method: ClientRequestMethod, n: number): string => `${KEY_PREFIX[method]}-${n}`;
/** A server's own inputRequests key that is passed on as it is: short and printable. */
const SERVER_KEY = /^[\x21-\x7e]{1,128}$/;

/** Checks every answer given for an open request before any is delivered: -32602 naming the first bad one. */
export function checkAnswers(
  open: ReadonlyMap<string, { method: ClientRequestMethod; params: Record<string, unknown> }>,
  responses: unknown,
  retry: string,
): [string, Record<string, unknown>][] {
  if (responses !== undefined && !isPlainObject(responses))
    throw new McpError(JSONRPC_CODES.INVALID_PARAMS, 'params.inputResponses must be an object keyed by the inputRequests keys.');
  const given = Object.entries(responses ?? {}).filter(([key]) => open.has(key));
  for (const [key, answer] of given) {
    const asked = open.get(key)!;
    const problem = answerProblem(asked.method, asked.params, answer);
    if (problem)
      throw new McpError(
        JSONRPC_CODES.INVALID_PARAMS,
        `inputResponses["${key}"] is not a valid answer to ${asked.method}: ${problem}. Nothing was delivered; ${retry}.`,
      );
  }
  return given as [string, Record<string, unknown>][];
}

interface Settle<T> {
  resolve(value: T): void;
  reject(err: unknown): void;
}

/**
 * A request waiting for its answer: settled once through `settle`, or, when the signal aborts
 * first, withdrawn (`onWithdraw` runs, then the answer rejects with the signal's reason). The abort
 * listener goes once it is settled. Every wait for a client's answer uses it (open requests, a
 * session's requests, a call's time limit for its caller).
 */
export function awaitAnswer<T>(signal: AbortSignal, onWithdraw: () => void): { answer: Promise<T>; settle: Settle<T> } {
  let settle!: Settle<T>;
  const answer = new Promise<T>((resolve, reject) => {
    const withdraw = () => {
      onWithdraw();
      reject(signal.reason);
    };
    const done = () => signal.removeEventListener('abort', withdraw);
    settle = {
      resolve: (value) => {
        done();
        resolve(value);
      },
      reject: (err) => {
        done();
        reject(err);
      },
    };
    if (signal.aborted) return withdraw();
    signal.addEventListener('abort', withdraw, { once: true });
  });
  return { answer, settle };
}

interface Asked {
  method: ClientRequestMethod;
  params: Record<string, unknown>;
  resolve(answer: Record<string, unknown>): void;
  reject(err: unknown): void;
}

/**
 * A call's requests put to its client and not yet answered, by inputRequests key: each holds the
 * MCP server's waiting request, settled by the client's answer, or withdrawn by the server.
 */
export class OpenRequests {
  readonly byKey = new Map<string, Asked>();
  private count = 0;

  /** `onChange` runs when a request is asked, answered or withdrawn. */
  constructor(private readonly onChange: () => void) {}

  get size(): number {
    return this.byKey.size;
  }

  /** `wanted`: the key the MCP server gave the request, used when it is free (else one of the gateway's). */
  ask(
    method: ClientRequestMethod,
    params: Record<string, unknown>,
    signal: AbortSignal,
    wanted?: string,
  ): Promise<Record<string, unknown>> {
    this.count += 1;
    const key = wanted !== undefined && SERVER_KEY.test(wanted) && !this.byKey.has(wanted) ? wanted : inputKey(method, this.count);
    const { answer, settle } = awaitAnswer<Record<string, unknown>>(signal, () => {
      this.byKey.delete(key);
      this.onChange();
    });
    if (!signal.aborted) {
      this.byKey.set(key, { method, params, ...settle });
      this.onChange();
    }
    return answer;
  }

  /** Delivers checked answers (checkAnswers) to the waiting server. */
  answer(given: [string, Record<string, unknown>][]): void {
    if (given.length === 0) return;
    for (const [key, answer] of given) {
      const asked = this.byKey.get(key);
      this.byKey.delete(key);
      asked?.resolve(answer);
    }
    this.onChange();
  }

  /** Every open request fails with this error (the call ended, the client went away). */
  failAll(err: unknown): void {
    const all = [...this.byKey.values()];
    this.byKey.clear();
    for (const asked of all) asked.reject(err);
  }

  /** The open requests as an inputRequests map. */
  list(): Record<string, { method: ClientRequestMethod; params: Record<string, unknown> }> {
    return Object.fromEntries([...this.byKey].map(([key, a]) => [key, { method: a.method, params: a.params }]));
  }
}
