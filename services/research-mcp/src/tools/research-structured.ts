import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { byName, sourcesFor } from '../catalog';
import { research } from '../engine';
import { extractive, withModel } from '../structured';
import { sourceContext, type ToolDeps } from './context';
import { kindsField, onlyField } from './shapes';

export const researchStructuredTool = (deps: ToolDeps) =>
  defineTool({
    name: 'research_structured',
    title: 'Structured research result',
    description:
      'Answers a question with a typed document: {question, findings: [{statement, citations: [{title, url, source}]}], method}. ' +
      'The findings are written by the configured chat model (LLM_BASE_URL) strictly from the numbered results, or extracted from the ' +
      'results themselves when no model is configured (method "extractive"); every citation is a result with its URL. ' +
      'The results and the per-source report come with it. Up to 30 results considered, up to 20 findings.',
    input: z
      .object({
        question: z.string().trim().min(1).max(500).describe('The question to answer (up to 500 characters).'),
        results: z.number().int().min(1).max(30).default(10).describe('Results the findings are built from, 1-30 (default 10).'),
        maxFindings: z.number().int().min(1).max(20).default(5).describe('Findings at most, 1-20 (default 5).'),
        kinds: kindsField,
        only: onlyField,
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: true },
    handler: async ({ question, results, maxFindings, kinds, only }, ctx) => {
      const list = byName(sourcesFor(deps.config, kinds), only);
      const answer = await research(
        list,
        sourceContext(deps, ctx.signal),
        { query: question, limit: Math.min(25, Math.max(5, results)) },
        results,
      );
      const document = deps.config.LLM_BASE_URL
        ? await withModel(question, answer.items, maxFindings, { ...deps, signal: ctx.signal })
        : extractive(question, answer.items, maxFindings);
      return { ...document, results: answer.items, sources: answer.sources };
    },
  });
