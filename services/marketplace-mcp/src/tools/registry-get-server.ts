import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ToolDeps } from './context';

export const registryGetServerTool = (deps: ToolDeps) =>
  defineTool({
    name: 'registry_get_server',
    title: 'Get one sub-registry server',
    description:
      'One server of the MCP sub-registry by its reverse-DNS name (e.g. io.mcp-fleet/memory-mcp): the ServerResponse ' +
      '({server, _meta}) of a version ("latest" by default), or with allVersions every version newest first. NOT_FOUND for an ' +
      'unknown name or version.',
    input: z
      .object({
        name: z.string().min(3).max(200).describe('Server name, "namespace/name".'),
        version: z.string().min(1).max(255).default('latest').describe('Exact version or "latest" (default).'),
        allVersions: z.boolean().default(false).describe('Answer every version ({servers, metadata}) instead of one.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: ({ name, version, allVersions }) => (allVersions ? deps.registry.versions(name) : deps.registry.get(name, version)),
  });
