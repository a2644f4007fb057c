import { decodeCursor, defineTool, encodeCursor, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { EdgeRow } from '../store';
import { globPattern, patternField, projectField, projectId, type ToolDeps } from './context';

export const NODE_KINDS = ['module', 'class', 'function', 'method'] as const;
export const EDGE_KINDS = ['imports', 'contains', 'calls', 'inherits'] as const;
const MAX_EDGES = 2000;

/** Breadth-first walk over stored edges from a set of nodes, at most maxEdges edges. */
export async function traverse(
  deps: ToolDeps,
  project: string,
  start: string[],
  kinds: readonly string[],
  direction: 'out' | 'in' | 'both',
  depth: number,
  maxEdges = MAX_EDGES,
): Promise<{ edges: EdgeRow[]; reached: Map<string, number>; truncated: boolean }> {
  const reached = new Map<string, number>(start.map((s) => [s, 0]));
  const edges: EdgeRow[] = [];
  const seenEdge = new Set<string>();
  let frontier = start;
  for (let level = 1; level <= depth && frontier.length; level++) {
    const found: EdgeRow[] = [];
    if (direction !== 'in') found.push(...(await deps.store.edgesFrom(project, frontier, [...kinds], 'out')));
    if (direction !== 'out') found.push(...(await deps.store.edgesFrom(project, frontier, [...kinds], 'in')));
    const next: string[] = [];
    for (const e of found) {
      const key = `${e.src}|${e.dst}|${e.target}|${e.kind}|${e.file}|${e.line}`;
      if (seenEdge.has(key)) continue;
      seenEdge.add(key);
      if (edges.length >= maxEdges) return { edges, reached, truncated: true };
      edges.push(e);
      for (const n of [e.src, e.dst]) {
        if (n && !reached.has(n)) {
          reached.set(n, level);
          next.push(n);
        }
      }
    }
    frontier = next;
  }
  return { edges, reached, truncated: false };
}

export function queryCodeGraphTool(deps: ToolDeps) {
  return defineTool({
    name: 'query_code_graph',
    title: 'Query the code graph',
    description:
      'Find nodes of an indexed project by kind (module, class, function, method) and name/module/file patterns (`*` and `?` wildcards, never SQL), optionally following edges (imports, contains, calls, inherits) out of, into or both ways from each node of the page up to `depth` (1-5). Nodes are paged (limit default 50, max 500, nextCursor); the edges of one page are capped at 2000 (truncated: true). Edges whose target is outside the project have dst null and the target as written.',
    input: z
      .object({
        project: projectField,
        kinds: z.array(z.enum(NODE_KINDS)).min(1).max(4).optional().describe('Node kinds to return (default all).'),
        name: patternField('Short-name (e.g. `handle_*`)'),
        qualifiedName: patternField('Fully qualified name (e.g. `pkg.models.*`)'),
        module: patternField('Module name (e.g. `pkg.sub.*`)'),
        file: patternField('File path relative to the project root (e.g. `pkg/*.py`)'),
        traverse: z
          .object({
            edges: z.array(z.enum(EDGE_KINDS)).min(1).max(4).optional().describe('Edge kinds to follow (default all).'),
            direction: z.enum(['out', 'in', 'both']).default('out').describe('out: from the node; in: into it; both.'),
            depth: z.number().int().min(1).max(5).default(1).describe('How many edges away to go (1-5, default 1).'),
          })
          .strict()
          .optional()
          .describe('Follow edges from every node of the page.'),
        ...pageShape,
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const project = await projectId(deps, args.project);
      const clauses: string[] = [];
      const params: unknown[] = [];
      if (args.kinds) {
        clauses.push(`kind IN (${args.kinds.map(() => '?').join(',')})`);
        params.push(...args.kinds);
      }
      const likes: [string, string | undefined][] = [
        ['name', args.name],
        ['id', args.qualifiedName],
        ['module', args.module],
        ['file', args.file],
      ];
      for (const [col, pat] of likes) {
        if (pat === undefined) continue;
        // SQLite GLOB: `*` and `?` are the wildcards, `[` is made literal; case-sensitive.
        clauses.push(`${col} GLOB ?`);
        params.push(globPattern(pat));
      }
      const where = clauses.length ? `AND ${clauses.join(' AND ')}` : '';
      const offset = decodeCursor(args.cursor);
      const { rows, total } = await deps.store.nodesWhere(project, where, params, args.limit, offset);
      const next = offset + rows.length;
      const page = { project, nodes: rows, total, ...(next < total ? { nextCursor: encodeCursor(next) } : {}) };
      if (!args.traverse) return page;
      const t = await traverse(
        deps,
        project,
        rows.map((r) => r.id),
        args.traverse.edges ?? EDGE_KINDS,
        args.traverse.direction,
        args.traverse.depth,
      );
      return { ...page, edges: t.edges, ...(t.truncated ? { truncated: true } : {}) };
    },
  });
}
