import { markerWatch } from '../src/support';

describe('markerWatch', () => {
  it('fires on the chunk that completes the marker, also when the marker is split between chunks', () => {
    const whole = markerWatch('fleet ready:');
    expect(['starting...\n', 'fleet ready: 24/24 healthy\n'].map(whole)).toEqual([false, true]);
    const split = markerWatch('fleet ready:');
    expect(['x fleet re', 'a', 'dy: 24/24'].map(split)).toEqual([false, false, true]);
  });

  it('fires once: chunks after it, the marker again included, are false', () => {
    const watch = markerWatch('ready');
    expect(['ready', 'ready', 'more'].map(watch)).toEqual([true, false, false]);
  });

  it('does not see a marker that never came, however the chunks fall', () => {
    const watch = markerWatch('fleet ready:');
    expect(['fleet rea', 'dy', ' :', 'fleet ready', ';'].map(watch)).toEqual([false, false, false, false, false]);
    const one = markerWatch('!');
    expect(['a', 'b!'].map(one)).toEqual([false, true]);
  });

  it('finds the marker after megabytes of output, split between the last two chunks', () => {
    const watch = markerWatch('end');
    const big = 'x'.repeat(1_000_000);
    for (let i = 0; i < 200; i++) expect(watch(big)).toBe(false);
    expect(watch('en')).toBe(false);
    expect(watch('d')).toBe(true);
  });
});
