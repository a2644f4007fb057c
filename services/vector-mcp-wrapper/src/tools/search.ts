import { defineTool } from '@mcp-fleet/kit';
import { collectionNameSchema, filterSchema, vectorSchema, type VectorStore } from '@mcp-fleet/vector-store';
import { z } from 'zod';

export function searchTool(store: VectorStore) {
  return defineTool({
    name: 'search',
    title: 'Similarity search',
    description:
      'Nearest points to a vector in one collection, best first, with optional Qdrant-style payload filter and score threshold. Cosine/Dot: score is a similarity and the threshold keeps score >= it; Euclid: score is a distance and the threshold keeps distance <= it. limit 1-500 (default 10). Embedded store: exact brute-force search. Time limit: the service TOOL_TIMEOUT_MS.',
    input: z
      .object({
        collection: collectionNameSchema.describe('Collection to search.'),
        vector: vectorSchema,
        limit: z.number().int().min(1).max(500).default(10).describe('Hits to return (1-500, default 10).'),
        filter: filterSchema.optional(),
        scoreThreshold: z.number().optional().describe('Cosine/Dot: minimum score; Euclid: maximum distance.'),
        withPayload: z.boolean().default(true).describe('Include payloads.'),
        withVectors: z.boolean().default(false).describe('Include vectors.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const info = await store.collectionInfo(args.collection);
      const hits = await store.search(args.collection, {
        vector: args.vector,
        limit: args.limit,
        filter: args.filter,
        scoreThreshold: args.scoreThreshold,
        withPayload: args.withPayload,
        withVectors: args.withVectors,
      });
      return {
        collection: info.name,
        distance: info.distance,
        scoreOrder: info.distance === 'Euclid' ? 'lower_is_better' : 'higher_is_better',
        hits,
      };
    },
  });
}
