import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ToolDeps } from './context';
import { checkTopic, isWellFormed } from './validate';

export const publishMessageTool = ({ hub, config }: ToolDeps) =>
  defineTool({
    name: 'publish_message',
    title: 'Publish an MQTT message',
    description: `Publishes text or JSON to a concrete topic (no wildcards, no empty levels, no $ topics) at qos 0, 1 or 2, optionally retained. Payload cap ${config.MQTT_MAX_PAYLOAD_BYTES} bytes, topic cap ${config.MQTT_MAX_TOPIC_BYTES} bytes. MQTT 5 brokers also get content type, user properties and message expiry. A broker that is down answers UPSTREAM_UNAVAILABLE at once.`,
    input: z
      .object({
        topic: z.string().min(1).describe('Concrete topic, e.g. sensors/room1/temp.'),
        payload: z
          .union([z.string(), z.record(z.string(), z.json()), z.array(z.json()), z.number(), z.boolean(), z.null()])
          .describe('Text, or any JSON value (sent serialised).'),
        qos: z.number().int().min(0).max(2).default(0).describe('Quality of service 0, 1 or 2.'),
        retain: z.boolean().default(false).describe('Ask the broker to keep it as the retained message of the topic.'),
        contentType: z.string().max(256).optional().describe('MQTT 5 content type (JSON payloads default to application/json).'),
        userProperties: z.record(z.string().max(256), z.string().max(1024)).optional().describe('MQTT 5 user properties.'),
        expirySeconds: z.number().int().min(1).max(4_294_967_295).optional().describe('MQTT 5 message expiry interval.'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args) => {
      checkTopic(args.topic, config.MQTT_MAX_TOPIC_BYTES, 'topic');
      const isText = typeof args.payload === 'string';
      const text = isText ? (args.payload as string) : JSON.stringify(args.payload);
      if (!isWellFormed(text)) throw new AppError('VALIDATION_ERROR', 'The payload is not valid UTF-8 (lone surrogate).');
      const body = Buffer.from(text, 'utf8');
      if (body.length > config.MQTT_MAX_PAYLOAD_BYTES)
        throw new AppError(
          'VALIDATION_ERROR',
          `The payload is ${body.length} bytes, over MQTT_MAX_PAYLOAD_BYTES (${config.MQTT_MAX_PAYLOAD_BYTES}).`,
        );
      const contentType = args.contentType ?? (isText ? undefined : 'application/json');
      await hub.publish(args.topic, body, {
        qos: args.qos as 0 | 1 | 2,
        retain: args.retain,
        properties: {
          ...(contentType ? { contentType } : {}),
          ...(args.userProperties ? { userProperties: args.userProperties } : {}),
          ...(args.expirySeconds ? { messageExpiryInterval: args.expirySeconds } : {}),
        },
      });
      return {
        published: true,
        topic: args.topic,
        bytes: body.length,
        qos: args.qos,
        retain: args.retain,
        protocolVersion: hub.protocolVersion,
      };
    },
  });
