/**
 * The channel's answer frames (src/channel.ts): a success envelope's result goes last with its
 * length announced, so the gateway can take its JSON text as it is; the frame stays plain JSON, and
 * the text is only taken from a line that keeps the form's promise.
 */
import { answerFrame, resultTextOf } from '../src/channel';

const take = (line: string) => resultTextOf(line, JSON.parse(line) as Record<string, unknown>);

describe('answer frames', () => {
  it('puts a success result last, its length up front, and stays the same JSON', () => {
    const body = { success: true, result: { path: '.', names: ['a "b"', 'ü 😀 \u2028'] }, timestamp: 't', service: 'x' };
    const line = answerFrame(3, { status: 200, body });
    expect(line.endsWith('\n')).toBe(true);
    const frame = JSON.parse(line) as Record<string, unknown>;
    expect(frame).toMatchObject({ id: 3, status: 200, body });
    expect(line.startsWith('{"id":3,"status":200,"resultLength":')).toBe(true);
    expect(take(line.trimEnd())).toBe(JSON.stringify(body.result));
  });

  it('writes the plain form for errors and results that are not JSON values', () => {
    const error = { success: false, error: 'no', code: 'NOT_FOUND' };
    expect(answerFrame(1, { status: 404, body: error })).toBe(`${JSON.stringify({ id: 1, status: 404, body: error })}\n`);
    const none = { success: true, result: undefined };
    expect(answerFrame(2, { status: 200, body: none })).toBe(`${JSON.stringify({ id: 2, status: 200, body: none })}\n`);
    expect(take(answerFrame(2, { status: 200, body: none }).trimEnd())).toBeUndefined();
  });

  it('takes scalar, string and array results as well', () => {
    for (const result of [42, 'text "q"', [1, { a: null }], null, false]) {
      const line = answerFrame(5, { status: 200, body: { success: true, result } }).trimEnd();
      expect(take(line)).toBe(JSON.stringify(result));
    }
  });

  it('takes nothing from a line that breaks the promise (wrong length, no result key there, another kind of value)', () => {
    const good = answerFrame(9, { status: 200, body: { success: true, service: 's', result: { a: 1 } } }).trimEnd();
    expect(take(good)).toBe('{"a":1}');
    expect(take(good.replace('"resultLength":7', '"resultLength":6'))).toBeUndefined();
    expect(take(good.replace('"resultLength":7', '"resultLength":99999'))).toBeUndefined();
    expect(take(good.replace('"resultLength":7', '"resultLength":-1'))).toBeUndefined();
    // a repeated key: the text taken is the last one's, the value JSON.parse reads
    const twice = '{"id":1,"status":200,"resultLength":4,"body":{"success":true,"result":{"x":"}"},"z":1,"result":"ab"}}';
    expect(JSON.parse(twice).body.result).toBe('ab');
    expect(take(twice)).toBe('"ab"');
    const mismatch = '{"id":1,"status":200,"resultLength":7,"body":{"success":true,"result":[1],"other":{"result":{"a":1}}}}';
    expect(take(mismatch)).toBeUndefined(); // the parsed result is an array, the text an object
    // no resultLength: the plain form
    expect(take('{"id":1,"status":200,"body":{"success":true,"result":{"a":1}}}')).toBeUndefined();
  });
});
