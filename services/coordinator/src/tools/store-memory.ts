import { z } from 'zod';
import { forwardSpec } from './forward';

export const storeMemory = forwardSpec({
  name: 'store_memory',
  service: 'memory-mcp',
  title: 'Store a memory',
  description:
    'Store a memory (memory-mcp): content up to 100,000 characters under your key; storing again with the same key updates that entry (created: false). Returns the stored entry.',
  input: z
    .object({
      key: z
        .string()
        .min(1)
        .max(256)
        .optional()
        .describe(
          'Your own name for the entry (1-256 characters); the same key again updates that entry. Without one, each call adds an entry.',
        ),
      content: z.string().min(1).max(100_000).describe('The text to remember (1-100,000 characters); it is what search matches.'),
    })
    .strict(),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
});
