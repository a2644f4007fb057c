import type { ToolDefinition } from '@mcp-fleet/kit';
import type { ToolDeps } from './context';
import { detectCircularImportsTool } from './detect-circular-imports';
import { findCallersTool } from './find-callers';
import { findDependenciesTool } from './find-dependencies';
import { indexPythonProjectTool } from './index-python-project';
import { queryCodeGraphTool } from './query-code-graph';

export type { ToolDeps } from './context';

export function createTools(deps: ToolDeps): ToolDefinition[] {
  return [
    indexPythonProjectTool(deps),
    queryCodeGraphTool(deps),
    findDependenciesTool(deps),
    findCallersTool(deps),
    detectCircularImportsTool(deps),
  ];
}
