import { z } from 'zod';
import { forwardSpec } from './forward';

export const listMemories = forwardSpec({
  name: 'list_memories',
  service: 'memory-mcp',
  title: 'List memories',
  description: 'The stored memories, newest first: the first 50 with nextCursor when there are more. No arguments.',
  input: z.object({}).strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});
