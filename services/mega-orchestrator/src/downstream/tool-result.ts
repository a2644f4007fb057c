/**
 * A tool's answer in MCP's terms, read at each downstream's edge (issue 29): what the gateway's MCP
 * clients get is the tool's `CallToolResult`, made once where the answer comes in, not guessed later
 * from the fleet's envelope: a kit service's envelope result made one here (kit-answers.ts reads its
 * answers), an MCP server's own result as it sent it (mcp/answers.ts). A result whose text content is
 * the JSON text a channel answer brought is noted, so that the answer goes out without serializing
 * the result again (mcp/answer-text.ts).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isPlainObject } from '@mcp-fleet/kit';

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
