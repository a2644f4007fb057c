/**
 * A kit service's answers read where they come in (its REST routes and channel, http-client.ts): each
 * operation's typed value (../downstream.ts: Answer), its shape checked here, so that what the
 * registry and the protocol read is MCP's result or nothing; a tool call's envelope read as MCP's
 * result (tool-result.ts); a JSON-RPC error an error envelope carries (a gateway behind the gateway)
 * as the answer's rpcError. The answer's status and envelope stay as the service sent them.
 */
import type { CallToolResult, CompleteResult, GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { isPlainObject } from '@mcp-fleet/kit';
import type { Answer, DownstreamAnswer, Health, ListName, ListPage, RpcError, ToolAnswer } from './downstream';
import { toolResultOf } from './tool-result';

/** The JSON-RPC error an MCP server answered, as the fleet's error envelope carries it (details.mcpError). */
function rpcErrorOf(envelope: unknown): RpcError | undefined {
  const e = isPlainObject(envelope) && isPlainObject(envelope.details) ? envelope.details.mcpError : undefined;
  return isPlainObject(e) && typeof e.code === 'number' && typeof e.message === 'string'
    ? { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) }
    : undefined;
}

/** An error answer with the JSON-RPC error its envelope carries (details.mcpError) as rpcError; else as it came. */
function failed<T>(answer: DownstreamAnswer): Answer<T> {
  if (answer.status < 400) return answer;
  const rpcError = rpcErrorOf(answer.json);
  return rpcError ? { ...answer, rpcError } : answer;
}

/** An answer whose 200 body passes `check` has it as its value; any other is a failure (failed). */
function reader<T>(check: (json: Record<string, unknown>) => T | undefined): (answer: DownstreamAnswer) => Answer<T> {
  return (answer) => {
    const value = answer.status === 200 && isPlainObject(answer.json) ? check(answer.json) : undefined;
    return value === undefined ? failed<T>(answer) : { ...answer, value };
  };
}

/** GET /health: answered 200 (its `status` word, if any); the body need not be an object. */
export function healthAnswer(answer: DownstreamAnswer): Answer<Health> {
  if (answer.status !== 200) return answer;
  const status = (answer.json as { status?: unknown } | undefined)?.status;
  return { ...answer, value: typeof status === 'string' ? { status } : {} };
}

const listReaders = Object.fromEntries(
  (['tools', 'prompts', 'resources', 'resourceTemplates'] as const).map((kind) => [
    kind,
    reader<ListPage>((json) => (Array.isArray(json[kind]) ? { items: json[kind], more: json.more === true } : undefined)),
  ]),
) as Record<ListName, (answer: DownstreamAnswer) => Answer<ListPage>>;

/** A list's route: `{<kind>: [...], more?}`. */
export function listAnswer(kind: ListName): (answer: DownstreamAnswer) => Answer<ListPage> {
  return listReaders[kind];
}

/** POST /prompts/get: `{messages: [...]}`. */
export const promptAnswer = reader<GetPromptResult>((json) => (Array.isArray(json.messages) ? (json as GetPromptResult) : undefined));

/** POST /resources/read: `{contents: [...]}`. */
export const readAnswer = reader<ReadResourceResult>((json) => (Array.isArray(json.contents) ? (json as ReadResourceResult) : undefined));

/** POST /completion/complete: `{completion: {values: [...]}}`. */
export const completeAnswer = reader<CompleteResult>((json) =>
  isPlainObject(json.completion) && Array.isArray(json.completion.values) ? (json as CompleteResult) : undefined,
);

/** POST /resources/subscribe and /unsubscribe: 200 is agreed. */
export function doneAnswer(answer: DownstreamAnswer): Answer<true> {
  return answer.status === 200 ? { ...answer, value: true } : failed<true>(answer);
}

/**
 * POST /tools/call: its success envelope's result as the tool's result (toolResultOf); an envelope
 * that carries an MCP server's own result (`mcp`: a gateway behind the gateway) that result, its
 * isError as the envelope reads; the JSON-RPC error an error envelope carries as rpcError. Anything
 * else (not an envelope, too large) as it came: the dispatcher makes that call's error of it.
 */
export function toolAnswer(answer: DownstreamAnswer): ToolAnswer {
  const envelope = answer.json;
  if (!isPlainObject(envelope) || typeof envelope.success !== 'boolean') return answer;
  const ok = envelope.success && answer.status < 400;
  const passed = envelope.mcp;
  if (isPlainObject(passed) && Array.isArray(passed.content))
    return { ...failed(answer), result: { ...(passed as CallToolResult), isError: !ok } };
  if (ok) return { ...answer, result: toolResultOf(envelope.result, answer.resultText) };
  return failed(answer);
}
