import { parseSearchQuery, toFts5Match } from '../src/query';

describe('search query parsing', () => {
  it('turns words, phrases, OR and exclusions into FTS5 strings only', () => {
    expect(toFts5Match(parseSearchQuery('blue whale'))).toBe('("blue") AND ("whale")');
    expect(toFts5Match(parseSearchQuery('"blue whale" OR dolphin'))).toBe('("blue whale" OR "dolphin")');
    expect(toFts5Match(parseSearchQuery('animal -cat -"big dog"'))).toBe('(("animal")) NOT ("cat" OR "big dog")');
    expect(toFts5Match(parseSearchQuery('NEAR(a b, 3) col:x*'))).toBe('("NEAR") AND ("a") AND ("b") AND ("3") AND ("col") AND ("x")');
    expect(toFts5Match(parseSearchQuery('"unterminated phrase'))).toBe('("unterminated phrase")');
    expect(toFts5Match(parseSearchQuery('OR a OR'))).toBe('("a")');
    expect(toFts5Match(parseSearchQuery('café naïve 東京'))).toBe('("café") AND ("naïve") AND ("東京")');
  });

  it('refuses queries without words and queries with too many terms', () => {
    for (const q of ['"', '*', '- -', '-only', ':::', '()']) expect(() => parseSearchQuery(q)).toThrow(/no words/);
    expect(() => parseSearchQuery(Array.from({ length: 33 }, (_, i) => `w${i}`).join(' '))).toThrow(/at most 32/);
  });
});
