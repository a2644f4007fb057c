import { AppError } from '@mcp-fleet/kit';
import { type Workspace } from '@mcp-fleet/kit/workspace';
import { z } from 'zod';
import type { GraphStore } from '../store';

export interface ToolDeps {
  ws: Workspace;
  store: GraphStore;
  limits: { maxFiles: number; maxFileBytes: number };
}

export const projectField = z
  .string()
  .min(1)
  .max(4096)
  .describe('The project: its root directory (inside WORKSPACE_ROOTS) as given to index_python_project, or the project id it answered.');

/** A caller's project (id or root path) to an indexed project id; paths are confined to the workspace first. */
export async function projectId(deps: ToolDeps, project: string): Promise<string> {
  if (/^[0-9a-f]{16}$/.test(project)) return deps.store.requireProject(project);
  const resolved = await deps.ws.resolve(project, { field: 'project' });
  return deps.store.requireProject(resolved.absolute);
}

/** A name pattern (`*` any run, `?` one character, everything else literal) as an SQLite GLOB with `[` and `]` made literal. */
export function globPattern(pattern: string): string {
  return pattern.replace(/[[\]]/g, (c) => `[${c}]`);
}

export const patternField = (what: string) =>
  z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe(`${what} pattern: \`*\` matches any run of characters, \`?\` one character, the rest is literal (case-sensitive).`);

export function notFound(what: string): never {
  throw new AppError('NOT_FOUND', what);
}
