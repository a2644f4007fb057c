import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { byName, sourcesFor } from '../catalog';
import { research } from '../engine';
import { sourceContext, type ToolDeps } from './context';
import { kindsField, onlyField, queryField } from './shapes';

export const researchQueryTool = (deps: ToolDeps) =>
  defineTool({
    name: 'research_query',
    title: 'Research search',
    description:
      'Generic research: asks every source of the chosen kinds at once (arXiv, Crossref, OpenAlex, Wikipedia, Hacker News, configured feeds, SearxNG when configured), ' +
      'merges duplicates (same DOI or URL) and ranks the results; every result carries its source URL. A source that fails or times out is listed in ' +
      '`sources` with its error while the others answer. Up to 50 results; each source is time-limited, rate-limited and cached.',
    input: z
      .object({
        query: queryField,
        sources: z
          .number()
          .int()
          .min(1)
          .max(50)
          .default(10)
          .describe('How many results (cited sources) the answer holds, 1-50 (default 10).'),
        kinds: kindsField,
        only: onlyField,
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    handler: async ({ query, sources, kinds, only }, ctx) => {
      const list = byName(sourcesFor(deps.config, kinds), only);
      const perSource = Math.min(25, Math.max(5, sources));
      const answer = await research(list, sourceContext(deps, ctx.signal), { query, limit: perSource }, sources);
      return { query, results: answer.items, sources: answer.sources, total: answer.total };
    },
  });
