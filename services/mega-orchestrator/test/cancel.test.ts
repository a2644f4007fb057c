/**
 * CallCancel (src/downstream/cancel.ts): a call's cancellation that makes an AbortSignal only when one
 * is read, and behaves as an AbortController's would whichever comes first (abort, listen, signal).
 */
import { CallCancel } from '../src/downstream/cancel';

const listener = () => {
  const l = { told: 0, handleEvent: () => void l.told++ };
  return l;
};

describe('CallCancel', () => {
  it('tells its listener once, without making a signal', () => {
    const cancel = new CallCancel();
    const l = listener();
    cancel.listen(l);
    expect(cancel.aborted).toBe(false);
    cancel.abort();
    cancel.abort();
    expect(l.told).toBe(1);
    expect(cancel.aborted).toBe(true);
    expect((cancel as unknown as { controller?: AbortController }).controller).toBeUndefined();
  });

  it('tells a listener at once when the call is already aborted', () => {
    const cancel = new CallCancel();
    cancel.abort();
    const l = listener();
    cancel.listen(l);
    expect(l.told).toBe(1);
  });

  it('tells no listener that was taken back, first or later', () => {
    const cancel = new CallCancel();
    const first = listener();
    const second = listener();
    cancel.listen(first);
    cancel.listen(second);
    cancel.unlisten(first);
    cancel.unlisten(second);
    cancel.abort();
    expect([first.told, second.told]).toEqual([0, 0]);
  });

  it('tells every listener when there are several (the later ones through the signal)', () => {
    const cancel = new CallCancel();
    const ls = [listener(), listener(), listener()];
    for (const l of ls) cancel.listen(l);
    cancel.abort('why');
    expect(ls.map((l) => l.told)).toEqual([1, 1, 1]);
    expect(cancel.signal.reason).toBe('why');
  });

  it('makes a signal that follows it: read before the abort, or after it with the same reason', () => {
    const before = new CallCancel();
    const signal = before.signal;
    expect(before.signal).toBe(signal);
    expect(signal.aborted).toBe(false);
    let heard = 0;
    signal.addEventListener('abort', () => heard++);
    const reason = new Error('the client went away');
    before.abort(reason);
    expect([signal.aborted, signal.reason, heard]).toEqual([true, reason, 1]);

    const after = new CallCancel();
    after.abort(reason);
    expect([after.signal.aborted, after.signal.reason]).toEqual([true, reason]);
  });

  it('gives the signal an AbortError when aborted without a reason, as AbortController does', () => {
    const cancel = new CallCancel();
    cancel.abort();
    const controller = new AbortController();
    controller.abort();
    expect((cancel.signal.reason as DOMException).name).toBe('AbortError');
    expect((cancel.signal.reason as DOMException).name).toBe((controller.signal.reason as DOMException).name);
  });
});
