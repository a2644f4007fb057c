import { z } from 'zod';
import { forwardSpec } from './forward';
import { wordsField } from './fields';

export const researchQuery = forwardSpec({
  name: 'research_query',
  service: 'research-mcp',
  title: 'Research search',
  description:
    'Generic research across the public sources research-mcp asks (arXiv, Crossref, OpenAlex, Wikipedia, Hacker News, feeds, SearxNG when configured), merged and ranked; every result carries its source URL. Up to `sources` results (1-50, default 10).',
  input: z
    .object({
      query: wordsField(500),
      sources: z.number().int().min(1).max(50).optional().describe('How many results (cited sources) the answer holds, 1-50 (default 10).'),
    })
    .strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
});
