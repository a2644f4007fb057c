import { headerPath, parseNumstat, withholdSections } from '../src/patch';

describe('reading git diff output per file', () => {
  it.each([
    ['diff --git a/x b/x', 'x'],
    ['diff --git a/a b/c b/a b/c', 'a b/c'],
    ['diff --git "a/tab\\tname" "b/tab\\tname"', 'tab\tname'],
    ['diff --git "a/q\\"uote\\\\" "b/q\\"uote\\\\"', 'q"uote\\'],
    ['diff --git "a/\\303\\274" "b/\\303\\274"', 'ü'],
  ])('reads the path of %j', (line, file) => {
    expect(headerPath(line)).toBe(file);
  });

  it.each([
    'diff --git a/x b/y',
    'diff --git a/.e',
    'diff --git a/.env b/.e',
    'diff --git "a/x" "b/y"',
    'diff --git "a/x',
    'diff --git x x',
  ])('cannot read %j (withheld)', (line) => {
    expect(headerPath(line)).toBeUndefined();
  });

  it('drops the sections of withheld files, and any section it cannot read', () => {
    const patch = [
      'diff --git a/ok.txt b/ok.txt',
      '+diff --git a/.env b/.env',
      'diff --git a/.env b/.env',
      '+SECRET',
      'diff --git a/broken b/other',
      '+HIDDEN',
      'diff --git a/last b/last',
      '+shown',
    ].join('\n');
    const out = withholdSections(patch, (f) => f === '.env');
    expect(out.text).toBe('diff --git a/ok.txt b/ok.txt\n+diff --git a/.env b/.env\ndiff --git a/last b/last\n+shown');
    expect(out.withheld).toEqual(['.env', '(a file whose name could not be read)']);
  });

  it('parses numstat -z, binary files included', () => {
    expect(parseNumstat('1\t2\ta b\0-\t-\tbin\0')).toEqual([
      { file: 'a b', insertions: 1, deletions: 2, binary: false },
      { file: 'bin', insertions: 0, deletions: 0, binary: true },
    ]);
  });
});
