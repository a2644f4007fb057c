import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ToolDeps } from './context';

export const getMqttStatusTool = ({ hub, config }: ToolDeps) =>
  defineTool({
    name: 'get_mqtt_status',
    title: 'MQTT connection status',
    description:
      'Connected or not, whether the stored subscriptions are in force on this connection (subscribed: the broker kept the session, or they were made again), broker address (never credentials), protocol version, client id, embedded or external, stored subscriptions, buffered counts and bytes, evictions, truncations, reconnects and the last error.',
    input: z.object({}).strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async () => ({
      connected: hub.connected,
      subscribed: hub.subscribed,
      broker: hub.brokerUrl,
      embedded: !config.MQTT_URL,
      ...(hub.embeddedPort !== undefined ? { embeddedPort: hub.embeddedPort } : {}),
      protocolVersion: hub.protocolVersion,
      clientId: config.MQTT_CLIENT_ID,
      subscriptions: await hub.subscriptions(),
      buffered: hub.buffered(),
      limits: {
        perTopic: config.MQTT_BUFFER_PER_TOPIC,
        perTopicBytes: config.MQTT_BUFFER_PER_TOPIC_BYTES,
        total: config.MQTT_BUFFER_TOTAL,
        totalBytes: config.MQTT_BUFFER_TOTAL_BYTES,
        maxPayloadBytes: config.MQTT_MAX_PAYLOAD_BYTES,
      },
      ...hub.stats,
      ...(hub.lastError ? { lastError: hub.lastError } : {}),
    }),
  });
