import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { ACADEMIC, ACADEMIC_NAMES } from '../catalog';
import { research } from '../engine';
import { sourceContext, type ToolDeps } from './context';
import { limitField, queryField } from './shapes';

const year = z.number().int().min(1600).max(2200);

export const researchAcademicTool = (deps: ToolDeps) =>
  defineTool({
    name: 'research_academic',
    title: 'Academic search',
    description:
      'Papers from arXiv (Atom API), Crossref and OpenAlex at once: title, authors, date, DOI, abstract snippet and the landing URL; ' +
      'the same paper found by several sources (same DOI or URL) is one result naming them all (`alsoIn`). Optional year range. ' +
      'Failed sources are listed in `sources`. Up to 100 results.',
    input: z
      .object({
        query: queryField,
        sources: z
          .array(z.enum(ACADEMIC_NAMES))
          .min(1)
          .max(3)
          .optional()
          .describe('Which of arxiv, crossref, openalex to ask (default all three).'),
        yearFrom: year.optional().describe('Earliest publication year.'),
        yearTo: year.optional().describe('Latest publication year.'),
        limit: limitField(20),
      })
      .strict()
      .refine((v) => !v.yearFrom || !v.yearTo || v.yearFrom <= v.yearTo, {
        message: 'yearFrom must not be after yearTo',
        path: ['yearFrom'],
      }),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    handler: async ({ query, sources, yearFrom, yearTo, limit }, ctx) => {
      const list = ACADEMIC.filter((s) => !sources || (sources as string[]).includes(s.name));
      const answer = await research(
        [...list],
        sourceContext(deps, ctx.signal),
        { query, limit: Math.min(50, limit), yearFrom, yearTo },
        limit,
      );
      return { query, results: answer.items, sources: answer.sources, total: answer.total };
    },
  });
