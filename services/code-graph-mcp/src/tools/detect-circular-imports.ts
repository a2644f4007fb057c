import { findCycles } from '@mcp-fleet/code-graph';
import { defineTool, paginate, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import { projectField, projectId, type ToolDeps } from './context';

export function detectCircularImportsTool(deps: ToolDeps) {
  return defineTool({
    name: 'detect_circular_imports',
    title: 'Detect circular imports',
    description:
      'Import cycles between the modules of an indexed project. `components` are the strongly connected groups of modules that import each other (at most 100, largest first); `cycles` are, within each group, the shortest cycle through each module, listed once, in import order starting from the alphabetically first module, with the import statements (file, line) forming each edge. At most 500 cycles (truncated: true beyond); cycles are paged (limit default 50, max 500).',
    input: z.object({ project: projectField, ...pageShape }).strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const project = await projectId(deps, args.project);
      const edges = (await deps.store.edgesByKind(project, 'imports')).filter((e) => e.dst !== null && e.dst !== e.src);
      const adjacency = new Map<string, Set<string>>();
      const sites = new Map<string, { file: string; line: number }[]>();
      for (const e of edges) {
        if (!adjacency.has(e.src)) adjacency.set(e.src, new Set());
        adjacency.get(e.src)!.add(e.dst!);
        const key = `${e.src}\n${e.dst}`;
        sites.set(key, [...(sites.get(key) ?? []), { file: e.file, line: e.line }]);
      }
      const { cycles, components, truncated } = findCycles(adjacency, 500);
      const described = cycles.map((modules) => ({
        modules,
        length: modules.length,
        edges: modules.map((from, i) => {
          const to = modules[(i + 1) % modules.length];
          return { from, to, statements: sites.get(`${from}\n${to}`) ?? [] };
        }),
      }));
      described.sort((a, b) => a.length - b.length || a.modules.join().localeCompare(b.modules.join()));
      const page = paginate(described, args.limit, args.cursor);
      return {
        project,
        components: components.slice(0, 100),
        cycles: page.items,
        total: page.total,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        ...(truncated ? { truncated: true } : {}),
      };
    },
  });
}
