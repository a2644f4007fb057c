/**
 * A tool's answer in MCP's terms, read at each downstream's edge (issue 29): what the gateway's MCP
 * clients get is the tool's `CallToolResult`, made once where the answer comes in, not guessed later
 * from the fleet's envelope. A kit service answers its envelope (the REST callers' and the call
 * history's view, kept as it wrote it), read here as MCP's result; an MCP server's own result is
 * read in mcp/answers.ts. A result whose text content is the JSON text a channel answer brought is
 * noted, so that the answer goes out without serializing the result again (mcp/answer-text.ts).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isPlainObject } from '@mcp-fleet/kit';
import type { DownstreamAnswer, RpcError, ToolAnswer } from './downstream';

/** What is known of a noted result: its text, and the content and structuredContent it was noted with. */
export interface KnownText {
  text: string;
  content: unknown;
  structuredContent: unknown;
  /** structuredContent is {result: <the result>} (the result is not an object). */
  wrapped: boolean;
}

const known = new WeakMap<object, KnownText>();

/** Notes that `result`'s text content is `text`, the JSON of its structuredContent (or of its .result when wrapped). */
export function withResultText(result: CallToolResult, text: string, wrapped: boolean): CallToolResult {
  known.set(result, { text, content: result.content, structuredContent: result.structuredContent, wrapped });
  return result;
}

/** `to`, a copy of a noted result (a 2026-07-28 answer with `resultType` first), noted as well. */
export function carryResultText<T extends Record<string, unknown>>(from: CallToolResult, to: T): T {
  const k = known.get(from);
  if (k) known.set(to, k);
  return to;
}

/** What was noted of a result (withResultText), if anything. */
export function knownText(result: object): KnownText | undefined {
  return known.get(result);
}

/**
 * A successful tool result as MCP has it, from the fleet's envelope result: the result's JSON as the
 * text content (as the service wrote it when the answer brought that text) and the result as
 * structuredContent (an object as it is; anything else as `{result}`, since structuredContent is an
 * object).
 */
export function toolResultOf(result: unknown, resultText?: string): CallToolResult {
  const wrapped = !isPlainObject(result);
  const answer: CallToolResult = {
    content: [{ type: 'text', text: resultText ?? JSON.stringify(result) ?? 'null' }],
    structuredContent: wrapped ? { result } : result,
    isError: false,
  };
  return resultText !== undefined ? withResultText(answer, resultText, wrapped) : answer;
}

/** The JSON-RPC error an MCP server answered, as the fleet's error envelope carries it (details.mcpError). */
export function rpcErrorOf(envelope: unknown): RpcError | undefined {
  const e = isPlainObject(envelope) && isPlainObject(envelope.details) ? envelope.details.mcpError : undefined;
  return isPlainObject(e) && typeof e.code === 'number' && typeof e.message === 'string'
    ? { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) }
    : undefined;
}

/**
 * A kit service's answer read at its edge: an error envelope that carries an MCP server's JSON-RPC
 * error (a gateway behind the gateway) has it as the answer's rpcError; else the answer as it came.
 */
export function fleetAnswer(answer: DownstreamAnswer): DownstreamAnswer {
  if (answer.status < 400) return answer;
  const rpcError = rpcErrorOf(answer.json);
  return rpcError ? { ...answer, rpcError } : answer;
}

/**
 * A kit service's tool answer read at its edge: its success envelope's result as the tool's result
 * (toolResultOf); an envelope that carries an MCP server's own result (`mcp`: a gateway behind the
 * gateway) that result, its isError as the envelope reads; the JSON-RPC error an error envelope
 * carries as the answer's rpcError. Anything else (not an envelope, too large) as it came: the
 * dispatcher makes that call's error of it.
 */
export function fleetToolAnswer(answer: DownstreamAnswer): ToolAnswer {
  const envelope = answer.json;
  if (!isPlainObject(envelope) || typeof envelope.success !== 'boolean') return answer;
  const ok = envelope.success && answer.status < 400;
  const passed = envelope.mcp;
  if (isPlainObject(passed) && Array.isArray(passed.content))
    return { ...fleetAnswer(answer), result: { ...(passed as CallToolResult), isError: !ok } };
  if (ok) return { ...answer, result: toolResultOf(envelope.result, answer.resultText) };
  return fleetAnswer(answer);
}
