import { AppError, defineTool } from '@mcp-fleet/kit';
import { filterSchema, vectorSchema } from '@mcp-fleet/vector-store';
import { z } from 'zod';
import { toMemory, type MemoryBank } from '../memories';
import { round } from '../text';
import { textSchema } from './shared';

export function vectorSearchTool(bank: MemoryBank) {
  return defineTool({
    name: 'vector_search',
    title: 'Nearest memories',
    description:
      'Memories nearest to a text (embedded first) or to a raw vector of the collection size, by cosine similarity (higher is better), with an optional Qdrant-style payload filter over content/type/tags/importance/createdAtMs/metadata.* and a minimum score. limit 1-100 (default 10). Time limit: TOOL_TIMEOUT_MS.',
    input: z
      .object({
        query: textSchema('Text to search near').optional(),
        vector: vectorSchema.optional(),
        limit: z.number().int().min(1).max(100).default(10).describe('Results (1-100, default 10).'),
        filter: filterSchema.optional(),
        scoreThreshold: z.number().min(-1).max(1).optional().describe('Minimum cosine similarity (-1..1).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      if ((args.query === undefined) === (args.vector === undefined)) {
        throw new AppError('VALIDATION_ERROR', 'Give exactly one of query (text) or vector.', {
          details: [{ path: 'query', message: 'query or vector' }],
        });
      }
      const vector = args.vector ?? (await bank.embed([args.query!], ctx.signal))[0];
      const hits = await bank.search(vector, { limit: args.limit, filter: args.filter, scoreThreshold: args.scoreThreshold });
      return { memories: hits.map((h) => ({ ...toMemory(h), score: round(h.score) })), count: hits.length };
    },
  });
}
