/**
 * No import cycles in the repository (issue 29; STYLE.md 13: imports run one way): `pnpm lint` runs
 * this after eslint, and test/static/import-cycles.test.ts checks it and the rule itself. The
 * import graph comes from dpdm, run over every TypeScript file typecheck covers; an `import type`,
 * a re-export and an `import()` are edges like any import: a type-only cycle is harmless at run
 * time but still ties the files into one knot, and a dynamic import must not be the way around the
 * rule. A knot (the files of one strongly connected component, found by code-graph's findCycles,
 * which code-graph-mcp answers Python questions with) is reported once, with its shortest cycle.
 *
 * Why dpdm and not eslint-plugin-import-x's no-cycle: that rule skips type-only imports whatever
 * its options (6 of the 8 knots found when this was written were type-only), and it walks the
 * graph again from each linted file; dpdm reads the whole repository once, in about 3 seconds.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findCycles } from '../../packages/code-graph/src';

export const ROOT = path.resolve(__dirname, '../..');
const DPDM = require.resolve('dpdm/lib/bin/dpdm.js');
/** What tsconfig.json includes. */
export const SOURCES = [
  'packages/*/src/**/*.ts',
  'packages/*/test/**/*.ts',
  'services/*/src/**/*.ts',
  'services/*/test/**/*.ts',
  'scripts/**/*.ts',
  'bench/**/*.ts',
  'test/**/*.ts',
];
export const FIX =
  'Break each by moving what both sides need (a type, a constant, a small function) down into a leaf module that imports ' +
  "neither, e.g. the service's tools/context.ts or the gateway's core/types.ts; never by a dynamic import (it counts too).";

export interface Dependency {
  request: string;
  kind: 'StaticImport' | 'StaticExport' | 'DynamicImport' | 'CommonJS';
  id: string | null;
}
/** File → its imports, paths relative to the folder dpdm ran in; null for a file it did not read (node_modules). */
export type ImportGraph = Record<string, Dependency[] | null>;

/** The import graph of the files `globs` match under `cwd`, as dpdm reads it (its JSON output). */
export function importGraph(cwd: string, globs: readonly string[]): ImportGraph {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-fleet-imports-'));
  try {
    const out = path.join(dir, 'graph.json');
    execFileSync(process.execPath, [DPDM, '--no-tree', '--no-warning', '--no-circular', '--no-progress', '-o', out, ...globs], {
      cwd,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return (JSON.parse(fs.readFileSync(out, 'utf8')) as { tree: ImportGraph }).tree;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The graph as code-graph's findCycles takes it: file → the files it imports, ours only (not node_modules). */
function adjacency(graph: ImportGraph): Map<string, Set<string>> {
  return new Map(
    Object.entries(graph).map(([file, deps]) => [
      file,
      new Set((deps ?? []).flatMap((d) => (d.id !== null && graph[d.id] !== undefined ? [d.id] : []))),
    ]),
  );
}

/**
 * Every knot (files that import each other, directly or around, or a file importing itself), members
 * sorted, largest first, each with its shortest cycle through its first member: "a.ts → b.ts → a.ts".
 */
export function knots(graph: ImportGraph): { files: string[]; cycle: string }[] {
  const { components, cycles } = findCycles(adjacency(graph));
  return components.map((files) => {
    const cycle = cycles.find((c) => c[0] === files[0]) ?? files;
    return { files, cycle: [...cycle, cycle[0]].join(' → ') };
  });
}

/** The knots of the whole repository, one line each. */
export function repositoryCycles(): string[] {
  return knots(importGraph(ROOT, SOURCES)).map((knot) => `${knot.files.length} files tied: ${knot.cycle}`);
}

if (require.main === module) {
  const found = repositoryCycles();
  if (found.length > 0) {
    process.stderr.write(`import-cycles: ${found.length} import cycle(s):\n  ${found.join('\n  ')}\n${FIX}\n`);
    process.exit(1);
  }
  process.stdout.write('import-cycles: none\n');
}
