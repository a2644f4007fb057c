import { defineTool, paginate, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { EdgeRow } from '../store';
import { projectField, projectId, type ToolDeps } from './context';

export function findCallersTool(deps: ToolDeps) {
  return defineTool({
    name: 'find_callers',
    title: 'Find callers',
    description:
      'Who calls a function, method or class. `target` is a fully qualified name (`pkg.mod.Class.method`) matched against resolved call targets, or, for code outside the project or calls that could not be resolved, the callee as written (`requests.get`). With depth > 1 (max 5), callers of callers are added with their distance. Every call site has file and line. Paged (limit default 50, max 500); at most 5000 call edges are followed (truncated: true).',
    input: z
      .object({
        project: projectField,
        target: z
          .string()
          .min(1)
          .max(1024)
          .describe('Fully qualified name of the callee, or the callee text as written for unresolved calls.'),
        depth: z.number().int().min(1).max(5).default(1).describe('Levels of callers to follow (1-5, default 1 = direct callers).'),
        ...pageShape,
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const project = await projectId(deps, args.project);
      const resolved = await deps.store.node(project, args.target);
      const callers = new Map<string, { caller: string; distance: number; calls: { callee: string; file: string; line: number }[] }>();
      let frontier = [args.target];
      const seen = new Set(frontier);
      let edgesSeen = 0;
      let truncated = false;
      for (let level = 1; level <= args.depth && frontier.length && !truncated; level++) {
        const next: string[] = [];
        for (const t of frontier) {
          const found: EdgeRow[] = await deps.store.edgesToTarget(project, 'calls', t);
          for (const e of found) {
            if (++edgesSeen > 5000) {
              truncated = true;
              break;
            }
            const entry = callers.get(e.src) ?? { caller: e.src, distance: level, calls: [] };
            entry.calls.push({ callee: e.dst ?? e.target, file: e.file, line: e.line });
            callers.set(e.src, entry);
            if (!seen.has(e.src)) {
              seen.add(e.src);
              next.push(e.src);
            }
          }
        }
        frontier = next;
      }
      const list = [...callers.values()].sort((a, b) => a.distance - b.distance || a.caller.localeCompare(b.caller));
      const page = paginate(list, args.limit, args.cursor);
      return {
        project,
        target: args.target,
        resolved: resolved ?? null,
        callers: page.items,
        total: page.total,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        ...(truncated ? { truncated: true } : {}),
      };
    },
  });
}
