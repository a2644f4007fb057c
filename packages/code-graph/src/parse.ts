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

function firstError(node: Node): Node | undefined {
  if (node.isError || node.isMissing) return node;
  if (!node.hasError) return undefined;
  for (const child of node.children) {
    if (!child) continue;
    const found = firstError(child);
    if (found) return found;
  }
  return node;
}

function dottedText(node: Node | null): string | undefined {
  if (!node) return undefined;
  if (node.type === 'identifier') return node.text;
  if (node.type === 'attribute') {
    const obj = dottedText(node.childForFieldName('object'));
    const attr = node.childForFieldName('attribute');
    return obj && attr ? `${obj}.${attr.text}` : undefined;
  }
  return undefined;
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
    const walk = (node: Node, scope: string, inClass: boolean, decorators: string[]): void => {
      switch (node.type) {
        case 'import_statement':
        case 'import_from_statement':
          out.imports.push(...parseImport(node));
          return;
        case 'decorated_definition': {
          const decos = node.namedChildren.filter((c) => c?.type === 'decorator').map((d) => d!.text.replace(/^@/, '').trim());
          const def = node.childForFieldName('definition');
          if (def) walk(def, scope, inClass, decos);
          return;
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
          if (body) for (const c of body.namedChildren) if (c) walk(c, qualname, isClass, []);
          return;
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
      for (const c of node.namedChildren) if (c) walk(c, scope, false, []);
    };
    // Class bodies keep inClass for their direct children only; nested statements inside methods do not.
    const walkTop = (node: Node, scope: string, inClass: boolean): void => walk(node, scope, inClass, []);
    for (const c of root.namedChildren) if (c) walkTop(c, '', false);
    return out;
  } finally {
    tree.delete();
  }
}
