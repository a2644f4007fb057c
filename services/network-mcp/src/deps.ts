import type { OutboundClient } from '@mcp-fleet/outbound';
import type { Config } from './config';
import type { WebhookStore } from './webhook-store';

/** What the tools share: configuration, the policy-bound HTTP client and the webhook store. */
export interface NetworkDeps {
  config: Config;
  client: OutboundClient;
  store: WebhookStore;
}
