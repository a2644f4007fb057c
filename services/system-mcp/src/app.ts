import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { SERVICE_ID, type Config } from './config';
import { createTools } from './tools';

export interface SystemDeps {
  config: Config;
  logger: Logger;
}

export function createApp({ config, logger }: SystemDeps): ServiceApp {
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools(),
    healthChecks: [{ name: 'procfs', required: false, check: async () => (await import('node:fs/promises')).access('/proc/self') }],
  });
}
