import fs from 'node:fs/promises';
import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { SERVICE_ID, type Config } from './config';
import type { TerminalDeps } from './deps';
import { createTools } from './tools';

export interface TerminalAppDeps {
  config: Config;
  logger: Logger;
}

export async function createApp({ config, logger }: TerminalAppDeps): Promise<ServiceApp> {
  const workspace = await Workspace.open(config.WORKSPACE_ROOTS);
  const deps: TerminalDeps = { config, workspace, logger };
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools(deps),
    healthChecks: [
      {
        name: 'workspace',
        check: async () => {
          await Promise.all(workspace.roots.map((r) => fs.access(r)));
          return { roots: workspace.roots.length, shell: config.TERMINAL_ALLOW_SHELL };
        },
      },
    ],
    routes: (r) => {
      r.tool('post', '/command', 'execute_command');
      r.tool('get', '/directory', 'directory');
      r.tool('get', '/processes', 'processes');
    },
  });
}
