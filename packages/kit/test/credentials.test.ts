import { bearerToken, FailureBrake, sameSecret } from '../src/credentials';

describe('credentials', () => {
  it('compares secrets of any length in constant time', () => {
    expect(sameSecret('abc', 'abc')).toBe(true);
    expect(sameSecret('abc', 'abd')).toBe(false);
    expect(sameSecret('abc', 'abcd')).toBe(false);
    expect(sameSecret('', '')).toBe(true);
  });

  it('reads a bearer token, and nothing else', () => {
    expect(bearerToken('Bearer abc.def')).toBe('abc.def');
    expect(bearerToken('bearer   tok  ')).toBe('tok');
    for (const bad of [undefined, '', 'Basic abc', 'Bearer', 'Bearer a b', `Bearer ${'x'.repeat(8193)}`])
      expect(bearerToken(bad)).toBeUndefined();
    expect(bearerToken(`Bearer ${'x'.repeat(8192)}`)).toHaveLength(8192);
  });

  it('brakes one client after maxFailures within the window, with Retry-After, and lets it go after', () => {
    const brake = new FailureBrake(3, 60_000);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) {
      expect(() => brake.check('a', 'tokens', t0 + i)).not.toThrow();
      brake.fail('a', t0 + i);
    }
    expect(() => brake.check('a', 'tokens', t0 + 10)).toThrow(expect.objectContaining({ code: 'RATE_LIMITED', retryAfter: 60 }));
    expect(() => brake.check('a', 'tokens', t0 + 10)).toThrow('Too many wrong tokens; try again in 60 s.');
    expect(() => brake.check('b', 'tokens', t0 + 10)).not.toThrow(); // other clients are not braked
    expect(() => brake.check('a', 'tokens', t0 + 60_001)).not.toThrow(); // the oldest failure aged out
  });

  it('tracks at most maxClients, forgetting the one that failed longest ago', () => {
    const brake = new FailureBrake(1, 60_000, 2);
    brake.fail('a', 1);
    brake.fail('b', 2);
    brake.fail('c', 3);
    expect(() => brake.check('a', 'x', 4)).not.toThrow();
    expect(() => brake.check('b', 'x', 4)).toThrow();
    expect(() => brake.check('c', 'x', 4)).toThrow();
  });
});
