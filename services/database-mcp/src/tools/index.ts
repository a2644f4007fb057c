import type { ToolDefinition } from '@mcp-fleet/kit';
import { createDbQueryTool } from './db-query';
import { createDbSampleTool } from './db-sample';
import { createDbSchemaTool } from './db-schema';
import { createDbTablesTool } from './db-tables';
import type { DbToolDeps } from './shared';

export function createTools(deps: DbToolDeps): ToolDefinition[] {
  return [createDbQueryTool(deps), createDbTablesTool(deps), createDbSchemaTool(deps), createDbSampleTool(deps)];
}
