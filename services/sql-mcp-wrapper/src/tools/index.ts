import type { ToolDefinition } from '@mcp-fleet/kit';
import { createConnectionTool } from './connection';
import { createQueryTool } from './query';
import { createSchemaTool } from './schema';
import type { SqlToolDeps } from './shared';

export function createTools(deps: SqlToolDeps): ToolDefinition[] {
  return [createQueryTool(deps), createSchemaTool(deps), createConnectionTool(deps)];
}
