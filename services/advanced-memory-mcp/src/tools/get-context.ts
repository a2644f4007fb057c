import { AppError, defineTool } from '@mcp-fleet/kit';
import { pointIdSchema, type Filter, type PointId, type ScoredPoint } from '@mcp-fleet/vector-store';
import { z } from 'zod';
import { toMemory, type Memory, type MemoryBank } from '../memories';
import { cosine, round } from '../text';
import { textSchema } from './shared';

const MAX_ITEMS = 100;

type Relation = 'anchor' | 'match' | 'shared_tags' | 'semantic';

interface Item extends Memory {
  score: number;
  relation: Relation;
  depth: number;
  via?: PointId;
}

export function getContextTool(bank: MemoryBank) {
  return defineTool({
    name: 'get_context',
    title: 'Context bundle',
    description: `A bundle of memories around a query text or a memory_id: the best matches (limit 1-20), then, for depth 1-3 rounds, memories related to those found so far: nearest ones sharing a tag ("shared_tags") and nearest ones above minScore ("semantic"), relatedPerMemory each. Deduplicated; every item has its cosine score to the anchor, its relation, depth and the memory it was reached from (via). At most ${MAX_ITEMS} items (truncated: true beyond). Time limit: TOOL_TIMEOUT_MS.`,
    input: z
      .object({
        query: textSchema('Text to build the context around').optional(),
        memory_id: pointIdSchema.optional().describe('A memory id (UUID) to build the context around, instead of query.'),
        limit: z.number().int().min(1).max(20).default(5).describe('Best matches to start from (1-20, default 5).'),
        depth: z.number().int().min(0).max(3).default(1).describe('Rounds of related-memory expansion (0-3, default 1).'),
        relatedPerMemory: z
          .number()
          .int()
          .min(1)
          .max(10)
          .default(3)
          .describe('Related memories looked up per memory and relation (1-10, default 3).'),
        minScore: z.number().min(-1).max(1).default(0.2).describe('Minimum cosine similarity for "semantic" relations (default 0.2).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      if ((args.query === undefined) === (args.memory_id === undefined)) {
        throw new AppError('VALIDATION_ERROR', 'Give exactly one of query or memory_id.', {
          details: [{ path: 'query', message: 'query or memory_id' }],
        });
      }
      const items = new Map<PointId, Item>();
      let anchor: number[];
      if (args.memory_id !== undefined) {
        const point = await bank.get(args.memory_id);
        if (!point) throw new AppError('NOT_FOUND', `No memory with id ${args.memory_id}; store_memory returns the ids.`);
        anchor = point.vector!;
        items.set(point.id, { ...toMemory(point), score: 1, relation: 'anchor', depth: 0 });
      } else {
        anchor = (await bank.embed([args.query!], ctx.signal))[0];
      }
      const vectors = new Map<PointId, number[]>();
      let truncated = false;
      const seen = (): Filter | undefined => (items.size > 0 ? { must_not: [{ has_id: [...items.keys()] }] } : undefined);
      const admit = (hits: ScoredPoint[], relation: Relation, depth: number, via?: PointId): Item[] => {
        const added: Item[] = [];
        for (const h of hits) {
          if (items.has(h.id)) continue;
          if (items.size >= MAX_ITEMS) {
            truncated = true;
            break;
          }
          vectors.set(h.id, h.vector!);
          const item: Item = {
            ...toMemory(h),
            score: round(cosine(anchor, h.vector!)),
            relation,
            depth,
            ...(via !== undefined ? { via } : {}),
          };
          items.set(h.id, item);
          added.push(item);
        }
        return added;
      };

      let frontier = admit(await bank.search(anchor, { limit: args.limit, filter: seen(), withVectors: true }), 'match', 0);
      for (let depth = 1; depth <= args.depth && frontier.length > 0 && !truncated; depth++) {
        const next: Item[] = [];
        for (const item of frontier) {
          ctx.signal.throwIfAborted();
          const vector = vectors.get(item.id)!;
          if (item.tags.length > 0) {
            const filter: Filter = { must: [{ key: 'tags', match: { any: item.tags } }], ...seen() };
            next.push(
              ...admit(
                await bank.search(vector, { limit: args.relatedPerMemory, filter, withVectors: true }),
                'shared_tags',
                depth,
                item.id,
              ),
            );
          }
          const near = await bank.search(vector, {
            limit: args.relatedPerMemory,
            filter: seen(),
            scoreThreshold: args.minScore,
            withVectors: true,
          });
          next.push(...admit(near, 'semantic', depth, item.id));
        }
        frontier = next;
      }
      const order: Record<Relation, number> = { anchor: 0, match: 1, shared_tags: 2, semantic: 2 };
      const bundle = [...items.values()].sort((a, b) => order[a.relation] - order[b.relation] || a.depth - b.depth || b.score - a.score);
      return {
        anchor: args.memory_id !== undefined ? { memoryId: args.memory_id } : { query: args.query },
        items: bundle,
        count: bundle.length,
        ...(truncated ? { truncated: true } : {}),
      };
    },
  });
}
