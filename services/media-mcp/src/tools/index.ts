import type { ToolDefinition } from '@mcp-fleet/kit';
import type { MediaDeps } from '../deps';
import { mediaAnalyzeTool } from './media-analyze';
import { mediaProcessTool } from './media-process';
import { mediaQueryTool } from './media-query';

export function createTools(deps: MediaDeps): ToolDefinition[] {
  return [mediaAnalyzeTool(deps), mediaProcessTool(deps), mediaQueryTool(deps)];
}
