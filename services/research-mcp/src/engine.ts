/**
 * Runs sources side by side: each under its own time limit, rate limit and cache (the fetcher), a
 * failed or slow one reported in `sources` while the others still answer; then merges and ranks.
 */
import { toAppError } from '@mcp-fleet/kit';
import { mergeAndRank, type Item } from './items';
import type { Source, SourceContext, SourceQuery } from './sources/types';

export interface SourceReport {
  name: string;
  ok: boolean;
  ms: number;
  count: number;
  cached?: boolean;
  error?: string;
  code?: string;
}

export interface ResearchAnswer {
  query: string;
  items: Item[];
  sources: SourceReport[];
  total: number;
}

export async function research(sources: Source[], ctx: SourceContext, q: SourceQuery, limit: number): Promise<ResearchAnswer> {
  const runs = await Promise.all(
    sources.map(async (s): Promise<{ report: SourceReport; items: Item[] }> => {
      const why = s.unavailable?.(ctx.config);
      if (why) return { report: { name: s.name, ok: false, ms: 0, count: 0, error: why, code: 'NOT_CONFIGURED' }, items: [] };
      const started = performance.now();
      try {
        const res = await s.search(ctx, q);
        const ms = Math.round(performance.now() - started);
        return { report: { name: s.name, ok: true, ms, count: res.items.length, cached: res.cached }, items: res.items };
      } catch (err) {
        const e = toAppError(err);
        const ms = Math.round(performance.now() - started);
        // an INTERNAL error keeps its cause in the log only
        const message = e.code === 'INTERNAL' ? 'the source failed unexpectedly (see the service log)' : e.message;
        return { report: { name: s.name, ok: false, ms, count: 0, error: message, code: e.code }, items: [] };
      }
    }),
  );
  const lists = runs.map((r) => r.items);
  const total = lists.reduce((n, l) => n + l.length, 0);
  return { query: q.query, items: mergeAndRank(q.query, lists, limit), sources: runs.map((r) => r.report), total };
}
