import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ToolDeps } from './context';
import { checkTopic } from './validate';

export const subscribeTopicTool = ({ hub, config }: ToolDeps) =>
  defineTool({
    name: 'subscribe_topic',
    title: 'Subscribe to an MQTT topic filter',
    description: `Subscribes to a topic filter (+ for one level, # for the rest) at qos 0-2. Stored in SQLite and re-established after reconnects and restarts; received messages go to a bounded buffer read with list_messages. Filter cap ${config.MQTT_MAX_TOPIC_BYTES} bytes. While the broker is down the subscription is stored and established: false.`,
    input: z
      .object({
        filter: z.string().min(1).describe('Topic filter, e.g. sensors/+/temp or sensors/#.'),
        qos: z.number().int().min(0).max(2).default(1).describe('Maximum quality of service to receive at.'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    handler: async (args) => {
      checkTopic(args.filter, config.MQTT_MAX_TOPIC_BYTES, 'filter');
      return { filter: args.filter, qos: args.qos, ...(await hub.subscribe(args.filter, args.qos as 0 | 1 | 2)) };
    },
  });

export const unsubscribeTopicTool = ({ hub, config }: ToolDeps) =>
  defineTool({
    name: 'unsubscribe_topic',
    title: 'Unsubscribe from an MQTT topic filter',
    description:
      'Removes a stored subscription (exact filter as subscribed) and unsubscribes at the broker. Buffered messages stay until evicted.',
    input: z.object({ filter: z.string().min(1).describe('The filter exactly as given to subscribe_topic.') }).strict(),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    handler: async (args) => {
      checkTopic(args.filter, config.MQTT_MAX_TOPIC_BYTES, 'filter');
      return { filter: args.filter, ...(await hub.unsubscribe(args.filter)) };
    },
  });
