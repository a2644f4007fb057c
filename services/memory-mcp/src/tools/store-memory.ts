import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { boundedJson, keySchema, MAX_CONTENT_CHARS, MAX_METADATA_BYTES, MAX_TAGS, tagSchema, typeSchema } from '../schemas';
import type { MemoryStore } from '../store/memory-store';

/** PostgreSQL text and jsonb cannot hold NUL; refuse it in both backends alike. */
function hasNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(hasNul);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => k.includes('\u0000') || hasNul(v));
  return false;
}

export function createStoreMemoryTool(store: MemoryStore) {
  return defineTool({
    name: 'store_memory',
    title: 'Store a memory',
    description:
      `Store a memory: content (1-${MAX_CONTENT_CHARS} characters), type (default note), up to ${MAX_TAGS} tags, importance 0-1 (default 0.5) and a metadata object ` +
      `(at most ${MAX_METADATA_BYTES / 1024} KiB as JSON). With a key that already exists, that entry is updated in place (same id, createdAt kept) and created is false. ` +
      'Returns the stored entry; 30 s call time limit.',
    input: z
      .object({
        key: keySchema.optional(),
        content: z
          .string()
          .min(1)
          .max(MAX_CONTENT_CHARS)
          .refine((c) => !c.includes('\u0000'), 'must not contain NUL characters')
          .describe(`The text to remember (1-${MAX_CONTENT_CHARS} characters); it is what search matches.`),
        type: typeSchema.default('note'),
        tags: z.array(tagSchema).max(MAX_TAGS).default([]).describe(`Up to ${MAX_TAGS} tags, for filtering (duplicates are dropped).`),
        importance: z.number().min(0).max(1).default(0.5).describe('How much this matters, 0 to 1 (default 0.5).'),
        metadata: z
          .record(z.string(), boundedJson())
          .default({})
          .describe(`Free-form JSON object stored with the entry (at most ${MAX_METADATA_BYTES} bytes as JSON).`),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args) => {
      if (hasNul(args.metadata)) {
        throw new AppError('VALIDATION_ERROR', 'metadata must not contain NUL characters (\\u0000) in keys or strings.', {
          details: [{ path: 'metadata', message: 'NUL character' }],
        });
      }
      const bytes = Buffer.byteLength(JSON.stringify(args.metadata), 'utf8');
      if (bytes > MAX_METADATA_BYTES) {
        throw new AppError(
          'VALIDATION_ERROR',
          `metadata is ${bytes} bytes as JSON; at most ${MAX_METADATA_BYTES} are allowed. Keep large data in content.`,
          {
            details: [{ path: 'metadata', message: `at most ${MAX_METADATA_BYTES} bytes` }],
          },
        );
      }
      return store.store({ ...args, tags: [...new Set(args.tags)] });
    },
  });
}
