import { defineTool, MAX_LIMIT } from '@mcp-fleet/kit';
import { z } from 'zod';
import { indexItem } from '../views';
import type { ToolDeps } from './context';

export const skillsListTool = (deps: ToolDeps) =>
  defineTool({
    name: 'skills_list',
    title: 'List skills',
    description:
      `The skill catalog (GET /skills/v1/index): each skill's description, latest version (highest non-prerelease) and every version ` +
      `with its sha256, size and download URL. Ordered by name; at most ${MAX_LIMIT} skills a page (default 50) with a nextCursor that ` +
      `stays valid while versions are published. search matches name or description (up to 200 characters).`,
    input: z
      .object({
        search: z.string().max(200).optional().describe('Case-insensitive substring of the name or description.'),
        limit: z.number().int().min(1).max(MAX_LIMIT).default(50).describe(`Skills per page (1-${MAX_LIMIT}, default 50).`),
        cursor: z.string().max(512).optional().describe('nextCursor from the previous page.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: ({ search, limit, cursor }) => {
      const page = deps.catalog.page({ search, limit, cursor });
      return {
        skills: page.names.map((n) => indexItem(deps.catalog, n, deps.baseUrl)),
        count: page.names.length,
        total: page.total,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      };
    },
  });
