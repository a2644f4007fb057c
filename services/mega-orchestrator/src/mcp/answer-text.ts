/**
 * A tools/call answer sent as text without serializing the tool's result again: a kit service's
 * channel answer brings the result's JSON text (DownstreamAnswer.resultText), which is the MCP
 * result's text content and, for an object, its structuredContent as it is. JSON.stringify of the
 * whole answer would serialize that result a second and a third time (issue 14).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

interface Known {
  text: string;
  content: unknown;
  structuredContent: unknown;
  /** structuredContent is {result: <the result>} (the result is not an object). */
  wrapped: boolean;
}

const known = new WeakMap<object, Known>();

/** Notes that `result`'s text content is `text`, the JSON of its structuredContent (or of its .result when wrapped). */
export function withResultText(result: CallToolResult, text: string, wrapped: boolean): CallToolResult {
  known.set(result, { text, content: result.content, structuredContent: result.structuredContent, wrapped });
  return result;
}

/** `to`, a copy of a noted result with `resultType` first (a 2026-07-28 answer), noted as well. */
export function carryResultText<T extends Record<string, unknown>>(from: CallToolResult, to: T): T {
  const k = known.get(from);
  if (k) known.set(to, k);
  return to;
}

/** A JSON-RPC answer as JSON text: stitched from a noted result that nothing has changed since, else JSON.stringify. */
export function rpcAnswerText(payload: Record<string, unknown>): string {
  const result = payload.result as Record<string, unknown> | undefined;
  const k = result !== null && typeof result === 'object' ? known.get(result) : undefined;
  if (k && unchanged(payload, result!, k)) {
    const structured = k.wrapped ? `{"result":${k.text}}` : k.text;
    const resultType = 'resultType' in result! ? '"resultType":"complete",' : '';
    return `{"jsonrpc":"2.0","id":${JSON.stringify(payload.id)},"result":{${resultType}"content":[{"type":"text","text":${JSON.stringify(k.text)}}],"structuredContent":${structured},"isError":false}}`;
  }
  return JSON.stringify(payload);
}

function unchanged(payload: Record<string, unknown>, result: Record<string, unknown>, k: Known): boolean {
  if (payload.jsonrpc !== '2.0' || Object.keys(payload).length !== 3 || !('id' in payload)) return false;
  // a 2026-07-28 answer leads with resultType "complete" (carryResultText)
  const keys = Object.keys(result);
  const typed = keys[0] === 'resultType';
  if (typed && result.resultType !== 'complete') return false;
  if (keys.length !== (typed ? 4 : 3) || result.isError !== false) return false;
  if (result.content !== k.content || result.structuredContent !== k.structuredContent) return false;
  const content = result.content as Record<string, unknown>[];
  if (content.length !== 1) return false;
  const block = content[0];
  return block.type === 'text' && block.text === k.text && Object.keys(block).length === 2;
}
