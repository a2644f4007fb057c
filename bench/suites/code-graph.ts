/**
 * code-graph-mcp: index a synthetic 2,000-file Python project (files per second) through the tool over
 * HTTP, re-index it unchanged and with 20 files changed (the incremental path; the full index is the
 * baseline), then the latency of each query tool at concurrency 1 and 4.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { markdownTable, runLoad, startServiceProcess, stopProcesses, type LoadResult } from '../lib';

const PACKAGES = 40;
const MODULES = 50; // per package: 2,000 files

function moduleSource(p: number, m: number, salt = ''): string {
  const next = `pkg${p}.mod${(m + 1) % MODULES}`;
  const other = `pkg${(p + 1) % PACKAGES}.mod${m}`;
  return [
    `"""Module ${p}.${m}${salt}."""`,
    'import os',
    `from . import mod${(m + 2) % MODULES}`,
    `import ${other}`,
    `from ${next} import helper_${(m + 1) % MODULES}`,
    '',
    `class Model${m}:`,
    '    def __init__(self, value):',
    '        self.value = value',
    '        self.check()',
    '',
    '    def check(self):',
    '        return self.render()',
    '',
    '    def render(self):',
    `        return helper_${(m + 1) % MODULES}(self.value)`,
    '',
    `def helper_${m}(value):`,
    `    return ${other}.helper_${m}(os.fspath(str(value)))`,
    '',
    `def build_${m}():`,
    `    item = Model${m}(1)`,
    '    item.render()',
    `    return mod${(m + 2) % MODULES}.helper_${(m + 2) % MODULES}(item)`,
    '',
  ].join('\n');
}

async function call(origin: string, name: string, args: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${origin}/tools/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, arguments: args }),
  });
  const body = (await res.json()) as { result?: Record<string, unknown> };
  if (res.status !== 200 || !body.result) throw new Error(`${name} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body.result;
}

export async function run(options: { durationMs: number }): Promise<{ json: unknown; markdown: string }> {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-code-graph-'));
  const root = path.join(ws, 'synthetic');
  for (let p = 0; p < PACKAGES; p++) {
    fs.mkdirSync(path.join(root, `pkg${p}`), { recursive: true });
    fs.writeFileSync(path.join(root, `pkg${p}`, '__init__.py'), '');
    for (let m = 0; m < MODULES; m++) fs.writeFileSync(path.join(root, `pkg${p}`, `mod${m}.py`), moduleSource(p, m));
  }
  const port = 37020 + Math.floor(Math.random() * 1000);
  const child = await startServiceProcess(
    'code-graph-mcp',
    { DATA_DIR: path.join(ws, 'data'), WORKSPACE_ROOTS: ws, TOOL_TIMEOUT_MS: '300000' },
    port,
  );
  const origin = `http://127.0.0.1:${port}`;
  const indexing: { run: string; files: number; parsed: number; ms: number; filesPerSecond: number; nodes: number; edges: number }[] = [];
  const queries: { query: string; result: LoadResult }[] = [];
  try {
    const timed = async (label: string) => {
      const r = (await call(origin, 'index_python_project', { root })) as {
        files: number;
        parsed: number;
        ms: number;
        nodes: number;
        edges: number;
      };
      indexing.push({
        run: label,
        files: r.files,
        parsed: r.parsed,
        ms: r.ms,
        filesPerSecond: Math.round((r.files / r.ms) * 1000),
        nodes: r.nodes,
        edges: r.edges,
      });
      process.stdout.write(`code-graph ${label}: ${r.files} files (${r.parsed} parsed) in ${r.ms} ms\n`);
    };
    await timed('full index (baseline)');
    await timed('re-index, nothing changed');
    for (let m = 0; m < 20; m++) fs.writeFileSync(path.join(root, 'pkg0', `mod${m}.py`), moduleSource(0, m, ' changed'));
    await timed('re-index, 20 files changed');
    const perQuery = Math.max(500, Math.floor(options.durationMs / 4));
    const tools = {
      'query_code_graph name pattern': {
        name: 'query_code_graph',
        arguments: { project: root, kinds: ['function'], name: 'helper_1*', limit: 50 },
      },
      'query_code_graph + calls depth 2': {
        name: 'query_code_graph',
        arguments: { project: root, qualifiedName: 'pkg3.mod7.build_7', traverse: { edges: ['calls'], depth: 2 } },
      },
      'find_callers depth 2': { name: 'find_callers', arguments: { project: root, target: 'pkg5.mod5.helper_5', depth: 2 } },
      'find_dependencies imported_by depth 2': {
        name: 'find_dependencies',
        arguments: { project: root, module: 'pkg9.mod9', direction: 'imported_by', depth: 2 },
      },
    };
    for (const [query, body] of Object.entries(tools)) {
      for (const concurrency of [1, 4]) {
        const result = await runLoad(
          origin,
          { path: '/tools/call', body: JSON.stringify(body), check: (_b: string, s: number) => s === 200 },
          concurrency,
          perQuery,
        );
        queries.push({ query: `${query} (c=${concurrency})`, result });
        process.stdout.write(
          `code-graph ${query} c=${concurrency}: ${result.throughput}/s p50 ${result.p50Ms} ms p99 ${result.p99Ms} ms errors ${result.errors}\n`,
        );
      }
    }
    const started = performance.now();
    const cycles = (await call(origin, 'detect_circular_imports', { project: root, limit: 1 })) as { total: number; truncated?: boolean };
    const cycleMs = Math.round(performance.now() - started);
    queries.push({
      query: `detect_circular_imports (one call, ${cycles.total} cycles${cycles.truncated ? ', capped at 500' : ''})`,
      result: {
        concurrency: 1,
        requests: 1,
        errors: 0,
        seconds: cycleMs / 1000,
        throughput: 0,
        p50Ms: cycleMs,
        p90Ms: cycleMs,
        p99Ms: cycleMs,
      },
    });
  } finally {
    await stopProcesses([child]);
    fs.rmSync(ws, { recursive: true, force: true });
  }
  const markdown = [
    `### code-graph-mcp: indexing a synthetic ${PACKAGES * MODULES}-file Python project (+${PACKAGES} __init__.py) through POST /tools/call`,
    '',
    markdownTable(
      ['run', 'files', 'parsed', 'ms', 'files/s', 'nodes', 'edges'],
      indexing.map((r) => [r.run, r.files, r.parsed, r.ms, r.filesPerSecond, r.nodes, r.edges]),
    ),
    '',
    '### Query latency on that graph',
    '',
    markdownTable(
      ['query', 'calls/s', 'p50 ms', 'p99 ms', 'errors'],
      queries.map((q) => [q.query, q.result.throughput, q.result.p50Ms, q.result.p99Ms, q.result.errors]),
    ),
  ].join('\n');
  return { json: { indexing, queries }, markdown };
}
