import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ToolDeps } from './context';

export const REGISTRY_MAX_LIMIT = 100;

/** The query of GET /registry/v0.1/servers, as the official registry API names it. */
export const registryQuery = z
  .object({
    search: z.string().max(200).optional().describe('Case-insensitive substring of the server name.'),
    limit: z.number().int().min(1).max(REGISTRY_MAX_LIMIT).default(30).describe(`Entries per page (1-${REGISTRY_MAX_LIMIT}, default 30).`),
    cursor: z.string().max(1024).optional().describe('metadata.nextCursor from the previous page.'),
    updated_since: z.string().max(64).optional().describe('Only entries updated after this RFC 3339 date-time.'),
    version: z.string().min(1).max(255).optional().describe('"latest" for latest versions only, or one exact version.'),
  })
  .strict();

export const registrySearchTool = (deps: ToolDeps) =>
  defineTool({
    name: 'registry_search',
    title: 'Search the MCP sub-registry',
    description:
      'The MCP sub-registry (GET /registry/v0.1/servers, official MCP Registry API v0.1): server.json entries of the fleet services ' +
      "(the gateway's /mcp as a streamable-http remote) and of MARKETPLACE_REGISTRY_FILE, each with its registry _meta. " +
      `Filters search (name substring), updated_since and version; at most ${REGISTRY_MAX_LIMIT} entries a page (default 30), ` +
      'metadata.nextCursor and count.',
    input: registryQuery,
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: (q) =>
      deps.registry.list({ search: q.search, limit: q.limit, cursor: q.cursor, updatedSince: q.updated_since, version: q.version }),
  });
