/**
 * No import cycles in the repository (issue 29): the rule is scripts/lint/import-cycles.ts, which
 * `pnpm lint` runs after eslint; this test runs it too and checks that it finds cycles of every
 * spelling (import type, re-exports, import(), a file importing itself) and sees every file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { FIX, importGraph, knots, ROOT, SOURCES, type ImportGraph } from '../../scripts/lint/import-cycles';

const tmp = tempDir('mcp-fleet-cycles-');
afterAll(() => tmp.cleanup());

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
