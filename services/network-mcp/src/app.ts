import fs from 'node:fs/promises';
import path from 'node:path';
import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { OutboundClient, OutboundPolicy } from '@mcp-fleet/outbound';
import { SERVICE_ID, type Config } from './config';
import { createTools } from './tools';
import { registerInboundWebhooks } from './webhook-inbound';
import { WebhookStore } from './webhook-store';

export interface NetworkAppDeps {
  config: Config;
  logger: Logger;
  /** Overrides the outbound policy built from OUTBOUND_ALLOWLIST (tests inject a resolver). */
  policy?: OutboundPolicy;
  /** Process-level default metrics (off in tests that build many apps). */
  defaultMetrics?: boolean;
}

export async function createApp({ config, logger, policy, defaultMetrics = true }: NetworkAppDeps): Promise<ServiceApp> {
  const ca = config.OUTBOUND_CA_FILE ? await fs.readFile(config.OUTBOUND_CA_FILE, 'utf8') : undefined;
  const client = new OutboundClient({ policy: policy ?? OutboundPolicy.fromConfig(config), logger, ca, userAgent: `${SERVICE_ID}/0.1` });
  const store = await WebhookStore.open(path.join(config.DATA_DIR, SERVICE_ID, 'webhooks.sqlite'), config.WEBHOOK_LOG_MAX);
  const deps = { config, client, store };
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools(deps),
    defaultMetrics,
    healthChecks: [{ name: 'webhook-store', check: () => store.ping() }],
    extend: (app, kit) => registerInboundWebhooks(app, kit, deps),
    routes: (r) => {
      r.tool('get', '/webhooks', 'webhook_list');
      r.tool('get', '/webhook-logs', 'webhook_logs');
      r.tool('delete', '/webhooks/:webhook_id', 'webhook_delete');
    },
    onClose: async () => {
      await client.close();
      await store.close();
    },
  });
}
