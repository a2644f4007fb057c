import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { MemoryBank } from '../memories';
import { cosine, round } from '../text';
import { textSchema } from './shared';

export function semanticSimilarityTool(bank: MemoryBank) {
  return defineTool({
    name: 'semantic_similarity',
    title: 'Similarity of texts',
    description:
      'Cosine similarity (-1..1, higher is more similar) of the embeddings of two texts ({text_a, text_b}) or of every pair among 2-32 texts ({texts}, answered as a matrix and the most similar pair). Each text up to 16000 characters. With the local embedder the similarity is lexical (shared words and word pieces). Time limit: TOOL_TIMEOUT_MS.',
    input: z
      .object({
        text_a: textSchema('First text').optional(),
        text_b: textSchema('Second text').optional(),
        texts: z
          .array(textSchema('A text'))
          .min(2)
          .max(32)
          .optional()
          .describe('2-32 texts to compare pairwise (instead of text_a/text_b).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const pair = args.text_a !== undefined || args.text_b !== undefined;
      if (pair === (args.texts !== undefined) || (pair && (args.text_a === undefined || args.text_b === undefined))) {
        throw new AppError('VALIDATION_ERROR', 'Give either text_a and text_b, or texts (2-32 strings), not both.', {
          details: [{ path: 'texts', message: 'text_a + text_b, or texts' }],
        });
      }
      const texts = pair ? [args.text_a!, args.text_b!] : args.texts!;
      const vectors = await bank.embed(texts, ctx.signal);
      const base = { embedder: bank.embedder.kind, dimensions: vectors[0].length };
      if (pair) return { ...base, similarity: round(cosine(vectors[0], vectors[1])) };
      const matrix = vectors.map((a) => vectors.map((b) => round(cosine(a, b))));
      let best = { a: 0, b: 1, similarity: -Infinity };
      for (let i = 0; i < texts.length; i++) {
        for (let j = i + 1; j < texts.length; j++) if (matrix[i][j] > best.similarity) best = { a: i, b: j, similarity: matrix[i][j] };
      }
      return { ...base, matrix, mostSimilar: best };
    },
  });
}
