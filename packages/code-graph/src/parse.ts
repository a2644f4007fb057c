import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Language, Parser, type Node } from 'web-tree-sitter';

export interface ParsedImport {
  /** Dotted module text as written (`a.b`), or null for `from . import x`. */
  module: string | null;
  /** Leading dots of a relative import (0 for absolute). */
  level: number;
  /** `from m import a as b` => [{name:'a', alias:'b'}]; `import a.b as c` => [] with alias on the import. */
  names: { name: string; alias?: string }[];
  alias?: string;
  line: number;
}

export interface ParsedDef {
  kind: 'class' | 'function' | 'method';
  name: string;
  /** Dotted path inside the module: `C.m`, `f`, `f.inner`. */
  qualname: string;
  line: number;
  endLine: number;
  bases: string[];
  params: string[];
  decorators: string[];
  docstring?: string;
}

export interface ParsedCall {
  /** qualname of the enclosing def, or '' for module level. */
  caller: string;
  /** Callee as written: `f`, `self.m`, `mod.f`, `a.b.c`; complex expressions are skipped. */
  callee: string;
  line: number;
}

/** `x = Name(...)` inside a scope: lets `x.method()` resolve when Name is a project class. */
export interface ParsedAssign {
  scope: string;
  name: string;
  /** The called constructor as written. */
  value: string;
}

export interface ParsedFile {
  defs: ParsedDef[];
  assigns?: ParsedAssign[];
  imports: ParsedImport[];
  calls: ParsedCall[];
  lines: number;
  /** Set when the file does not parse; the rest is then empty. */
  error?: { line: number; column: number; message: string };
}

let parserPromise: Promise<Parser> | undefined;

/** One parser per process; the grammar is the prebuilt tree-sitter-python.wasm from npm (no native build). */
function getParser(): Promise<Parser> {
  parserPromise ??= (async () => {
    const require = createRequire(__filename);
    await Parser.init();
    const lang = await Language.load(await readFile(require.resolve('tree-sitter-python/tree-sitter-python.wasm')));
    const parser = new Parser();
    parser.setLanguage(lang);
    return parser;
  })();
  return parserPromise;
}

/**
 * Where the first syntax error is: follow the first erroneous child down to the innermost error node
 * (an ERROR node can span the whole file while the mistake is one token). Iterative: a hostile file
 * may nest without limit.
 */
function firstError(root: Node): Node | undefined {
  if (!root.hasError) return undefined;
  let node = root;
  for (;;) {
    if (node.isMissing) return node;
    const next = node.children.find((c) => c?.hasError || c?.isMissing);
    if (!next) return node;
    node = next;
  }
}

/** `a.b.c` as written, or undefined for anything but names and attribute chains (iterative: chains may be long). */
function dottedText(node: Node | null): string | undefined {
  const parts: string[] = [];
  let cur = node;
  while (cur?.type === 'attribute') {
    const attr = cur.childForFieldName('attribute');
    if (!attr) return undefined;
    parts.push(attr.text);
    cur = cur.childForFieldName('object');
  }
  if (cur?.type !== 'identifier') return undefined;
  parts.push(cur.text);
  return parts.reverse().join('.');
}

function docstringOf(body: Node | null): string | undefined {
  const first = body?.namedChildren[0];
  if (first?.type !== 'expression_statement') return undefined;
  const str = first.namedChildren[0];
  if (str?.type !== 'string') return undefined;
  return str.text
    .replace(/^[rubfRUBF]*("""|'''|"|')/, '')
    .replace(/("""|'''|"|')$/, '')
    .trim()
    .slice(0, 500);
}

function parseImport(node: Node): ParsedImport[] {
  const line = node.startPosition.row + 1;
  if (node.type === 'import_statement') {
    return node.childrenForFieldName('name').flatMap((n) => {
      if (!n) return [];
      if (n.type === 'aliased_import') {
        const mod = n.childForFieldName('name')?.text;
        return mod ? [{ module: mod, level: 0, names: [], alias: n.childForFieldName('alias')?.text, line }] : [];
      }
      return [{ module: n.text, level: 0, names: [], line }];
    });
  }
  // import_from_statement
  const modNode = node.childForFieldName('module_name');
  let module: string | null = null;
  let level = 0;
  if (modNode?.type === 'relative_import') {
    level = (modNode.namedChildren.find((c) => c?.type === 'import_prefix')?.text ?? '').length;
    module = modNode.namedChildren.find((c) => c?.type === 'dotted_name')?.text ?? null;
  } else if (modNode) {
    module = modNode.text;
  }
  const names: ParsedImport['names'] = [];
  for (const n of node.childrenForFieldName('name')) {
    if (!n) continue;
    if (n.type === 'aliased_import') {
      names.push({ name: n.childForFieldName('name')?.text ?? '', alias: n.childForFieldName('alias')?.text });
    } else names.push({ name: n.text });
  }
  if (node.namedChildren.some((c) => c?.type === 'wildcard_import')) names.push({ name: '*' });
  return [{ module, level, names, line }];
}

/** Parse one Python source text into its definitions, imports and calls. */
export async function parsePython(source: string): Promise<ParsedFile> {
  const parser = await getParser();
  const tree = parser.parse(source);
  if (!tree) return { defs: [], imports: [], calls: [], lines: 0, error: { line: 1, column: 1, message: 'parser gave no tree' } };
  try {
    const root = tree.rootNode;
    const lines = source.split('\n').length;
    if (root.hasError) {
      const bad = firstError(root) ?? root;
      return {
        defs: [],
        imports: [],
        calls: [],
        lines,
        error: {
          line: bad.startPosition.row + 1,
          column: bad.startPosition.column + 1,
          message: bad.isMissing ? `syntax error: missing ${bad.type}` : `syntax error near ${JSON.stringify(bad.text.slice(0, 40))}`,
        },
      };
    }
    const out: ParsedFile = { defs: [], imports: [], calls: [], lines };
    // An explicit stack instead of recursion: real files nest expressions thousands of levels deep
    // (long `a + b + ...` chains), hostile ones without limit. Children are pushed in reverse so the
    // visit order (and so the order of defs and calls) is the source order.
    interface Frame {
      node: Node;
      scope: string;
      /** A direct child of a class body: its functions are methods. */
      inClass: boolean;
      decorators: string[];
    }
    const stack: Frame[] = [];
    const pushChildren = (nodes: (Node | null)[], scope: string, inClass: boolean): void => {
      for (let i = nodes.length - 1; i >= 0; i--) {
        const node = nodes[i];
        if (node) stack.push({ node, scope, inClass, decorators: [] });
      }
    };
    pushChildren(root.namedChildren, '', false);
    while (stack.length) {
      const { node, scope, inClass, decorators } = stack.pop()!;
      switch (node.type) {
        case 'import_statement':
        case 'import_from_statement':
          out.imports.push(...parseImport(node));
          continue;
        case 'decorated_definition': {
          const decos = node.namedChildren.filter((c) => c?.type === 'decorator').map((d) => d!.text.replace(/^@/, '').trim());
          const def = node.childForFieldName('definition');
          if (def) stack.push({ node: def, scope, inClass, decorators: decos });
          continue;
        }
        case 'class_definition':
        case 'function_definition': {
          const name = node.childForFieldName('name')?.text ?? '?';
          const qualname = scope ? `${scope}.${name}` : name;
          const isClass = node.type === 'class_definition';
          const body = node.childForFieldName('body');
          out.defs.push({
            kind: isClass ? 'class' : inClass ? 'method' : 'function',
            name,
            qualname,
            line: node.startPosition.row + 1,
            endLine: node.endPosition.row + 1,
            bases: isClass
              ? (node.childForFieldName('superclasses')?.namedChildren ?? []).map((b) => dottedText(b)).filter((b): b is string => !!b)
              : [],
            params: isClass
              ? []
              : (node.childForFieldName('parameters')?.namedChildren ?? []).map((p) =>
                  p?.type === 'identifier' ? p.text : (p?.namedChildren[0]?.text ?? ''),
                ),
            decorators,
            docstring: docstringOf(body),
          });
          // Class bodies keep inClass for their direct children only; nested statements inside methods do not.
          if (body) pushChildren(body.namedChildren, qualname, isClass);
          continue;
        }
        case 'assignment': {
          const left = node.childForFieldName('left');
          const right = node.childForFieldName('right');
          const ctor = right?.type === 'call' ? dottedText(right.childForFieldName('function')) : undefined;
          if (left?.type === 'identifier' && ctor) (out.assigns ??= []).push({ scope, name: left.text, value: ctor });
          break;
        }
        case 'call': {
          const callee = dottedText(node.childForFieldName('function'));
          if (callee) out.calls.push({ caller: scope, callee, line: node.startPosition.row + 1 });
          break;
        }
      }
      pushChildren(node.namedChildren, scope, false);
    }
    return out;
  } finally {
    tree.delete();
  }
}
