import type { ToolDefinition } from '@mcp-fleet/kit';
import type { ToolDeps } from './context';
import { researchAcademicTool } from './research-academic';
import { researchDomainTool } from './research-domain';
import { researchNewsTool } from './research-news';
import { researchQueryTool } from './research-query';
import { researchStructuredTool } from './research-structured';

export type { ToolDeps } from './context';

export function createTools(deps: ToolDeps): ToolDefinition[] {
  return [
    researchQueryTool(deps),
    researchNewsTool(deps),
    researchAcademicTool(deps),
    researchDomainTool(deps),
    researchStructuredTool(deps),
  ];
}
