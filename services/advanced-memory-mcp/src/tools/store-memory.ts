import { randomUUID } from 'node:crypto';
import { AppError, defineTool } from '@mcp-fleet/kit';
import { payloadSchema } from '@mcp-fleet/vector-store';
import { z } from 'zod';
import type { MemoryBank } from '../memories';
import { tagsSchema, textSchema, typeSchema } from './shared';

const MAX_METADATA_BYTES = 16 * 1024;

export function storeMemoryTool(bank: MemoryBank) {
  return defineTool({
    name: 'store_memory',
    title: 'Store a memory',
    description: `Embed a text and store it as a memory (a point in the "${bank.collection}" vector collection) with type, tags, importance and metadata. content up to 16000 characters; metadata up to ${MAX_METADATA_BYTES} bytes of JSON. Returns the new memory's UUID and the vector dimensions. Remote embeddings are bounded by EMBEDDINGS_TIMEOUT_MS; the whole call by TOOL_TIMEOUT_MS.`,
    input: z
      .object({
        content: textSchema('The text to remember'),
        type: typeSchema.default('note'),
        tags: tagsSchema.default([]),
        importance: z.number().min(0).max(1).default(0.5).describe('Importance from 0 to 1 (default 0.5).'),
        metadata: payloadSchema.optional().describe(`Free-form JSON object (at most ${MAX_METADATA_BYTES} bytes).`),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async (args, ctx) => {
      const metadata = args.metadata ?? {};
      const bytes = Buffer.byteLength(JSON.stringify(metadata));
      if (bytes > MAX_METADATA_BYTES) {
        throw new AppError('PAYLOAD_TOO_LARGE', `metadata is ${bytes} bytes of JSON; the limit is ${MAX_METADATA_BYTES}.`, {
          details: [{ path: 'metadata', message: `at most ${MAX_METADATA_BYTES} bytes` }],
        });
      }
      const now = new Date();
      const payload = {
        content: args.content,
        type: args.type,
        tags: [...new Set(args.tags)],
        importance: args.importance,
        metadata,
        createdAt: now.toISOString(),
        createdAtMs: now.getTime(),
      };
      const stored = await bank.add(payload, randomUUID(), ctx.signal);
      return { ...stored, createdAt: payload.createdAt, embedder: bank.embedder.kind };
    },
  });
}
