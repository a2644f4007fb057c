import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { mountMcpEndpoint } from '@mcp-fleet/kit/mcp';
import { SERVICE_ID, type Config } from './config';
import { MqttHub } from './hub';
import { createTools } from './tools';

export interface MqttDeps {
  config: Config;
  logger: Logger;
}

export interface MqttApp extends ServiceApp {
  hub: MqttHub;
}

export function createApp({ config, logger }: MqttDeps): MqttApp {
  const hub = new MqttHub(config, logger);
  const tools = createTools({ hub, config });
  const kit = createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools,
    defaultMetrics: true,
    healthChecks: [
      {
        name: 'mqtt',
        required: false,
        check: async () => {
          if (!hub.connected)
            throw new Error(`not connected to ${hub.brokerUrl || 'the broker'}${hub.lastError ? `: ${hub.lastError}` : ''}`);
        },
      },
    ],
    // POST /mcp: the official SDK server, stateless Streamable HTTP with JSON answers, serving the
    // same tool definitions as /tools/* (one definition, two surfaces).
    extend: (app, handle) => mountMcpEndpoint(app, handle, { name: SERVICE_ID, tools, bodyLimit: config.BODY_LIMIT }),
    onClose: () => hub.close(),
  });
  return Object.assign(kit, { hub });
}
