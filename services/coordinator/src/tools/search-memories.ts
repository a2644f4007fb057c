import { z } from 'zod';
import { forwardSpec } from './forward';
import { wordsField } from './fields';

export const searchMemories = forwardSpec({
  name: 'search_memories',
  service: 'memory-mcp',
  title: 'Search memories',
  description:
    'Ranked full-text search over the stored memories (words, "phrases", OR, -exclusions); the best 50 with a score and a snippet, and nextCursor when there are more.',
  input: z.object({ query: wordsField(1000) }).strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});
