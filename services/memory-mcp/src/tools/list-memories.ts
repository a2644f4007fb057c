import { defineTool, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import { cutToBudget, memorySize, tagSchema, typeSchema } from '../schemas';
import { decodeListCursor, encodeListCursor, type MemoryStore } from '../store/memory-store';

export function createListMemoriesTool(store: MemoryStore, maxPageChars: number) {
  return defineTool({
    name: 'list_memories',
    title: 'List memories',
    description:
      'List memories newest first (or oldest first), optionally only one type or one tag. Pages of up to 500 (default 50) with nextCursor; ' +
      `a page is also cut before it passes ${maxPageChars} characters of memory text (truncated: true). 30 s call time limit.`,
    input: z
      .object({
        type: typeSchema.optional(),
        tag: tagSchema.optional(),
        order: z.enum(['newest', 'oldest']).default('newest').describe('By creation time: newest (default) or oldest first.'),
        ...pageShape,
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const rows = await store.list({
        type: args.type,
        tag: args.tag,
        order: args.order,
        after: args.cursor === undefined ? undefined : decodeListCursor(args.cursor),
        limit: args.limit + 1,
      });
      const { kept, cut } = cutToBudget(rows.slice(0, args.limit), memorySize, maxPageChars);
      const more = cut || rows.length > args.limit;
      const last = kept[kept.length - 1];
      return {
        memories: kept,
        ...(more && last ? { nextCursor: encodeListCursor({ createdAt: Date.parse(last.createdAt), id: last.id }) } : {}),
        ...(cut ? { truncated: true } : {}),
      };
    },
  });
}
