import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ToolDeps } from './context';
import { buildGraph, parseTree } from './code';

export function analyzeTool(deps: ToolDeps) {
  return defineTool({
    name: 'analyze',
    title: 'Analyze code structure',
    description:
      'Offline structure of Python code (tree-sitter): for a file, its imports, classes, functions and methods with lines, parameters, bases and docstrings; for a directory (at most 5000 files), per-module counts, the largest definitions, the most-called functions and files that do not parse. No model is needed.',
    input: z
      .object({
        path: z.string().min(1).max(4096).describe('A .py file or a directory inside WORKSPACE_ROOTS.'),
        top: z.number().int().min(1).max(100).default(10).describe('How many entries the directory rankings list (default 10).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const { files, truncated, single } = await parseTree(deps, args.path);
      if (single && files.length === 1) {
        const f = files[0];
        return { file: f.path, lines: f.parsed.lines, error: f.parsed.error, imports: f.parsed.imports, definitions: f.parsed.defs };
      }
      const graph = buildGraph(files);
      const calls = new Map<string, number>();
      for (const e of graph.edges) if (e.kind === 'calls' && e.dst) calls.set(e.dst, (calls.get(e.dst) ?? 0) + 1);
      const defs = graph.nodes.filter((n) => n.kind !== 'module');
      return {
        files: files.length,
        modules: graph.nodes.filter((n) => n.kind === 'module').length,
        classes: defs.filter((n) => n.kind === 'class').length,
        functions: defs.filter((n) => n.kind === 'function').length,
        methods: defs.filter((n) => n.kind === 'method').length,
        largest: defs
          .map((n) => ({ id: n.id, kind: n.kind, file: n.file, line: n.line, lines: n.endLine - n.line + 1 }))
          .sort((a, b) => b.lines - a.lines || a.id.localeCompare(b.id))
          .slice(0, args.top),
        mostCalled: [...calls.entries()]
          .map(([id, count]) => ({ id, count }))
          .sort((a, b) => b.count - a.count || a.id.localeCompare(b.id))
          .slice(0, args.top),
        parseErrors: files.filter((f) => f.parsed.error).map((f) => ({ path: f.path, ...f.parsed.error })),
        ...(truncated ? { truncated: true } : {}),
      };
    },
  });
}
