/**
 * The pieces of stream-budget.ts that count bytes: where a server-sent event ends (EventSizer), the
 * stdio line filter (LineBudget) and the id of a dropped answer (idOfLine). The transports they
 * guard are tested against malicious servers in test/security/gateway-response-budget.test.ts and
 * gateway-stream-lifetime.test.ts.
 */
import { EventSizer, idOfLine, LineBudget } from '../src/downstream/stream-budget';

const bytes = (s: string) => Buffer.from(s, 'utf8');

describe('EventSizer', () => {
  it('measures each event up to its blank line, LF or CRLF, across chunk boundaries', () => {
    const sizer = new EventSizer();
    expect(sizer.add(bytes('data: abc\n\n'))).toBe(11);
    expect(sizer.add(bytes('data: a\r\n\r\n'))).toBe(11);
    // an event split anywhere, its CR and LF in different chunks
    const split = new EventSizer();
    expect(split.add(bytes('id: 1\r'))).toBe(6);
    expect(split.add(bytes('\ndata: xy\r'))).toBe(16);
    expect(split.add(bytes('\n\r'))).toBe(18);
    expect(split.add(bytes('\nevent: message\n'))).toBe(19);
    // the next event starts from nothing
    expect(split.add(bytes('data: z\n'))).toBe(23);
  });

  it('counts an event that never ends as it grows, and the largest of several in one chunk', () => {
    const sizer = new EventSizer();
    let largest = 0;
    for (let i = 0; i < 10; i++) largest = sizer.add(bytes(`data: ${'x'.repeat(100)}\n`));
    expect(largest).toBe(1070);
    const many = new EventSizer();
    expect(many.add(bytes(`data: ${'y'.repeat(50)}\n\ndata: z\n\n`))).toBe(58);
  });

  it('finds no boundary in lines ended by CR alone (the stream is cut sooner, never later)', () => {
    const sizer = new EventSizer();
    expect(sizer.add(bytes('data: a\r\rdata: b\r\r'))).toBe(18);
  });
});

describe('LineBudget', () => {
  const collect = (max: number) => {
    const dropped: { head: string; tail: string; bytes: number }[] = [];
    const lines = new LineBudget(max, (head, tail, n) => dropped.push({ head, tail, bytes: n }));
    const passed: string[] = [];
    const push = (s: string) => {
      const out = lines.push(bytes(s));
      if (out) passed.push(out.toString('utf8'));
    };
    return { dropped, passed, push };
  };

  it('passes whole lines only, in one piece, holding a partial line until it ends', () => {
    const { passed, push, dropped } = collect(100);
    push('{"a":1}\n{"b":');
    push('2}\n');
    push('{"c":3}\n{"d":4}\n');
    expect(passed).toEqual(['{"a":1}\n', '{"b":2}\n', '{"c":3}\n{"d":4}\n']);
    expect(dropped).toEqual([]);
  });

  it('drops a line over the budget as it arrives, reports its head and tail, and goes on with the next', () => {
    const { passed, push, dropped } = collect(100);
    push('{"result":{"text":"');
    for (let i = 0; i < 50; i++) push('x'.repeat(64));
    push('"},"jsonrpc":"2.0","id":7}\n{"ok":');
    push('true}\n');
    expect(passed).toEqual(['{"ok":true}\n']);
    expect(dropped).toHaveLength(1);
    expect(dropped[0].bytes).toBe(19 + 50 * 64 + 27);
    expect(dropped[0].head.startsWith('{"result":{"text":"xxx')).toBe(true);
    expect(idOfLine(dropped[0].head, dropped[0].tail)).toBe(7);
  });

  it('a line over the budget inside one chunk, beside lines within it', () => {
    const { passed, push, dropped } = collect(20);
    push(`{"a":1}\n{"jsonrpc":"2.0","id":12,"result":"${'z'.repeat(40)}"}\n{"b":2}\n`);
    expect(passed).toEqual(['{"a":1}\n{"b":2}\n']);
    expect(idOfLine(dropped[0].head, dropped[0].tail)).toBe(12);
  });

  it('a line of no call has no id', () => {
    expect(idOfLine('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"xxx', 'xxx"}}\n')).toBeUndefined();
  });
});
