import { z } from 'zod';
import { parseOutboundUrl } from '@mcp-fleet/outbound';
import { KINDS, SOURCE_NAMES } from '../catalog';

export const queryField = z.string().trim().min(1).max(500).describe('What to look for, in plain words (up to 500 characters).');
export const limitField = (fallback: number, max = 100) =>
  z
    .number()
    .int()
    .min(1)
    .max(max)
    .default(fallback)
    .describe(`Results in the answer after merging and ranking (1-${max}, default ${fallback}).`);
export const kindsField = z
  .array(z.enum(KINDS))
  .min(1)
  .max(KINDS.length)
  .optional()
  .describe(
    'Kinds of sources to ask: academic (arXiv, Crossref, OpenAlex), news (Hacker News, feeds), encyclopedia (Wikipedia), web (SearxNG). Default: all.',
  );
export const onlyField = z
  .array(z.enum(SOURCE_NAMES))
  .min(1)
  .max(SOURCE_NAMES.length)
  .optional()
  .describe('Ask only these sources by name.');
export const feedUrl = z
  .string()
  .max(2048)
  .superRefine((v, ctx) => {
    try {
      parseOutboundUrl(v, 'feeds');
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });
export const feedsField = z
  .array(feedUrl)
  .max(10)
  .optional()
  .describe('RSS or Atom feed URLs to search besides the configured ones (at most 10).');
