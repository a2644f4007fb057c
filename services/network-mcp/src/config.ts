import { baseEnvShape, int, csv, loadConfig, type Env } from '@mcp-fleet/kit';
import { outboundEnvShape } from '@mcp-fleet/outbound';
import { z } from 'zod';

export const SERVICE_ID = 'network-mcp';

export const configSchema = z.object({
  ...baseEnvShape,
  ...outboundEnvShape,
  OUTBOUND_CA_FILE: z
    .string()
    .min(1)
    .optional()
    .describe("PEM file of extra CAs trusted by http_request, api_test and webhook forwarding (added to Node's roots)."),
  HTTP_MAX_RESPONSE_BYTES: int(5 * 1024 * 1024, 1024, 64 * 1024 * 1024).describe(
    'The largest maxResponseBytes a caller may ask http_request for.',
  ),
  WEBHOOK_LOG_MAX: int(1000, 10, 1_000_000).describe('Delivery log rows kept; older ones are pruned.'),
  WEBHOOK_MAX: int(1000, 1, 100_000).describe('Webhook definitions allowed at once.'),
  WEBHOOK_TOLERANCE_SECONDS: int(300, 10, 86_400).describe(
    'Inbound signatures older or newer than this many seconds are refused (replay window).',
  ),
  WEBHOOK_FORWARD_TIMEOUT_MS: int(10_000, 100, 120_000).describe('Time limit for forwarding one inbound event to its target.'),
  DNS_SERVERS: csv([]).describe('DNS servers for dns_lookup ("1.1.1.1", "127.0.0.1:5353"); the system\'s when empty.'),
  DNS_TIMEOUT_MS: int(5000, 100, 30_000).describe('Time limit of one dns_lookup.'),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
