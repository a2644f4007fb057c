import { type BackupStore } from '../lib/backups';
import { type ConfigContext } from '../lib/context';
import { backupTool } from './backup';
import { configFileTool } from './config-file';
import { envVarsTool } from './env-vars';
import { validateTool } from './validate';

export function createTools(ctx: ConfigContext, backups: BackupStore) {
  return [envVarsTool(ctx), configFileTool(ctx), validateTool(ctx), backupTool(ctx, backups)];
}
