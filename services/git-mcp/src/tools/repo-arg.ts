import { AppError } from '@mcp-fleet/kit';
import { z } from 'zod';

/** `path` (gateway examples) with `repository` as its alias (coordinator contract). */
export const repoShape = {
  path: z
    .string()
    .min(1)
    .max(4096)
    .optional()
    .describe('Repository directory (or a directory inside it): relative to the first workspace root, or absolute inside a root.'),
  repository: z.string().min(1).max(4096).optional().describe('Alias of path, as the coordinator contract names it.'),
};

/** The repository the caller named through `path` or `repository`. */
export function repoPath(args: { path?: string; repository?: string }): string {
  const { path, repository } = args;
  if (path !== undefined && repository !== undefined && path !== repository) {
    throw new AppError('VALIDATION_ERROR', 'path and repository name different repositories; send only one of them.', {
      details: [{ path: 'repository', message: 'conflicts with path' }],
    });
  }
  const value = path ?? repository;
  if (value === undefined) {
    throw new AppError('VALIDATION_ERROR', 'Name the repository: send path (or its alias repository).', {
      details: [{ path: 'path', message: 'required' }],
    });
  }
  return value;
}

/** Keeps at most `max` items and says whether it cut. */
export function capList<T>(items: T[], max: number): { items: T[]; cut: boolean } {
  return items.length > max ? { items: items.slice(0, max), cut: true } : { items, cut: false };
}
