import { AppError, defineTool, paginate, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import { projectField, projectId, type ToolDeps } from './context';
import { traverse } from './query-code-graph';

export function findDependenciesTool(deps: ToolDeps) {
  return defineTool({
    name: 'find_dependencies',
    title: 'Module dependencies',
    description:
      'What a module imports (direction `imports`) or which modules import it (`imported_by`), directly or up to `depth` (1-10) levels. Each dependency carries its distance and the import statements (file, line) that create it; imports of modules outside the project are listed in `external` (direction imports, depth 1 only). `module` is a dotted module name or a .py path relative to the project root. Paged (limit default 50, max 500); at most 5000 import edges are followed (truncated: true).',
    input: z
      .object({
        project: projectField,
        module: z
          .string()
          .min(1)
          .max(1024)
          .describe('Dotted module name (`pkg.sub.mod`) or file path relative to the project root (`pkg/sub/mod.py`).'),
        direction: z
          .enum(['imports', 'imported_by'])
          .default('imports')
          .describe('imports: what it depends on; imported_by: what depends on it.'),
        depth: z.number().int().min(1).max(10).default(1).describe('Levels to follow (1-10, default 1 = direct only).'),
        ...pageShape,
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const project = await projectId(deps, args.project);
      const asModule = /\.pyi?$/.test(args.module)
        ? (await deps.store.nodesWhere(project, "AND kind = 'module' AND file = ?", [args.module], 1, 0)).rows[0]
        : await deps.store.node(project, args.module);
      if (!asModule || asModule.kind !== 'module') {
        throw new AppError(
          'NOT_FOUND',
          `Module "${args.module}" is not in the project's graph; check the name with query_code_graph (kinds: ["module"]).`,
        );
      }
      const t = await traverse(deps, project, [asModule.id], ['imports'], args.direction === 'imports' ? 'out' : 'in', args.depth, 5000);
      const via = new Map<string, { file: string; line: number; from: string }[]>();
      const external = new Map<string, { file: string; line: number }[]>();
      for (const e of t.edges) {
        if (e.dst === null) {
          if (e.src === asModule.id) external.set(e.target, [...(external.get(e.target) ?? []), { file: e.file, line: e.line }]);
          continue;
        }
        const other = args.direction === 'imports' ? e.dst : e.src;
        if (other === asModule.id) continue;
        via.set(other, [...(via.get(other) ?? []), { file: e.file, line: e.line, from: args.direction === 'imports' ? e.src : e.dst }]);
      }
      const list = [...via.entries()]
        .map(([module, statements]) => ({ module, distance: t.reached.get(module) ?? 1, statements }))
        .sort((a, b) => a.distance - b.distance || a.module.localeCompare(b.module));
      const page = paginate(list, args.limit, args.cursor);
      return {
        project,
        module: asModule.id,
        direction: args.direction,
        dependencies: page.items,
        total: page.total,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        ...(args.direction === 'imports'
          ? {
              external: [...external.entries()]
                .map(([name, statements]) => ({ name, statements }))
                .sort((a, b) => a.name.localeCompare(b.name)),
            }
          : {}),
        ...(t.truncated ? { truncated: true } : {}),
      };
    },
  });
}
