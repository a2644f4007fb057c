import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { OutboundPolicy } from '@mcp-fleet/outbound';
import { decodeKey, SERVICE_ID, type Config } from './config';
import type { SecurityDeps } from './deps';
import { createTools } from './tools';

export interface SecurityAppDeps {
  config: Config;
  logger: Logger;
  /** Process-level default metrics (off in tests that build many apps). */
  defaultMetrics?: boolean;
}

export function createApp({ config, logger, defaultMetrics = true }: SecurityAppDeps): ServiceApp {
  const deps: SecurityDeps = {
    config,
    policy: OutboundPolicy.fromConfig(config),
    jwtKey: config.JWT_SECRET ? new TextEncoder().encode(config.JWT_SECRET) : undefined,
    encryptionKey: config.ENCRYPTION_KEY ? decodeKey(config.ENCRYPTION_KEY) : undefined,
  };
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools(deps),
    defaultMetrics,
    healthChecks: [
      {
        name: 'keys',
        required: false,
        // Reports what is configured, never a value.
        check: () => ({
          jwt: deps.jwtKey ? 'configured' : 'not configured',
          adminToken: config.SECURITY_ADMIN_TOKEN ? 'configured' : 'not configured',
          encryptionKey: deps.encryptionKey ? 'configured' : 'not configured',
        }),
      },
    ],
  });
}
