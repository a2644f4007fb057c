import { defineTool, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { NetworkDeps } from '../deps';
import { WEBHOOK_ID } from '../webhook-store';

export function webhookLogsTool({ config, store }: NetworkDeps) {
  return defineTool({
    name: 'webhook_logs',
    title: 'Webhook delivery logs',
    description:
      `Recent inbound webhook deliveries, newest first: delivered, failed (target error), rejected (bad signature) or skipped ` +
      `(event not subscribed). Bodies and signatures are not kept. The log holds the newest ${config.WEBHOOK_LOG_MAX} rows ` +
      `(WEBHOOK_LOG_MAX); pages of up to 500 (default 50) with a nextCursor that new deliveries do not shift. Also served as GET /webhook-logs.`,
    input: z
      .object({
        ...pageShape,
        webhookId: z.string().regex(WEBHOOK_ID, 'a webhook id such as wh_...').optional().describe('Only deliveries of this webhook.'),
        status: z.enum(['delivered', 'failed', 'rejected', 'skipped']).optional().describe('Only deliveries with this outcome.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const page = await store.logs(args);
      return { logs: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
    },
  });
}
