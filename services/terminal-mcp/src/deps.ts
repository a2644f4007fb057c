import type { Logger, Workspace } from '@mcp-fleet/kit';
import type { Config } from './config';

export interface TerminalDeps {
  config: Config;
  workspace: Workspace;
  logger: Logger;
}
