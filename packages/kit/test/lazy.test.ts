import { lazy } from '../src/lazy';

describe('lazy', () => {
  it('makes its value at the first call only, and says whether it has', () => {
    let made = 0;
    const value = lazy(() => ({ n: ++made }));
    expect(made).toBe(0);
    expect(value.loaded).toBe(false);
    const first = value();
    expect(value()).toBe(first);
    expect(first).toEqual({ n: 1 });
    expect(made).toBe(1);
    expect(value.loaded).toBe(true);
  });

  it('tries again after a first use that threw (a module that failed to load is not kept as loaded)', () => {
    let calls = 0;
    const value = lazy(() => {
      if (++calls === 1) throw new Error('not yet');
      return 'ok';
    });
    expect(() => value()).toThrow('not yet');
    expect(value.loaded).toBe(false);
    expect(value()).toBe('ok');
    expect(calls).toBe(2);
  });
});
