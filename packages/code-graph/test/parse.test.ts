import { absoluteImportBase, findCycles, moduleNameOf, parsePython } from '../src';

describe('parsePython', () => {
  it('extracts imports, classes, methods, nested functions, decorators and calls', async () => {
    const r = await parsePython(
      [
        'import os.path as p, sys',
        'from ..pkg.mod import a as b, c',
        'from . import *',
        '@dataclass',
        'class A(Base, mod.Mixin):',
        '    """Doc."""',
        '    def m(self, x):',
        '        def inner():',
        '            return p.join(x)',
        '        return self.n(inner())',
        '',
        'f(1)',
      ].join('\n'),
    );
    expect(r.error).toBeUndefined();
    expect(r.imports).toEqual([
      { module: 'os.path', level: 0, names: [], alias: 'p', line: 1 },
      { module: 'sys', level: 0, names: [], line: 1 },
      { module: 'pkg.mod', level: 2, names: [{ name: 'a', alias: 'b' }, { name: 'c' }], line: 2 },
      { module: null, level: 1, names: [{ name: '*' }], line: 3 },
    ]);
    expect(r.defs.map((d) => `${d.kind}:${d.qualname}`)).toEqual(['class:A', 'method:A.m', 'function:A.m.inner']);
    expect(r.defs[0]).toMatchObject({ bases: ['Base', 'mod.Mixin'], decorators: ['dataclass'], docstring: 'Doc.', line: 5, endLine: 10 });
    expect(r.defs[1].params).toEqual(['self', 'x']);
    expect(r.calls).toEqual([
      { caller: 'A.m.inner', callee: 'p.join', line: 9 },
      { caller: 'A.m', callee: 'self.n', line: 10 },
      { caller: 'A.m', callee: 'inner', line: 10 },
      { caller: '', callee: 'f', line: 12 },
    ]);
  });

  it('reports a syntax error with its position', async () => {
    const r = await parsePython('x = 1\ndef broken(:\n    pass\n');
    expect(r.error).toMatchObject({ line: 2 });
    expect(r.defs).toEqual([]);
  });

  it('names modules and resolves relative import bases', () => {
    expect(moduleNameOf('a/b/c.py')).toBe('a.b.c');
    expect(moduleNameOf('a/b/__init__.py')).toBe('a.b');
    expect(absoluteImportBase({ module: 'x', level: 1, names: [], line: 1 }, 'a.b.c', false)).toBe('a.b.x');
    expect(absoluteImportBase({ module: 'x', level: 1, names: [], line: 1 }, 'a.b', true)).toBe('a.b.x');
    expect(absoluteImportBase({ module: null, level: 2, names: [], line: 1 }, 'a.b.c', false)).toBe('a');
    expect(absoluteImportBase({ module: 'x', level: 5, names: [], line: 1 }, 'a.b', false)).toBeNull();
  });

  it('finds every elementary cycle once', () => {
    const adj = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['a', 'c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['d'])],
    ]);
    expect(findCycles(adj).cycles).toEqual([['a', 'b'], ['a', 'b', 'c'], ['d']]);
  });
});
