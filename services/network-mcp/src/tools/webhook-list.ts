import { defineTool, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { NetworkDeps } from '../deps';

export function webhookListTool({ store }: NetworkDeps) {
  return defineTool({
    name: 'webhook_list',
    title: 'List webhooks',
    description:
      'List registered webhook definitions, oldest first, paginated (limit default 50, at most 500; nextCursor when more). ' +
      'Secrets are never shown: hasSecret says whether one is set. Also served as GET /webhooks.',
    input: z.object({ ...pageShape }).strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const page = await store.list(args.limit, args.cursor);
      return { webhooks: page.items, total: page.total, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
    },
  });
}
