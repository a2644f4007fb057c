import { baseEnvShape, int, loadConfig, unsetIfEmpty, type Env } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'mqtt-mcp';

export const configSchema = z.object({
  ...baseEnvShape,
  MQTT_URL: unsetIfEmpty(z.url({ protocol: /^mqtts?$/ })).describe(
    'Broker to use (mqtt:// or mqtts://); unset, the service runs an embedded aedes broker on MQTT_EMBEDDED_PORT.',
  ),
  MQTT_USERNAME: unsetIfEmpty(z.string()).describe('Broker user name (never logged).'),
  MQTT_PASSWORD: unsetIfEmpty(z.string()).describe('Broker password (never logged).'),
  MQTT_CLIENT_ID: z
    .string()
    .regex(/^[\w.:-]{1,64}$/)
    .default('mcp-fleet-mqtt-mcp')
    .describe('Stable client id of the persistent session; two instances on one broker need different ids.'),
  MQTT_PROTOCOL_VERSION: z.coerce
    .number()
    .pipe(z.union([z.literal(4), z.literal(5)]))
    .optional()
    .describe('MQTT protocol version, 4 (3.1.1) or 5; defaults to 5 for MQTT_URL and 4 for the embedded broker.'),
  MQTT_EMBEDDED_PORT: int(7119, 0, 65535).describe('Loopback port of the embedded aedes broker (0 picks a free port).'),
  MQTT_EMBEDDED_HOST: z
    .string()
    .min(1)
    .default('127.0.0.1')
    .describe('Interface of the embedded broker; loopback unless you mean to expose it.'),
  MQTT_RECONNECT_MS: int(2000, 50, 600_000).describe('Wait between reconnect attempts.'),
  MQTT_CONNECT_TIMEOUT_MS: int(5000, 100, 120_000).describe('Time limit of one connection attempt and of a publish acknowledgement.'),
  MQTT_SESSION_EXPIRY_S: int(86_400, 0, 4_294_967_295).describe(
    'MQTT 5 session expiry: how long the broker keeps the session and queued messages.',
  ),
  MQTT_MAX_PAYLOAD_BYTES: int(262_144, 1, 268_435_455).describe(
    'Largest payload accepted on publish; received payloads above it are truncated and flagged.',
  ),
  MQTT_MAX_TOPIC_BYTES: int(1024, 1, 65_535).describe('Longest topic or filter (UTF-8 bytes) accepted.'),
  MQTT_BUFFER_PER_TOPIC: int(1000, 1, 1_000_000).describe('Received messages kept per topic; the oldest are evicted first.'),
  MQTT_BUFFER_PER_TOPIC_BYTES: int(4 * 1024 * 1024, 1, 2 ** 31).describe('Payload bytes kept per topic.'),
  MQTT_BUFFER_TOTAL: int(10_000, 1, 10_000_000).describe('Received messages kept over all topics.'),
  MQTT_BUFFER_TOTAL_BYTES: int(64 * 1024 * 1024, 1, 2 ** 31).describe('Payload bytes kept over all topics.'),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
