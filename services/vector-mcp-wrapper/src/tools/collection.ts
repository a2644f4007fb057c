import { actionInput, AppError, defineTool, pageShape, paginate } from '@mcp-fleet/kit';
import { collectionNameSchema, distanceSchema, MAX_DIMENSIONS, type VectorStore } from '@mcp-fleet/vector-store';
import { z } from 'zod';

const input = z.discriminatedUnion('action', [
  z
    .object({
      action: z.literal('create').describe('Create a collection.'),
      name: collectionNameSchema,
      size: z.number().int().min(1).max(MAX_DIMENSIONS).describe(`Vector dimensions (1-${MAX_DIMENSIONS}).`),
      distance: distanceSchema.default('Cosine'),
    })
    .strict(),
  z.object({ action: z.literal('delete').describe('Delete a collection and all its points.'), name: collectionNameSchema }).strict(),
  z.object({ action: z.literal('list').describe('List collection names, paginated.'), ...pageShape }).strict(),
  z
    .object({ action: z.literal('info').describe('Size, distance and point count of one collection.'), name: collectionNameSchema })
    .strict(),
]);

export function collectionTool(store: VectorStore) {
  return defineTool({
    name: 'collection',
    title: 'Vector collections',
    description:
      'Manage vector collections. action "create" {name, size 1-4096, distance Cosine|Euclid|Dot} (CONFLICT if it exists), "delete" {name}, "info" {name} (NOT_FOUND if unknown), "list" {limit <= 500, cursor}. Cosine and Dot scores are similarities (higher is better); Euclid scores are distances (lower is better). Time limit: the service TOOL_TIMEOUT_MS.',
    // listed as one object (a model API refuses a top-level oneOf); validated per action by input
    input: actionInput(input),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args) => {
      switch (args.action) {
        case 'create':
          return { created: await store.createCollection({ name: args.name, size: args.size, distance: args.distance }) };
        case 'delete':
          if (!(await store.deleteCollection(args.name))) {
            throw new AppError('NOT_FOUND', `Collection "${args.name}" does not exist; nothing was deleted.`);
          }
          return { deleted: args.name };
        case 'info':
          return { collection: await store.collectionInfo(args.name) };
        case 'list': {
          const page = paginate(await store.listCollections(), args.limit, args.cursor);
          return { collections: page.items, total: page.total, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
        }
      }
    },
  });
}
