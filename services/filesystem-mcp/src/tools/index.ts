import type { ToolDefinition } from '@mcp-fleet/kit';
import type { FsDeps } from '../lib/context';
import { createFileAnalyzeTool } from './file-analyze';
import { createFileListTool } from './file-list';
import { createFileReadTool } from './file-read';
import { createFileSearchTool } from './file-search';
import { createFileWriteTool } from './file-write';

/** The five tools, bound to one workspace and its caps. */
export function createTools(deps: FsDeps): ToolDefinition[] {
  return [
    createFileReadTool(deps),
    createFileWriteTool(deps),
    createFileListTool(deps),
    createFileSearchTool(deps),
    createFileAnalyzeTool(deps),
  ];
}
