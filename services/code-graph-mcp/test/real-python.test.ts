import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { ServiceApp } from '@mcp-fleet/kit';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

// Regression: any `x = x.strip()` overflowed the stack while resolving calls, and the overflow came
// back as the caller's VALIDATION_ERROR; no real project could be indexed. These index whole packages
// of the Python standard library installed on this machine (the bench indexes all of it).

const stdlib = execFileSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8' }).trim();
const ws = tempDir('code-graph-real-ws-');
const data = tempDir('code-graph-real-data-');

/** Every .py file under dir, as the walk counts them (no hidden or cache directories). */
function pythonFiles(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory() && !e.name.startsWith('.') && e.name !== '__pycache__') n += pythonFiles(path.join(dir, e.name));
    else if (e.isFile() && /\.pyi?$/.test(e.name)) n++;
  }
  return n;
}

let service: ServiceApp;
const call = async (name: string, args: Record<string, unknown>) => {
  const res = await request(service.app).post('/tools/call').send({ name, arguments: args });
  expect({ name, status: res.status, code: res.body.code }).toEqual({ name, status: 200, code: undefined });
  return res.body.result;
};

beforeAll(async () => {
  const config = configSchema.parse({ ...testConfig, DATA_DIR: data.dir, WORKSPACE_ROOTS: `${ws.dir},${stdlib}` });
  service = await createApp({ config, logger: testLogger(), defaultMetrics: false });
});

afterAll(async () => {
  await service.close();
  ws.cleanup();
  data.cleanup();
});

describe('code-graph-mcp on real Python', () => {
  it.each(['json', 'email', 'asyncio'])('indexes the standard library package %s whole, without errors', async (pkg) => {
    const root = path.join(stdlib, pkg);
    const r = await call('index_python_project', { root });
    expect(r).toMatchObject({ files: pythonFiles(root), errors: [], truncated: false });
    expect(r.files).toBeGreaterThan(4);
    expect(r.edges).toBeGreaterThan(r.nodes);
    // the root is a package, so its modules carry its name
    const mods = await call('query_code_graph', { project: root, kinds: ['module'], limit: 500 });
    expect(mods.nodes.map((n: { id: string }) => n.id)).toContain(pkg);
    expect(mods.nodes.every((n: { id: string }) => n.id === pkg || n.id.startsWith(`${pkg}.`))).toBe(true);
  });

  it('answers questions about the indexed standard library', async () => {
    const json = path.join(stdlib, 'json');
    const decode = await call('find_callers', { project: json, target: 'json.decoder.JSONDecoder.raw_decode' });
    expect(decode.resolved).toMatchObject({ kind: 'method', file: 'decoder.py' });
    expect(decode.callers.map((c: { caller: string }) => c.caller)).toContain('json.decoder.JSONDecoder.decode');
    const deps = await call('find_dependencies', { project: json, module: '__init__.py' });
    expect(deps.dependencies.map((d: { module: string }) => d.module)).toEqual(['json.decoder', 'json.encoder']);

    const mime = await call('query_code_graph', {
      project: path.join(stdlib, 'email'),
      qualifiedName: 'email.mime.text.MIMEText',
      traverse: { edges: ['inherits'], depth: 3 },
    });
    expect(mime.edges.map((e: { dst: string }) => e.dst)).toEqual([
      'email.mime.nonmultipart.MIMENonMultipart',
      'email.mime.base.MIMEBase',
      'email.message.Message',
    ]);

    const asyncio = path.join(stdlib, 'asyncio');
    const cycles = await call('detect_circular_imports', { project: asyncio, limit: 500 });
    expect(cycles.total).toBeGreaterThan(0);
    expect(cycles.components[0]).toEqual(expect.arrayContaining(['asyncio.events', 'asyncio.tasks']));
    const policy = await call('find_callers', { project: asyncio, target: 'asyncio.events.get_event_loop_policy' });
    expect(policy.callers.map((c: { caller: string }) => c.caller)).toContain('asyncio.events.new_event_loop');
  });

  it('indexes self-referential assignments, mutual ones and hostile nesting (no stack overflow, no 4xx)', async () => {
    const root = path.join(ws.dir, 'hostile');
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(
      path.join(root, 'strings.py'),
      [
        'class Text:',
        '    def clean(self):',
        '        return self',
        '',
        'def normalise(x):',
        '    x = x.strip()',
        '    x = x.lower()',
        '    a = b.c()',
        '    b = a.d()',
        '    t = Text()',
        '    t.clean()',
        '    return a.e(b.f(x.upper()))',
        '',
      ].join('\n'),
    );
    const depth = 50_000;
    fs.writeFileSync(path.join(root, 'parens.py'), `x = ${'('.repeat(depth)}1${')'.repeat(depth)}\n`);
    fs.writeFileSync(path.join(root, 'sum.py'), `x = ${Array(depth).fill('a').join(' + ')}\n`);
    fs.writeFileSync(path.join(root, 'chain.py'), `y = a${'.b'.repeat(depth)}()\n`);
    fs.writeFileSync(path.join(root, 'calls.py'), `y = ${'f('.repeat(5000)}${')'.repeat(5000)}\n`);
    const r = await call('index_python_project', { root });
    expect(r).toMatchObject({ files: 5, errors: [] });
    const clean = await call('find_callers', { project: root, target: 'strings.Text.clean' });
    expect(clean.callers).toEqual([expect.objectContaining({ caller: 'strings.normalise' })]);
    const nested = await call('find_callers', { project: root, target: 'f' });
    expect(nested.callers).toEqual([expect.objectContaining({ caller: 'calls', calls: [{ callee: 'f', file: 'calls.py', line: 1 }] })]);
  });
});
