import { decodeCursor, defineTool, encodeCursor, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import { MAX_QUERY_TERMS, parseSearchQuery } from '../query';
import { cutToBudget, memorySize, tagSchema, typeSchema } from '../schemas';
import type { MemoryStore } from '../store/memory-store';

/** Deepest offset a cursor may reach; ranking a result set deeper than this is not worth it. */
const MAX_OFFSET = 10_000;

export function createSearchMemoriesTool(store: MemoryStore, maxPageChars: number) {
  return defineTool({
    name: 'search_memories',
    title: 'Search memories',
    description:
      'Ranked full-text search over memory content (SQLite FTS5 bm25 embedded, PostgreSQL ts_rank when configured), best first, with a score and a snippet ' +
      '(matches marked **like this**). Query syntax: words (all must match), "exact phrase", a OR b, -excluded; other punctuation is ignored, and ' +
      `at most ${MAX_QUERY_TERMS} terms. Optional type and tags filters (all tags must be present). Pages of up to 500 (default 50) with nextCursor, ` +
      `${MAX_OFFSET} results deep at most; a page is cut before ${maxPageChars} characters of text (truncated: true). 30 s call time limit.`,
    input: z
      .object({
        query: z.string().min(1).max(1000).describe('What to look for (1-1000 characters): words, "phrases", OR, -exclusions.'),
        type: typeSchema.optional(),
        tags: z
          .array(tagSchema)
          .max(10)
          .optional()
          .describe('Only memories carrying all of these tags (up to 10; comma-separated in a query string).'),
        ...pageShape,
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const query = parseSearchQuery(args.query);
      const offset = decodeCursor(args.cursor);
      const limit = Math.min(args.limit, Math.max(0, MAX_OFFSET - offset));
      const hits = limit > 0 ? await store.search({ query, type: args.type, tags: args.tags ?? [], offset, limit: limit + 1 }) : [];
      const page = hits.slice(0, limit);
      const { kept, cut } = cutToBudget(page, (h) => memorySize(h.memory) + h.snippet.length, maxPageChars);
      const more = cut || hits.length > limit;
      const next = offset + kept.length;
      return {
        results: kept.map((h) => ({ ...h.memory, score: h.score, snippet: h.snippet })),
        ...(more && next < MAX_OFFSET ? { nextCursor: encodeCursor(next) } : {}),
        ...(cut || (more && next >= MAX_OFFSET) ? { truncated: true } : {}),
      };
    },
  });
}
