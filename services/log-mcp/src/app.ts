import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { type Config, SERVICE_ID } from './config';
import { LogRoots } from './lib/log-files';
import { createTools } from './tools';

export interface LogDeps {
  config: Config;
  logger: Logger;
}

export function createApp({ config, logger }: LogDeps): ServiceApp {
  const roots = new LogRoots(config);
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ config, roots }),
    healthChecks: [{ name: 'log-roots', required: false, check: async () => ({ roots: (await roots.workspace()).roots }) }],
  });
}
