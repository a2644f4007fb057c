import type { ToolDefinition } from '@mcp-fleet/kit';
import type { ToolDeps } from './context';
import { catalogValidateTool } from './catalog-validate';
import { registryGetServerTool } from './registry-get-server';
import { registrySearchTool } from './registry-search';
import { skillsListTool } from './skills-list';
import { skillsResolveTool } from './skills-resolve';

export function createTools(deps: ToolDeps): ToolDefinition[] {
  return [skillsListTool(deps), skillsResolveTool(deps), registrySearchTool(deps), registryGetServerTool(deps), catalogValidateTool(deps)];
}
