import fs from 'node:fs/promises';
import { createServiceApp, type Logger, type ServiceApp, secretFilesFrom } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { Sandbox, sandboxHealth } from '@mcp-fleet/sandbox';
import { SERVICE_ID, type Config } from './config';
import type { TerminalDeps } from './deps';
import { createTools } from './tools';

export interface TerminalAppDeps {
  config: Config;
  logger: Logger;
}

export async function createApp({ config, logger }: TerminalAppDeps): Promise<ServiceApp> {
  const workspace = await Workspace.open(config.WORKSPACE_ROOTS, secretFilesFrom(config, logger));
  const sandbox = Sandbox.open(config, logger);
  const deps: TerminalDeps = { config, workspace, logger, sandbox };
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
      // Without a sandbox commands are refused (NOT_CONFIGURED); the rest of the service still works.
      { name: 'sandbox', required: false, check: () => sandboxHealth(sandbox) },
    ],
    routes: (r) => {
      r.tool('post', '/command', 'execute_command');
      r.tool('get', '/directory', 'directory');
      r.tool('get', '/processes', 'processes');
    },
  });
}
