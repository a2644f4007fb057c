import { actionInput, AppError, defineTool } from '@mcp-fleet/kit';
import { collectionNameSchema, filterSchema, payloadSchema, pointIdSchema, vectorSchema, type VectorStore } from '@mcp-fleet/vector-store';
import { z } from 'zod';

export interface VectorToolOptions {
  maxPointsPerCall: number;
  maxPayloadBytes: number;
}

function inputFor({ maxPointsPerCall }: VectorToolOptions) {
  const collection = collectionNameSchema.describe('Collection name.');
  const point = z
    .object({ id: pointIdSchema, vector: vectorSchema, payload: payloadSchema.optional() })
    .strict()
    .describe('A point: id, vector (collection size) and optional payload object.');
  const points = z.array(point).min(1).max(maxPointsPerCall).describe(`1-${maxPointsPerCall} points.`);
  const ids = z.array(pointIdSchema).min(1).max(maxPointsPerCall).describe(`1-${maxPointsPerCall} point ids.`);
  return z.discriminatedUnion('action', [
    z.object({ action: z.literal('upsert').describe('Insert points or replace those with the same ids.'), collection, points }).strict(),
    z
      .object({
        action: z.literal('insert').describe('Insert new points; CONFLICT if any id exists (nothing written).'),
        collection,
        points,
      })
      .strict(),
    z
      .object({
        action: z.literal('update').describe('Change the vector and/or payload of existing points (NOT_FOUND if any id is unknown).'),
        collection,
        points: z
          .array(
            z
              .object({ id: pointIdSchema, vector: vectorSchema.optional(), payload: payloadSchema.optional() })
              .strict()
              .describe('Id plus a new vector, a payload, or both.'),
          )
          .min(1)
          .max(maxPointsPerCall)
          .describe(`1-${maxPointsPerCall} updates.`),
        payloadMode: z
          .enum(['merge', 'replace'])
          .default('merge')
          .describe('merge: set the given keys; replace: the payload becomes exactly the given object.'),
      })
      .strict(),
    z
      .object({
        action: z.literal('delete').describe('Delete points by ids or by a non-empty filter (exactly one).'),
        collection,
        ids: ids.optional(),
        filter: filterSchema.optional(),
      })
      .strict(),
    z
      .object({
        action: z.literal('fetch').describe('Fetch points by id; unknown ids are listed in notFound.'),
        collection,
        ids,
        withPayload: z.boolean().default(true).describe('Include payloads.'),
        withVectors: z.boolean().default(false).describe('Include vectors (Cosine vectors come back normalised).'),
      })
      .strict(),
    z
      .object({
        action: z.literal('scroll').describe('Page through points in id order (integers, then UUIDs), optionally filtered.'),
        collection,
        filter: filterSchema.optional(),
        limit: z.number().int().min(1).max(500).default(50).describe('Points per page (1-500, default 50).'),
        offset: pointIdSchema.optional().describe('nextOffset from the previous page.'),
        withPayload: z.boolean().default(true).describe('Include payloads.'),
        withVectors: z.boolean().default(false).describe('Include vectors.'),
      })
      .strict(),
    z
      .object({ action: z.literal('count').describe('Count points, optionally filtered.'), collection, filter: filterSchema.optional() })
      .strict(),
  ]);
}

export function vectorTool(store: VectorStore, options: VectorToolOptions) {
  return defineTool({
    name: 'vector',
    title: 'Vector points',
    description: `Write and read points of a collection. action "upsert"/"insert" {collection, points: [{id, vector, payload?}]}, "update" {collection, points: [{id, vector?, payload?}], payloadMode}, "delete" {collection, ids | filter}, "fetch" {collection, ids}, "scroll" {collection, filter?, limit <= 500, offset?}, "count" {collection, filter?}. Ids are unsigned integers or UUID strings. At most ${options.maxPointsPerCall} points or ids per call; payloads at most ${options.maxPayloadBytes} bytes of JSON each; vectors must have exactly the collection's size (VALIDATION_ERROR names it) and finite float32 values. A call that fails writes nothing. Time limit: the service TOOL_TIMEOUT_MS.`,
    // listed as one object (a model API refuses a top-level oneOf); validated per action by the union
    input: actionInput(inputFor(options)),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args) => {
      switch (args.action) {
        case 'upsert':
          return store.upsert(args.collection, args.points);
        case 'insert': {
          const existing = await store.fetch(
            args.collection,
            args.points.map((p) => p.id),
            { withPayload: false },
          );
          if (existing.length > 0) {
            throw new AppError(
              'CONFLICT',
              `Point id ${existing
                .slice(0, 10)
                .map((p) => p.id)
                .join(', ')} already exists in "${args.collection}"; nothing was written. Use action "upsert" to replace points.`,
            );
          }
          const { upserted } = await store.upsert(args.collection, args.points);
          return { inserted: upserted };
        }
        case 'update':
          return store.update(args.collection, args.points, { payloadMode: args.payloadMode });
        case 'delete':
          if ((args.ids === undefined) === (args.filter === undefined)) {
            throw new AppError('VALIDATION_ERROR', 'Give exactly one of ids or filter to delete points.', {
              details: [{ path: 'ids', message: 'exactly one of ids or filter' }],
            });
          }
          return store.delete(args.collection, args.ids ? { ids: args.ids } : { filter: args.filter! });
        case 'fetch': {
          const points = await store.fetch(args.collection, args.ids, { withPayload: args.withPayload, withVectors: args.withVectors });
          const found = new Set(points.map((p) => p.id));
          const notFound = [...new Set(args.ids)].filter((id) => !found.has(id));
          return { points, notFound };
        }
        case 'scroll':
          return store.scroll(args.collection, {
            filter: args.filter,
            limit: args.limit,
            offset: args.offset,
            withPayload: args.withPayload,
            withVectors: args.withVectors,
          });
        case 'count':
          return { count: await store.count(args.collection, args.filter) };
      }
    },
  });
}
