/**
 * A tools/call answer sent as text without serializing the tool's result again: a kit service's
 * channel answer brings the result's JSON text (DownstreamAnswer.resultText), which is the MCP
 * result's text content and, for an object, its structuredContent as it is. JSON.stringify of the
 * whole answer would serialize that result a second and a third time (issue 14). The result is
 * noted where the answer comes in (downstream/tool-result.ts).
 */
import { knownText, type KnownText } from '../downstream/tool-result';

/** A JSON-RPC answer as JSON text: stitched from a noted result that nothing has changed since, else JSON.stringify. */
export function rpcAnswerText(payload: Record<string, unknown>): string {
  const result = payload.result as Record<string, unknown> | undefined;
  const k = result !== null && typeof result === 'object' ? knownText(result) : undefined;
  if (k && unchanged(payload, result!, k)) {
    const structured = k.wrapped ? `{"result":${k.text}}` : k.text;
    const resultType = 'resultType' in result! ? '"resultType":"complete",' : '';
    return `{"jsonrpc":"2.0","id":${JSON.stringify(payload.id)},"result":{${resultType}"content":[{"type":"text","text":${JSON.stringify(k.text)}}],"structuredContent":${structured},"isError":false}}`;
  }
  return JSON.stringify(payload);
}

function unchanged(payload: Record<string, unknown>, result: Record<string, unknown>, k: KnownText): boolean {
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
