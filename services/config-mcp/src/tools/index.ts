import type { ToolDefinition } from '@mcp-fleet/kit';
import { type BackupStore } from '../lib/backups';
import { type ConfigContext } from '../lib/context';
import { backupTool } from './backup';
import { configFileTool } from './config-file';
import { envVarsTool } from './env-vars';
import { validateTool } from './validate';

export interface ToolDeps {
  ctx: ConfigContext;
  backups: BackupStore;
}

export function createTools({ ctx, backups }: ToolDeps): ToolDefinition[] {
  return [envVarsTool(ctx), configFileTool(ctx), validateTool(ctx), backupTool(ctx, backups)];
}
