import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { ServiceApp } from '@mcp-fleet/kit';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const ws = tempDir('code-graph-ws-');
const data = tempDir('code-graph-data-');
const root = path.join(ws.dir, 'proj');

function write(rel: string, text: string): void {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

// A real project: packages, absolute and relative imports, an import cycle a -> b -> c -> a, methods
// calling each other, inheritance, an external import and one file with a syntax error.
write('app/__init__.py', 'from .core import engine\n');
write('app/core/__init__.py', '');
write(
  'app/core/engine.py',
  [
    'import os',
    'from ..util import helpers',
    'from . import models',
    'from .models import Base as B',
    '',
    'class Engine(B):',
    '    """Runs things."""',
    '    def start(self):',
    '        self.prepare()',
    '        return helpers.slugify("x")',
    '',
    '    def prepare(self):',
    '        self.validate()',
    '        os.getcwd()',
    '',
    'def run():',
    '    e = Engine()',
    '    e.start()',
    '    models.make()',
    '',
  ].join('\n'),
);
write(
  'app/core/models.py',
  ['class Base:', '    def validate(self):', '        return True', '', 'def make():', '    return Base()', ''].join('\n'),
);
write('app/util/__init__.py', '');
write('app/util/helpers.py', ['import re', '', 'def slugify(text):', "    return re.sub(r'\\W+', '-', text)", ''].join('\n'));
write('cyc/__init__.py', '');
write('cyc/a.py', 'from cyc import b\n\ndef fa():\n    return b.fb()\n');
write('cyc/b.py', 'import cyc.c\n\ndef fb():\n    return cyc.c.fc()\n');
write('cyc/c.py', 'from . import a\n\ndef fc():\n    return 1\n');
write('broken.py', 'def broken(:\n    pass\n');
write('.venv/skipped.py', 'import nothing\n');

let service: ServiceApp;
const call = async (name: string, args: Record<string, unknown>, status = 200) => {
  const res = await request(service.app).post('/tools/call').send({ name, arguments: args });
  expect({ status: res.status, body: res.body }).toMatchObject({ status });
  return status === 200 ? res.body.result : res.body;
};

beforeAll(async () => {
  const config = configSchema.parse({ ...testConfig, DATA_DIR: data.dir, WORKSPACE_ROOTS: ws.dir });
  service = await createApp({ config, logger: testLogger(), defaultMetrics: false });
});

afterAll(async () => {
  await service.close();
  ws.cleanup();
  data.cleanup();
});

describe('code-graph-mcp', () => {
  let project: string;

  it('lists its five tools', async () => {
    const res = await request(service.app).get('/tools/list').expect(200);
    expect(res.body.tools.map((t: { name: string }) => t.name).sort()).toEqual([
      'detect_circular_imports',
      'find_callers',
      'find_dependencies',
      'index_python_project',
      'query_code_graph',
    ]);
  });

  it('indexes the project, reporting and skipping the syntax-error file', async () => {
    const r = await call('index_python_project', { root: 'proj' });
    project = r.project;
    expect(r).toMatchObject({ root: root, files: 11, parsed: 11, unchanged: 0, truncated: false });
    expect(r.errors).toEqual([expect.objectContaining({ path: 'broken.py', line: 1 })]);
    const mods = await call('query_code_graph', { project: 'proj', kinds: ['module'], limit: 500 });
    expect(mods.nodes.map((n: { id: string }) => n.id)).toEqual([
      'app',
      'app.core',
      'app.core.engine',
      'app.core.models',
      'app.util',
      'app.util.helpers',
      'cyc',
      'cyc.a',
      'cyc.b',
      'cyc.c',
    ]);
  });

  it('re-indexes incrementally by file hash', async () => {
    write('cyc/c.py', 'from . import a\n\ndef fc():\n    return 2\n\ndef fd():\n    return fc()\n');
    fs.rmSync(path.join(root, 'app/util/__init__.py'));
    const r = await call('index_python_project', { root });
    expect(r).toMatchObject({ project, files: 10, parsed: 1, unchanged: 9, removed: 1 });
    expect(r.errors).toEqual([expect.objectContaining({ path: 'broken.py', line: 1 })]);
    const again = await call('index_python_project', { root });
    expect(again).toMatchObject({ parsed: 0, unchanged: 10, nodes: r.nodes, edges: r.edges });
    const fd = await call('find_callers', { project, target: 'cyc.c.fc' });
    expect(fd.callers.map((c: { caller: string }) => c.caller)).toEqual(['cyc.b.fb', 'cyc.c.fd']);
  });

  it('queries nodes by kind and pattern, follows edges and pages', async () => {
    const methods = await call('query_code_graph', { project, kinds: ['method'], name: '*a*' });
    expect(methods.nodes.map((n: { id: string }) => n.id)).toEqual([
      'app.core.engine.Engine.prepare',
      'app.core.engine.Engine.start',
      'app.core.models.Base.validate',
    ]);
    expect(methods.nodes[0]).toMatchObject({ kind: 'method', file: 'app/core/engine.py', line: 12, endLine: 14 });
    const page1 = await call('query_code_graph', { project, kinds: ['function'], limit: 2 });
    expect(page1.nodes).toHaveLength(2);
    expect(page1.total).toBeGreaterThan(2);
    const page2 = await call('query_code_graph', { project, kinds: ['function'], limit: 2, cursor: page1.nextCursor });
    expect(page2.nodes[0].id > page1.nodes[1].id).toBe(true);
    const withEdges = await call('query_code_graph', {
      project,
      qualifiedName: 'app.core.engine.Engine',
      traverse: { edges: ['contains', 'inherits'], depth: 1 },
    });
    const edges = withEdges.edges.map((e: { kind: string; dst: string }) => `${e.kind}:${e.dst}`).sort();
    expect(edges).toEqual([
      'contains:app.core.engine.Engine.prepare',
      'contains:app.core.engine.Engine.start',
      'inherits:app.core.models.Base',
    ]);
    // patterns are literal except * and ?: no SQL reaches the store
    const sql = await call('query_code_graph', { project, name: "x' OR 1=1 --" });
    expect(sql.nodes).toEqual([]);
    const transitive = await call('query_code_graph', {
      project,
      qualifiedName: 'app.core.engine.run',
      traverse: { edges: ['calls'], depth: 3 },
    });
    expect(transitive.edges.map((e: { target: string }) => e.target)).toEqual(
      expect.arrayContaining([
        'app.core.engine.Engine',
        'app.core.engine.Engine.start',
        'app.core.engine.Engine.prepare',
        'app.core.models.Base.validate',
        'app.util.helpers.slugify',
        'os.getcwd',
      ]),
    );
  });

  it('resolves absolute and relative imports to project modules', async () => {
    const d = await call('find_dependencies', { project, module: 'app.core.engine' });
    expect(d.dependencies.map((x: { module: string }) => x.module)).toEqual(['app.core.models', 'app.util.helpers']);
    expect(d.dependencies[1].statements).toEqual([{ file: 'app/core/engine.py', line: 2, from: 'app.core.engine' }]);
    expect(d.external).toEqual([{ name: 'os', statements: [{ file: 'app/core/engine.py', line: 1 }] }]);
    const back = await call('find_dependencies', { project, module: 'app/util/helpers.py', direction: 'imported_by', depth: 3 });
    expect(back.dependencies).toEqual([
      expect.objectContaining({ module: 'app.core.engine', distance: 1 }),
      expect.objectContaining({ module: 'app', distance: 2 }),
    ]);
    await call('find_dependencies', { project, module: 'nope.mod' }, 404);
  });

  it('finds callers of methods, functions and external callees', async () => {
    const v = await call('find_callers', { project, target: 'app.core.models.Base.validate' });
    expect(v.resolved).toMatchObject({ kind: 'method' });
    expect(v.callers).toEqual([
      {
        caller: 'app.core.engine.Engine.prepare',
        distance: 1,
        calls: [{ callee: 'app.core.models.Base.validate', file: 'app/core/engine.py', line: 13 }],
      },
    ]);
    const deep = await call('find_callers', { project, target: 'app.core.engine.Engine.prepare', depth: 3 });
    expect(deep.callers.map((c: { caller: string; distance: number }) => `${c.distance}:${c.caller}`)).toEqual([
      '1:app.core.engine.Engine.start',
      '2:app.core.engine.run',
    ]);
    const ext = await call('find_callers', { project, target: 'os.getcwd' });
    expect(ext.resolved).toBeNull();
    expect(ext.callers[0].caller).toBe('app.core.engine.Engine.prepare');
    const make = await call('find_callers', { project, target: 'app.core.models.make' });
    expect(make.callers[0].caller).toBe('app.core.engine.run');
  });

  it('lists the import cycle with its edges', async () => {
    const c = await call('detect_circular_imports', { project });
    expect(c.components).toEqual([['cyc.a', 'cyc.b', 'cyc.c']]);
    expect(c.cycles).toEqual([
      {
        modules: ['cyc.a', 'cyc.b', 'cyc.c'],
        length: 3,
        edges: [
          { from: 'cyc.a', to: 'cyc.b', statements: [{ file: 'cyc/a.py', line: 1 }] },
          { from: 'cyc.b', to: 'cyc.c', statements: [{ file: 'cyc/b.py', line: 1 }] },
          { from: 'cyc.c', to: 'cyc.a', statements: [{ file: 'cyc/c.py', line: 1 }] },
        ],
      },
    ]);
  });

  it('confines roots to the workspace and refuses unknown projects and bad input', async () => {
    expect((await call('index_python_project', { root: '/etc' }, 403)).code).toBe('FORBIDDEN');
    expect((await call('index_python_project', { root: '../x' }, 403)).code).toBe('FORBIDDEN');
    expect((await call('index_python_project', { root: 'proj/broken.py' }, 400)).code).toBe('VALIDATION_ERROR');
    expect((await call('query_code_graph', { project: '0123456789abcdef' }, 404)).code).toBe('NOT_FOUND');
    expect((await call('query_code_graph', { project, kinds: ['table'] }, 400)).code).toBe('VALIDATION_ERROR');
    expect((await call('query_code_graph', { project, sql: 'SELECT 1' }, 400)).code).toBe('VALIDATION_ERROR');
    expect((await call('query_code_graph', { project, cursor: 'garbage' }, 400)).code).toBe('VALIDATION_ERROR');
  });
});
