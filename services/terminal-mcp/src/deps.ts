import type { Logger } from '@mcp-fleet/kit';
import type { Workspace } from '@mcp-fleet/kit/workspace';
import type { Sandbox } from '@mcp-fleet/sandbox';
import type { Config } from './config';

export interface TerminalDeps {
  config: Config;
  workspace: Workspace;
  logger: Logger;
  /** Every command runs inside it. */
  sandbox: Sandbox;
}
