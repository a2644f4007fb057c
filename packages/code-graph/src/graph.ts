import type { ParsedFile, ParsedImport } from './parse';

export type NodeKind = 'module' | 'class' | 'function' | 'method';
export type EdgeKind = 'imports' | 'contains' | 'calls' | 'inherits';

export interface GraphNode {
  /** Fully qualified name: `pkg.mod`, `pkg.mod.Class.method`. */
  id: string;
  kind: NodeKind;
  name: string;
  module: string;
  file: string;
  line: number;
  endLine: number;
}

export interface GraphEdge {
  src: string;
  /** Resolved node id, or null when the target is outside the project (then `target` is the text as written). */
  dst: string | null;
  target: string;
  kind: EdgeKind;
  file: string;
  line: number;
}

export interface SourceFile {
  /** Path relative to the project root, forward slashes. */
  path: string;
  parsed: ParsedFile;
}

/**
 * `pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg`. With `rootPackage` (the project root
 * is itself a package, e.g. the stdlib's `json/`), names start with it: `decoder.py` -> `json.decoder`.
 */
export function moduleNameOf(relPath: string, rootPackage?: string): string {
  const parts = relPath.replace(/\.pyi?$/, '').split('/');
  if (parts[parts.length - 1] === '__init__') parts.pop();
  if (rootPackage) parts.unshift(rootPackage);
  return parts.join('.');
}

export interface BuildGraphOptions {
  /** The root directory's name when the root is a package itself (it holds `__init__.py`); see moduleNameOf. */
  rootPackage?: string;
}

function isPackageFile(relPath: string): boolean {
  return /(^|\/)__init__\.pyi?$/.test(relPath);
}

/** The absolute module an import statement names, with relative imports resolved against the importing module. */
export function absoluteImportBase(imp: ParsedImport, importer: string, importerIsPackage: boolean): string | null {
  if (imp.level === 0) return imp.module;
  const pkgParts = importer.split('.').filter(Boolean);
  if (!importerIsPackage) pkgParts.pop();
  const up = imp.level - 1;
  if (up > pkgParts.length) return null;
  const base = pkgParts.slice(0, pkgParts.length - up);
  if (imp.module) base.push(...imp.module.split('.'));
  return base.join('.');
}

/**
 * One file's name resolution: records its import edges, then answers "which project node does
 * this dotted name, written in scope `callerQual`, mean" (null when outside the project or unknown).
 * Nothing here recurses: a local `x = Name(...)` is followed one step, never through other locals,
 * so `x = x.strip()` or `a = b(); b = a()` cannot loop.
 */
function fileResolver(
  f: SourceFile,
  rootPackage: string | undefined,
  nodes: Map<string, GraphNode>,
  basesOf: Map<string, string[]>,
  resolveModule: (dotted: string) => string | null,
  edges: GraphEdge[],
): (text: string, callerQual: string) => string | null {
  const mod = moduleNameOf(f.path, rootPackage);
  const pkg = isPackageFile(f.path);
  // name visible at module level -> dotted target
  const scope = new Map<string, string>();
  for (const d of f.parsed.defs) if (!d.qualname.includes('.')) scope.set(d.name, `${mod}.${d.name}`);
  for (const imp of f.parsed.imports) {
    const base = absoluteImportBase(imp, mod, pkg);
    if (imp.names.length === 0) {
      if (!base) continue;
      const target = resolveModule(base);
      if (imp.alias) scope.set(imp.alias, base);
      else scope.set(base.split('.')[0], base.split('.')[0]);
      edges.push({ src: mod, dst: target, target: base, kind: 'imports', file: f.path, line: imp.line });
      continue;
    }
    for (const n of imp.names) {
      if (n.name === '*') {
        const target = base ? resolveModule(base) : null;
        edges.push({ src: mod, dst: target, target: base ?? '.', kind: 'imports', file: f.path, line: imp.line });
        continue;
      }
      const full = base ? `${base}.${n.name}` : n.name;
      scope.set(n.alias ?? n.name, full);
      // `from pkg import sub` imports the submodule when there is one, else the package itself.
      const asModule = nodes.get(full)?.kind === 'module' ? full : null;
      const target = asModule ?? (base ? resolveModule(base) : null);
      edges.push({ src: mod, dst: target, target: full, kind: 'imports', file: f.path, line: imp.line });
    }
  }
  // the first `name = Ctor(...)` of each scope
  const locals = new Map<string, string>();
  for (const a of f.parsed.assigns ?? []) {
    const key = `${a.scope}\0${a.name}`;
    if (!locals.has(key)) locals.set(key, a.value);
  }
  const existing = (dotted: string): string | null => (nodes.has(dotted) ? dotted : null);

  const resolveWithoutLocals = (parts: string[], callerQual: string): string | null => {
    const head = parts[0];
    if ((head === 'self' || head === 'cls') && parts.length >= 2) {
      // method of the enclosing class, or of one of its project base classes
      const classQual = callerQual.split('.').slice(0, -1).join('.');
      if (!classQual) return null;
      const member = parts.slice(1).join('.');
      const queue = [`${mod}.${classQual}`];
      const seen = new Set<string>();
      while (queue.length) {
        const cls = queue.shift()!;
        if (seen.has(cls)) continue;
        seen.add(cls);
        const hit = existing(`${cls}.${member}`);
        if (hit) return hit;
        queue.push(...(basesOf.get(cls) ?? []));
      }
      return null;
    }
    // nested definition visible from the caller's scope
    const text = parts.join('.');
    const callerParts = callerQual ? callerQual.split('.') : [];
    for (let n = callerParts.length; n > 0; n--) {
      const hit = existing(`${mod}.${callerParts.slice(0, n).join('.')}.${text}`);
      if (hit && nodes.get(hit)?.kind !== 'method') return hit;
    }
    return null;
  };
  const bound = (parts: string[]): string | null => {
    const target = scope.get(parts[0]);
    // an attribute of an imported module re-exported by a package __init__ is left unresolved
    return target ? existing([target, ...parts.slice(1)].join('.')) : null;
  };
  return (text, callerQual) => {
    const parts = text.split('.');
    const direct = resolveWithoutLocals(parts, callerQual);
    if (direct || parts[0] === 'self' || parts[0] === 'cls') return direct;
    const ctor = parts.length >= 2 ? locals.get(`${callerQual}\0${parts[0]}`) : undefined;
    if (ctor) {
      const ctorParts = ctor.split('.');
      const cls = resolveWithoutLocals(ctorParts, callerQual) ?? bound(ctorParts);
      if (cls && nodes.get(cls)?.kind === 'class') return existing([cls, ...parts.slice(1)].join('.'));
    }
    return bound(parts);
  };
}

/**
 * Build the project graph from parsed files: module, class, function and method nodes; imports
 * resolved to project modules (longest existing prefix), containment, inheritance and calls
 * resolved through local definitions, imported names, `self.`/`cls.` and module aliases.
 */
export function buildGraph(files: SourceFile[], options: BuildGraphOptions = {}): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const nodes = new Map<string, GraphNode>();
  const edges: GraphEdge[] = [];
  const ok = files.filter((f) => !f.parsed.error);
  for (const f of ok) {
    const mod = moduleNameOf(f.path, options.rootPackage);
    nodes.set(mod, {
      id: mod,
      kind: 'module',
      name: mod.split('.').pop() ?? mod,
      module: mod,
      file: f.path,
      line: 1,
      endLine: f.parsed.lines,
    });
    for (const d of f.parsed.defs) {
      const id = `${mod}.${d.qualname}`;
      nodes.set(id, { id, kind: d.kind, name: d.name, module: mod, file: f.path, line: d.line, endLine: d.endLine });
    }
  }
  const resolveModule = (dotted: string): string | null => {
    const parts = dotted.split('.');
    for (let n = parts.length; n > 0; n--) {
      const cand = parts.slice(0, n).join('.');
      if (nodes.get(cand)?.kind === 'module') return cand;
    }
    return null;
  };
  // Project base classes of each class, filled by the first pass so that `self.m()` finds methods
  // inherited from classes defined in files indexed later.
  const basesOf = new Map<string, string[]>();
  const resolvers = ok.map((f) => fileResolver(f, options.rootPackage, nodes, basesOf, resolveModule, edges));
  ok.forEach((f, i) => {
    const mod = moduleNameOf(f.path, options.rootPackage);
    for (const d of f.parsed.defs) {
      const id = `${mod}.${d.qualname}`;
      const parentQual = d.qualname.split('.').slice(0, -1).join('.');
      edges.push({ src: parentQual ? `${mod}.${parentQual}` : mod, dst: id, target: id, kind: 'contains', file: f.path, line: d.line });
      for (const b of d.bases) {
        const dst = resolvers[i](b, parentQual);
        edges.push({ src: id, dst, target: dst ?? b, kind: 'inherits', file: f.path, line: d.line });
        if (dst) basesOf.set(id, [...(basesOf.get(id) ?? []), dst]);
      }
    }
  });
  ok.forEach((f, i) => {
    const mod = moduleNameOf(f.path, options.rootPackage);
    for (const c of f.parsed.calls) {
      let dst = resolvers[i](c.callee, c.caller);
      // calling a class runs its __init__; keep the class as the target
      if (dst && nodes.get(dst)?.kind === 'module') dst = null;
      edges.push({ src: c.caller ? `${mod}.${c.caller}` : mod, dst, target: dst ?? c.callee, kind: 'calls', file: f.path, line: c.line });
    }
  });
  return { nodes: [...nodes.values()], edges };
}

/** Strongly connected components with more than one node (or a self-loop), members sorted, largest first. */
export function stronglyConnected(adjacency: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let counter = 0;
  for (const start of [...adjacency.keys()].sort()) {
    if (index.has(start)) continue;
    // iterative Tarjan
    const work: { node: string; it: Iterator<string> }[] = [];
    const visit = (n: string) => {
      index.set(n, counter);
      low.set(n, counter++);
      stack.push(n);
      onStack.add(n);
      work.push({ node: n, it: (adjacency.get(n) ?? new Set<string>()).values() });
    };
    visit(start);
    while (work.length) {
      const top = work[work.length - 1];
      const next = top.it.next();
      if (!next.done) {
        const w = next.value;
        if (!index.has(w)) visit(w);
        else if (onStack.has(w)) low.set(top.node, Math.min(low.get(top.node)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length) low.set(work[work.length - 1].node, Math.min(low.get(work[work.length - 1].node)!, low.get(top.node)!));
      if (low.get(top.node) === index.get(top.node)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.node);
        if (comp.length > 1 || adjacency.get(top.node)?.has(top.node)) out.push(comp.sort());
      }
    }
  }
  return out.sort((a, b) => b.length - a.length || a[0].localeCompare(b[0]));
}

/**
 * Import cycles: within each strongly connected component, the shortest cycle through each member
 * (breadth-first, so the answer stays polynomial on dense graphs), each reported once, starting at its
 * alphabetically first module; at most maxCycles.
 */
export function findCycles(
  adjacency: Map<string, Set<string>>,
  maxCycles = 500,
): { cycles: string[][]; components: string[][]; truncated: boolean } {
  const components = stronglyConnected(adjacency);
  const cycles: string[][] = [];
  const seen = new Set<string>();
  for (const comp of components) {
    const members = new Set(comp);
    for (const s of comp) {
      const prev = new Map<string, string>();
      const queue: string[] = [s];
      let found: string[] | undefined;
      while (queue.length && !found) {
        const n = queue.shift()!;
        for (const w of adjacency.get(n) ?? []) {
          if (!members.has(w)) continue;
          if (w === s) {
            const path = [n];
            while (path[0] !== s) path.unshift(prev.get(path[0])!);
            found = path;
            break;
          }
          if (!prev.has(w)) {
            prev.set(w, n);
            queue.push(w);
          }
        }
      }
      if (!found) continue;
      const first = found.indexOf([...found].sort()[0]);
      const canonical = [...found.slice(first), ...found.slice(0, first)];
      const key = canonical.join('\n');
      if (seen.has(key)) continue;
      seen.add(key);
      if (cycles.length >= maxCycles) return { cycles, components, truncated: true };
      cycles.push(canonical);
    }
  }
  return { cycles, components, truncated: false };
}
