import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ToolDeps } from './context';
import { buildGraph, parseTree } from './code';

export function tracerTool(deps: ToolDeps) {
  return defineTool({
    name: 'tracer',
    title: 'Trace calls',
    description:
      'Offline call tracing over a Python project directory (tree-sitter, at most 5000 files): from a fully qualified symbol (`pkg.mod.Class.method`), what it calls (`callees`) or what calls it (`callers`), up to `depth` 1-6 levels, each step with file and line. At most 1000 steps (truncated: true). No model is needed.',
    input: z
      .object({
        path: z.string().min(1).max(4096).describe('Project root directory inside WORKSPACE_ROOTS.'),
        symbol: z.string().min(1).max(1024).describe('Fully qualified function, method or class (`pkg.mod.Class.method`).'),
        direction: z.enum(['callees', 'callers']).default('callees').describe('callees: what it calls; callers: what calls it.'),
        depth: z.number().int().min(1).max(6).default(3).describe('Levels to follow (1-6, default 3).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const { files } = await parseTree(deps, args.path);
      const graph = buildGraph(files);
      const node = graph.nodes.find((n) => n.id === args.symbol);
      if (!node)
        throw new AppError('NOT_FOUND', `Symbol "${args.symbol}" is not defined under ${args.path}; use analyze to list definitions.`);
      const calls = graph.edges.filter((e) => e.kind === 'calls');
      const steps: { depth: number; from: string; to: string; resolved: boolean; file: string; line: number }[] = [];
      const seen = new Set([args.symbol]);
      let frontier = [args.symbol];
      let truncated = false;
      for (let d = 1; d <= args.depth && frontier.length && !truncated; d++) {
        const next: string[] = [];
        for (const e of calls) {
          const hit = args.direction === 'callees' ? frontier.includes(e.src) : e.dst !== null && frontier.includes(e.dst);
          if (!hit) continue;
          if (steps.length >= 1000) {
            truncated = true;
            break;
          }
          steps.push({ depth: d, from: e.src, to: e.dst ?? e.target, resolved: e.dst !== null, file: e.file, line: e.line });
          const other = args.direction === 'callees' ? e.dst : e.src;
          if (other && !seen.has(other)) {
            seen.add(other);
            next.push(other);
          }
        }
        frontier = next;
      }
      return { symbol: node, direction: args.direction, steps, ...(truncated ? { truncated: true } : {}) };
    },
  });
}
