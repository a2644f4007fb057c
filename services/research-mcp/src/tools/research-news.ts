import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { sourcesFor } from '../catalog';
import { research } from '../engine';
import { sourceContext, type ToolDeps } from './context';
import { feedsField, limitField } from './shapes';

export const researchNewsTool = (deps: ToolDeps) =>
  defineTool({
    name: 'research_news',
    title: 'News research',
    description:
      'News on a topic from Hacker News (Algolia search) and RSS/Atom feeds (the configured RESEARCH_FEEDS plus up to 10 the caller names), ' +
      'newest-relevant first, duplicates merged; `since` keeps only newer items. An empty query lists the latest items of the feeds. ' +
      'Every result carries its URL; failed sources are listed in `sources`. Up to 100 results.',
    input: z
      .object({
        query: z
          .string()
          .trim()
          .max(500)
          .default('')
          .describe('Topic words; empty lists the latest feed items (Hacker News needs a query).'),
        feeds: feedsField,
        since: z.iso
          .datetime({ offset: true })
          .or(z.iso.date())
          .optional()
          .describe('Only items published after this date or time (ISO 8601).'),
        limit: limitField(20),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    handler: async ({ query, feeds, since, limit }, ctx) => {
      const list = sourcesFor(deps.config, ['news'], feeds).filter((s) => query || s.name !== 'hackernews');
      const answer = await research(
        list,
        sourceContext(deps, ctx.signal),
        { query, limit: Math.min(100, limit), since: since ? new Date(since) : undefined },
        limit,
      );
      return { query, results: answer.items, sources: answer.sources, total: answer.total };
    },
  });
