/**
 * A tools/call answer stitched from the result text a channel answer brings (src/mcp/answer-text.ts):
 * the text goes out as it came (not serialized again), and only for a result nothing has changed since.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { rpcAnswerText } from '../src/mcp/answer-text';
import { carryResultText, withResultText } from '../src/downstream/tool-result';

const noted = (text: string, wrapped = false): CallToolResult => {
  const value = JSON.parse(text) as unknown;
  return withResultText(
    {
      content: [{ type: 'text', text }],
      structuredContent: wrapped ? { result: value } : (value as Record<string, unknown>),
      isError: false,
    },
    text,
    wrapped,
  );
};

describe('rpcAnswerText', () => {
  it('writes the noted text itself as structuredContent and escaped as the text content', () => {
    // spacing JSON.stringify would not write: proof that the text was not serialized again
    const text = '{ "a": [1, 2], "s": "x\\"y" }';
    const out = rpcAnswerText({ jsonrpc: '2.0', id: 'r-1', result: noted(text) });
    expect(out).toContain(`"structuredContent":${text}`);
    expect(JSON.parse(out)).toEqual({
      jsonrpc: '2.0',
      id: 'r-1',
      result: { content: [{ type: 'text', text }], structuredContent: { a: [1, 2], s: 'x"y' }, isError: false },
    });
  });

  it('writes what JSON.stringify writes for the text JSON.stringify wrote (object and wrapped scalar results)', () => {
    for (const [value, wrapped] of [
      [{ path: '.', entries: [{ name: 'ü "q" \u2028 😀' }] }, false],
      [42, true],
      [['a', null], true],
    ] as const) {
      const text = JSON.stringify(value);
      const payload = { jsonrpc: '2.0', id: 7, result: noted(text, wrapped) };
      expect(rpcAnswerText(payload)).toBe(JSON.stringify(payload));
    }
  });

  it('stitches a 2026-07-28 copy that leads with resultType "complete" (carryResultText), and only that', () => {
    const text = '{ "a": 1 }';
    const original = noted(text);
    const typed = carryResultText(original, { resultType: 'complete', ...original });
    const out = rpcAnswerText({ jsonrpc: '2.0', id: 2, result: typed });
    expect(out).toContain(`"structuredContent":${text}`);
    expect(JSON.parse(out).result).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text }],
      structuredContent: { a: 1 },
      isError: false,
    });
    const other = carryResultText(original, { resultType: 'input_required', ...original });
    expect(rpcAnswerText({ jsonrpc: '2.0', id: 2, result: other })).toBe(JSON.stringify({ jsonrpc: '2.0', id: 2, result: other }));
    const notNoted = carryResultText({ content: [], isError: false }, { resultType: 'complete' });
    expect(rpcAnswerText({ jsonrpc: '2.0', id: 2, result: notNoted })).toBe(JSON.stringify({ jsonrpc: '2.0', id: 2, result: notNoted }));
  });

  it('serializes a noted result that was changed since, and anything not noted, with JSON.stringify', () => {
    const text = '{ "a": 1 }';
    const changes: ((r: CallToolResult) => void)[] = [
      (r) => (r.structuredContent = { a: 2 }),
      (r) => (r.content = [{ type: 'text', text: 'other' }]),
      (r) => ((r.content[0] as { text: string }).text = 'other'),
      (r) => r.content.push({ type: 'text', text: 'more' }),
      (r) => (r._meta = { note: 1 }),
      (r) => (r.isError = true),
    ];
    for (const change of changes) {
      const result = noted(text);
      change(result);
      const payload = { jsonrpc: '2.0', id: 1, result };
      expect(rpcAnswerText(payload)).toBe(JSON.stringify(payload));
    }
    const plain = { jsonrpc: '2.0', id: 1, result: { content: [], isError: false } };
    expect(rpcAnswerText(plain)).toBe(JSON.stringify(plain));
    const error = { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'no' } };
    expect(rpcAnswerText(error)).toBe(JSON.stringify(error));
    const withExtra = { jsonrpc: '2.0', id: 1, result: noted(text), extra: true };
    expect(rpcAnswerText(withExtra)).toBe(JSON.stringify(withExtra));
  });
});
