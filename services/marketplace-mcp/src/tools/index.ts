import type { ToolDefinition } from '@mcp-fleet/kit';
import type { SkillCatalog } from '../catalog';
import type { SubRegistry } from '../registry';
import { catalogValidateTool } from './catalog-validate';
import { registryGetServerTool } from './registry-get-server';
import { registrySearchTool } from './registry-search';
import { skillsListTool } from './skills-list';
import { skillsResolveTool } from './skills-resolve';

/** What the tools need: the catalog, the sub-registry and the base URL downloads are served at. */
export interface ToolDeps {
  catalog: SkillCatalog;
  registry: SubRegistry;
  baseUrl: string;
}

export function createTools(deps: ToolDeps): ToolDefinition[] {
  return [skillsListTool(deps), skillsResolveTool(deps), registrySearchTool(deps), registryGetServerTool(deps), catalogValidateTool(deps)];
}
