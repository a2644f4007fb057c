import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ToolDeps } from './context';

export function indexPythonProjectTool(deps: ToolDeps) {
  return defineTool({
    name: 'index_python_project',
    title: 'Index a Python project',
    description:
      'Parse every .py/.pyi file under `root` (a directory inside WORKSPACE_ROOTS) with tree-sitter and store its code graph: modules, classes, functions, methods, imports (absolute and relative, resolved to project files), inheritance and calls. Re-indexing is incremental: files with an unchanged sha256 are not parsed again. Files that do not parse are reported in `errors` and skipped. Hidden directories, __pycache__, venv, node_modules, build and dist are skipped. At most CODE_GRAPH_MAX_FILES files (then truncated: true); files over CODE_GRAPH_MAX_FILE_BYTES are skipped; at most 500 errors are listed.',
    input: z
      .object({
        root: z.string().min(1).max(4096).describe('Project root directory, absolute or relative to the first workspace root.'),
      })
      .strict(),
    annotations: { readOnlyHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const resolved = await deps.ws.resolve(args.root, { mustExist: true, field: 'root' });
      const { stat } = await import('node:fs/promises');
      if (!(await stat(resolved.absolute)).isDirectory()) {
        throw new AppError('VALIDATION_ERROR', `root "${args.root}" is not a directory; name the project's top directory.`, {
          details: [{ path: 'root', message: 'not a directory' }],
        });
      }
      const report = await deps.store.index(resolved.absolute, { ...deps.limits, signal: ctx.signal }, deps.ws);
      ctx.logger.info('indexed python project', { project: report.project, files: report.files, parsed: report.parsed, ms: report.ms });
      const errors = report.errors.slice(0, 500);
      return { ...report, errors, ...(report.errors.length > 500 ? { errorsTruncated: true } : {}) };
    },
  });
}
