import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { memoryFilter, toMemory, type MemoryBank } from '../memories';
import { round, tokenize } from '../text';
import { tagsSchema, textSchema, typeSchema } from './shared';

export function searchMemoriesTool(bank: MemoryBank) {
  return defineTool({
    name: 'search_memories',
    title: 'Text search over memories',
    description: `Case-insensitive term search over memory contents: a memory matches when it contains at least one query word; it is ranked by the sum over matched words of 1 + ln(occurrences), then by importance and recency. Optional type and tags (every tag must be present) narrow the set. Reads at most ${bank.scanLimit} memories per call (truncated: true beyond); limit 1-100. Time limit: TOOL_TIMEOUT_MS.`,
    input: z
      .object({
        query: textSchema('Words to look for'),
        limit: z.number().int().min(1).max(100).default(10).describe('Results to return (1-100, default 10).'),
        type: typeSchema.optional(),
        tags: tagsSchema.optional(),
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const terms = [...new Set(tokenize(args.query))].slice(0, 64);
      if (terms.length === 0) {
        throw new AppError('VALIDATION_ERROR', 'query has no letters or digits to search for.', {
          details: [{ path: 'query', message: 'no words' }],
        });
      }
      const { points, truncated } = await bank.scan(memoryFilter(args.type, args.tags), ctx.signal);
      const scored = [];
      for (const p of points) {
        const memory = toMemory(p);
        const counts = new Map<string, number>();
        for (const token of tokenize(memory.content)) if (terms.includes(token)) counts.set(token, (counts.get(token) ?? 0) + 1);
        if (counts.size === 0) continue;
        let score = 0;
        for (const n of counts.values()) score += 1 + Math.log(n);
        scored.push({ ...memory, score: round(score, 4), matchedTerms: [...counts.keys()] });
      }
      scored.sort((a, b) => b.score - a.score || b.importance - a.importance || b.createdAt.localeCompare(a.createdAt));
      return {
        query: args.query,
        terms,
        memories: scored.slice(0, args.limit),
        total: scored.length,
        scanned: points.length,
        ...(truncated ? { truncated: true } : {}),
      };
    },
  });
}
