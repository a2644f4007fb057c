import { decodeCursor, defineTool, encodeCursor } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { ToolDeps } from './context';
import { checkTopic } from './validate';

export const listMessagesTool = ({ hub, config }: ToolDeps) =>
  defineTool({
    name: 'list_messages',
    title: 'List received MQTT messages',
    description: `Received messages from the bounded buffer, newest first, matching a topic filter (default #), optionally since a time. limit default 50, max 500; nextCursor pages on. Payloads are UTF-8 text or base64 (encoding says which); payloads over ${config.MQTT_MAX_PAYLOAD_BYTES} bytes were truncated (truncated: true).`,
    input: z
      .object({
        filter: z.string().min(1).default('#').describe('Topic filter (+ and # allowed).'),
        since: z.iso.datetime({ offset: true }).optional().describe('Only messages received at or after this ISO time.'),
        limit: z.number().int().min(1).max(500).default(50).describe('Page size (max 500).'),
        cursor: z.string().max(512).optional().describe('nextCursor of the previous page.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: (args) => {
      checkTopic(args.filter, config.MQTT_MAX_TOPIC_BYTES, 'filter');
      const before = args.cursor ? decodeCursor(args.cursor) : undefined;
      const { items, more } = hub.list(args.filter, args.since ? Date.parse(args.since) : undefined, before, args.limit);
      return { messages: items, ...(more ? { nextCursor: encodeCursor(items[items.length - 1].seq) } : {}) };
    },
  });
