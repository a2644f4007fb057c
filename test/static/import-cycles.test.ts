/**
 * No import cycles in the repository (issue 29; STYLE.md 13: imports run one way). The import graph
 * comes from dpdm, run over every TypeScript file typecheck covers; an `import type`, a re-export and
 * an `import()` are edges like any import: a type-only cycle is harmless at run time but still ties
 * the files into one knot, and a dynamic import must not be the way around the rule. A knot (the
 * files of one strongly connected component, found by code-graph's findCycles, which code-graph-mcp
 * answers Python questions with) is reported once, with its shortest cycle.
 *
 * Why a test and not eslint-plugin-import-x's no-cycle: that rule skips type-only imports whatever
 * its options (6 of the 8 knots this test found were type-only), and it walks the graph again from
 * each linted file; dpdm reads the whole repository once, in about 3 seconds.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { findCycles } from '../../packages/code-graph/src';

const ROOT = path.resolve(__dirname, '../..');
const DPDM = require.resolve('dpdm/lib/bin/dpdm.js');
/** What tsconfig.json includes. */
const SOURCES = [
  'packages/*/src/**/*.ts',
  'packages/*/test/**/*.ts',
  'services/*/src/**/*.ts',
  'services/*/test/**/*.ts',
  'scripts/**/*.ts',
  'bench/**/*.ts',
  'test/**/*.ts',
];
const FIX =
  'Break each by moving what both sides need (a type, a constant, a small function) down into a leaf module that imports ' +
  "neither, e.g. the service's tools/context.ts or the gateway's types.ts; never by a dynamic import (it counts too).";

interface Dependency {
  request: string;
  kind: 'StaticImport' | 'StaticExport' | 'DynamicImport' | 'CommonJS';
  id: string | null;
}
/** File → its imports, paths relative to the folder dpdm ran in; null for a file it did not read (node_modules). */
type ImportGraph = Record<string, Dependency[] | null>;

const tmp = tempDir('mcp-fleet-cycles-');
afterAll(() => tmp.cleanup());

/** The import graph of the files `globs` match under `cwd`, as dpdm reads it (its JSON output). */
function importGraph(cwd: string, globs: string[]): ImportGraph {
  const out = path.join(tmp.dir, `graph-${path.basename(cwd)}.json`);
  execFileSync(process.execPath, [DPDM, '--no-tree', '--no-warning', '--no-circular', '--no-progress', '-o', out, ...globs], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return (JSON.parse(fs.readFileSync(out, 'utf8')) as { tree: ImportGraph }).tree;
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
function knots(graph: ImportGraph): { files: string[]; cycle: string }[] {
  const { components, cycles } = findCycles(adjacency(graph));
  return components.map((files) => {
    const cycle = cycles.find((c) => c[0] === files[0]) ?? files;
    return { files, cycle: [...cycle, cycle[0]].join(' → ') };
  });
}

describe('import cycles', () => {
  let graph: ImportGraph;
  beforeAll(() => {
    graph = importGraph(ROOT, SOURCES);
  });

  it('the repository has none (import type, re-exports and import() count)', () => {
    const found = knots(graph).map((knot) => `${knot.files.length} files tied: ${knot.cycle}`);
    if (found.length > 0) throw new Error(`${found.length} import cycle(s):\n  ${found.join('\n  ')}\n${FIX}`);
    expect(found).toEqual([]);
  });

  it('sees the whole repository: every import of ours resolves, packages to their sources', () => {
    const lost = Object.entries(graph).flatMap(([file, deps]) =>
      (deps ?? [])
        .filter((d) => d.id === null && (d.request.startsWith('.') || d.request.startsWith('@mcp-fleet/')))
        .map((d) => `${file}: ${d.request}`),
    );
    expect(lost).toEqual([]);
    expect(Object.keys(graph).filter((f) => /^(packages|services)\/[^/]+\/src\//.test(f)).length).toBeGreaterThan(300);
    // a package is read as its source, so a cycle across packages (kit → a service's code → kit) is found too
    expect(graph['services/mqtt-mcp/src/app.ts']?.find((d) => d.request === '@mcp-fleet/kit')?.id).toBe('packages/kit/src/index.ts');
  });

  it('finds cycles of every spelling, and nothing where imports run one way', () => {
    const dir = path.join(tmp.dir, 'fixture');
    const files: Record<string, string> = {
      // type-only, both spellings
      'type-a.ts': "import type { B } from './type-b';\nexport interface A { b?: B }\n",
      'type-b.ts': "import { type A } from './type-a';\nexport interface B { a?: A }\n",
      // a re-export closes it
      'barrel.ts': "export * from './member';\nexport const helper = 2;\n",
      'member.ts': "import { helper } from './barrel';\nexport const member = helper;\n",
      // around three files, one of them through import()
      'ring-1.ts': "import { two } from './ring-2';\nexport const one = two;\n",
      'ring-2.ts': "export { three as two } from './ring-3';\n",
      'ring-3.ts': "export const three = 3;\nexport const later = () => import('./ring-1');\n",
      // a file importing itself
      'self.ts': "export const self = 1;\nexport { self as again } from './self';\n",
      // one way only: no cycle
      'leaf.ts': 'export const leaf = 1;\n',
      'user.ts': "import { leaf } from './leaf';\nimport type { A } from './type-a';\nexport const use: A | number = leaf;\n",
    };
    fs.mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    const fixture = importGraph(dir, ['*.ts']);
    expect(knots(fixture)).toEqual([
      { files: ['ring-1.ts', 'ring-2.ts', 'ring-3.ts'], cycle: 'ring-1.ts → ring-2.ts → ring-3.ts → ring-1.ts' },
      { files: ['barrel.ts', 'member.ts'], cycle: 'barrel.ts → member.ts → barrel.ts' },
      { files: ['type-a.ts', 'type-b.ts'], cycle: 'type-a.ts → type-b.ts → type-a.ts' },
      { files: ['self.ts'], cycle: 'self.ts → self.ts' },
    ]);
  });
});
