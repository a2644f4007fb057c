import { iso } from '../src/lib/context';
import { completeUtf8Length, looksBinary } from '../src/lib/content';
import { compileGlob } from '../src/lib/glob';

describe('compileGlob', () => {
  const cases: [string, string, boolean][] = [
    ['*.ts', 'index.ts', true],
    ['*.ts', 'index.tsx', false],
    ['*.ts', 'dir/index.ts', false],
    ['?.md', 'a.md', true],
    ['?.md', 'ab.md', false],
    ['*.{ts,js}', 'x.js', true],
    ['*.{ts,js}', 'x.py', false],
    ['[a-c]*', 'beta', true],
    ['[!a-c]*', 'beta', false],
    ['src/**/*.ts', 'src/a.ts', true],
    ['src/**/*.ts', 'src/x/y/a.ts', true],
    ['src/**/*.ts', 'lib/a.ts', false],
    ['src/*.ts', 'src/x/a.ts', false],
    ['**', 'any/thing', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
    ['[unclosed', '[unclosed', true],
  ];
  it.each(cases)('%s on %s -> %s', (pattern, input, expected) => {
    expect(compileGlob(pattern, true).test(input)).toBe(expected);
  });

  it('matches case-insensitively unless asked, and knows whether it needs the path', () => {
    expect(compileGlob('README*', false).test('readme.md')).toBe(true);
    expect(compileGlob('README*', true).test('readme.md')).toBe(false);
    expect(compileGlob('*.ts', true).matchesPath).toBe(false);
    expect(compileGlob('./src/*.ts', true).matchesPath).toBe(true);
  });

  it('answers patterns that make backtracking regexes run for ever (regression: ReDoS)', () => {
    // As a regex, /^(.*a){40}b$/ on 250 "a"s would not finish within the test timeout.
    expect(compileGlob(`${'*a'.repeat(40)}b`, true).test('a'.repeat(250))).toBe(false);
    expect(compileGlob(`${'*a'.repeat(40)}`, true).test('a'.repeat(250))).toBe(true);
  });

  it('refuses empty, huge and explosive patterns', () => {
    expect(() => compileGlob('', true)).toThrow(/empty/);
    expect(() => compileGlob('x'.repeat(300), true)).toThrow(/longer/);
    expect(() => compileGlob('{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}', true)).toThrow(/expand/);
  });
});

describe('UTF-8 helpers', () => {
  it('trims only an incomplete trailing character', () => {
    const euro = Buffer.from('a€');
    expect(completeUtf8Length(euro)).toBe(4);
    expect(completeUtf8Length(euro.subarray(0, 3))).toBe(1);
    expect(completeUtf8Length(euro.subarray(0, 2))).toBe(1);
    expect(completeUtf8Length(Buffer.from('abc'))).toBe(3);
  });

  it('calls NUL bytes and invalid UTF-8 binary, and text text', () => {
    expect(looksBinary(Buffer.from('plain text é'))).toBe(false);
    expect(looksBinary(Buffer.from([0x61, 0x00, 0x62]))).toBe(true);
    expect(looksBinary(Buffer.from([0xff, 0xfe, 0x41]))).toBe(true);
  });
});

describe('iso', () => {
  it('writes a file time as toISOString does, null for none or before 1970', () => {
    const times = [
      1,
      999,
      86_399_999,
      86_400_000,
      951_782_400_000,
      Date.UTC(2026, 10, 27, 23, 59, 59, 999),
      253_402_300_799_999,
      253_402_300_800_000,
    ];
    for (let i = 0; i < 2000; i++) times.push(1 + Math.floor(Math.random() * 8.64e15));
    for (const t of times) expect({ t, text: iso(new Date(t)) }).toEqual({ t, text: new Date(t).toISOString() });
    expect([iso(new Date(0)), iso(new Date(-1)), iso(new Date(Number.NaN))]).toEqual([null, null, null]);
  });
});
