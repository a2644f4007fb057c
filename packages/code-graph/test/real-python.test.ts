import { buildGraph, parsePython, type SourceFile } from '../src';

// Regression: resolving `x.lower()` after `x = x.strip()` recursed without end, and the parser's own
// walk recursed once per nesting level; both overflowed the stack on ordinary files.

async function graphOf(files: Record<string, string>, rootPackage?: string) {
  const parsed: SourceFile[] = [];
  for (const [path, text] of Object.entries(files)) parsed.push({ path, parsed: await parsePython(text) });
  return buildGraph(parsed, { rootPackage });
}

const callTargets = (g: Awaited<ReturnType<typeof graphOf>>, src: string) =>
  g.edges.filter((e) => e.kind === 'calls' && e.src === src).map((e) => e.dst ?? `?${e.target}`);

describe('real and hostile Python', () => {
  it('resolves self-referential and mutual local assignments without looping', async () => {
    const g = await graphOf({
      'm.py': [
        'class Text:',
        '    def clean(self):',
        '        return self',
        '',
        'def f(x):',
        '    x = x.strip()',
        '    x.lower()',
        '    a = b.c()',
        '    b = a.d()',
        '    b.e()',
        '    t = Text()',
        '    t.clean()',
        '    u = u()',
        '    u.v()',
        '',
      ].join('\n'),
    });
    expect(callTargets(g, 'm.f')).toEqual(['?x.strip', '?x.lower', '?b.c', '?a.d', '?b.e', 'm.Text', 'm.Text.clean', '?u', '?u.v']);
  });

  it('finds methods inherited from a class in a file indexed later', async () => {
    const g = await graphOf({
      'a.py': 'from z import Base\n\nclass Child(Base):\n    def run(self):\n        self.helper()\n',
      'z.py': 'class Base:\n    def helper(self):\n        pass\n',
    });
    expect(callTargets(g, 'a.Child.run')).toEqual(['z.Base.helper']);
  });

  it('names modules after the root package when the root is one', async () => {
    const g = await graphOf({ '__init__.py': 'from .decoder import load\n', 'decoder.py': 'def load():\n    pass\n' }, 'json');
    expect(g.nodes.map((n) => n.id).sort()).toEqual(['json', 'json.decoder', 'json.decoder.load']);
    expect(g.edges.find((e) => e.kind === 'imports')).toMatchObject({ src: 'json', dst: 'json.decoder' });
  });

  it.each([
    ['parentheses', (n: number) => `x = ${'('.repeat(n)}1${')'.repeat(n)}\n`, 0],
    ['a + chain', (n: number) => `x = ${Array(n).fill('a').join(' + ')}\n`, 0],
    ['attribute chain', (n: number) => `y = a${'.b'.repeat(n)}()\n`, 1],
    ['lists', (n: number) => `y = ${'['.repeat(n)}${']'.repeat(n)}\n`, 0],
    ['calls', (n: number) => `y = ${'f('.repeat(n / 10)}${')'.repeat(n / 10)}\n`, 10_000],
  ])('walks %s nested 100,000 deep without recursion', async (_label, source, calls) => {
    const r = await parsePython(source(100_000));
    expect(r.error).toBeUndefined();
    expect(r.calls).toHaveLength(calls);
  });

  it('reports where a syntax error is, not the ERROR node spanning the file', async () => {
    // valid Python (a dedent inside parentheses, from the stdlib's test_compile.py) that tree-sitter-python refuses
    const source = [
      'import os',
      '',
      'class A:',
      '    # c',
      '',
      '    def g(self):',
      '        pass',
      '',
      'def f():',
      '    (bar.',
      'baz)',
      '',
    ];
    const r = await parsePython(source.join('\n'));
    expect(r.error).toEqual({ line: 10, column: 5, message: 'syntax error near "(bar."' });
  });
});
