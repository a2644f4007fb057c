import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { NetworkDeps } from '../deps';

export function webhookDeleteTool({ store }: NetworkDeps) {
  return defineTool({
    name: 'webhook_delete',
    title: 'Delete webhook',
    description:
      'Delete one webhook definition; later events to its inbound path get 404. Its delivery log rows stay until pruned. Also served as DELETE /webhooks/{webhook_id}.',
    input: z.object({ webhook_id: z.string().min(1).max(64).describe('The id returned by webhook_create (wh_...).') }).strict(),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      if (!(await store.delete(args.webhook_id))) {
        throw new AppError('NOT_FOUND', `No webhook ${args.webhook_id}; webhook_list shows the registered ones.`);
      }
      return { deleted: args.webhook_id };
    },
  });
}
