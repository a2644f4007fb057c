/**
 * code-graph-mcp on real code: index the Python standard library installed on this machine (its json,
 * email and asyncio packages, then the whole library as one project, then the whole library again
 * unchanged) through POST /tools/call, and report files and lines per second. The synthetic project of
 * the code-graph suite measures the same path on small uniform files; this one on what users index.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { markdownTable, startServiceProcess, stopProcesses } from '../lib';

interface IndexRow {
  run: string;
  files: number;
  parsed: number;
  errors: number;
  lines: number;
  ms: number;
  filesPerSecond: number;
  linesPerSecond: number;
  nodes: number;
  edges: number;
}

/** Lines of the .py/.pyi files the indexer reads (hidden directories and __pycache__ skipped as it does). */
function countLines(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) {
      if (!e.name.startsWith('.') && !['__pycache__', 'node_modules', 'venv', 'site-packages', 'build', 'dist'].includes(e.name))
        n += countLines(path.join(dir, e.name));
    } else if (e.isFile() && /\.pyi?$/.test(e.name)) n += fs.readFileSync(path.join(dir, e.name), 'utf8').split('\n').length;
  }
  return n;
}

export async function run(): Promise<{ json: unknown; markdown: string }> {
  const stdlib = execFileSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8' }).trim();
  const python = execFileSync('python3', ['--version'], { encoding: 'utf8' }).trim();
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-code-graph-stdlib-'));
  const port = 38020 + Math.floor(Math.random() * 1000);
  const child = await startServiceProcess(
    'code-graph-mcp',
    { DATA_DIR: data, WORKSPACE_ROOTS: stdlib, TOOL_TIMEOUT_MS: '600000', CODE_GRAPH_MAX_FILES: '100000' },
    port,
  );
  const rows: IndexRow[] = [];
  const failures: { path: string; line: number; message: string }[] = [];
  try {
    const index = async (run: string, root: string) => {
      const res = await fetch(`http://127.0.0.1:${port}/tools/call`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'index_python_project', arguments: { root } }),
      });
      const body = (await res.json()) as { result?: Record<string, unknown> };
      if (res.status !== 200 || !body.result) throw new Error(`${run} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
      const r = body.result as { files: number; parsed: number; ms: number; nodes: number; edges: number; errors: typeof failures };
      const lines = countLines(root);
      if (r.parsed) failures.push(...r.errors.filter((e) => !failures.some((f) => f.path === e.path)));
      rows.push({
        run,
        files: r.files,
        parsed: r.parsed,
        errors: r.errors.length,
        lines,
        ms: r.ms,
        filesPerSecond: Math.round((r.files / r.ms) * 1000),
        linesPerSecond: Math.round((lines / r.ms) * 1000),
        nodes: r.nodes,
        edges: r.edges,
      });
      process.stdout.write(`code-graph-stdlib ${run}: ${r.files} files (${r.parsed} parsed, ${r.errors.length} errors) in ${r.ms} ms\n`);
    };
    for (const pkg of ['json', 'email', 'asyncio']) await index(`${pkg} package`, path.join(stdlib, pkg));
    await index('whole standard library', stdlib);
    await index('whole standard library, re-index unchanged', stdlib);
  } finally {
    await stopProcesses([child]);
    fs.rmSync(data, { recursive: true, force: true });
  }
  const markdown = [
    `### code-graph-mcp: indexing the ${python} standard library through POST /tools/call`,
    '',
    markdownTable(
      ['run', 'files', 'parsed', 'errors', 'lines', 'ms', 'files/s', 'lines/s', 'nodes', 'edges'],
      rows.map((r) => [r.run, r.files, r.parsed, r.errors, r.lines, r.ms, r.filesPerSecond, r.linesPerSecond, r.nodes, r.edges]),
    ),
    '',
    `Files tree-sitter-python refuses (reported in \`errors\` and skipped): ${
      failures.map((f) => `\`${f.path}\` line ${f.line} (${f.message})`).join('; ') || 'none'
    }.`,
  ].join('\n');
  return { json: { python, stdlib, indexing: rows, errors: failures }, markdown };
}
