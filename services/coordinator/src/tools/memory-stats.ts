import { z } from 'zod';
import { forwardSpec } from './forward';

export const memoryStats = forwardSpec({
  name: 'memory_stats',
  service: 'memory-mcp',
  title: 'Memory statistics',
  description:
    'Counts of stored memories (total and by type), oldest and newest creation time, storage size and the backend in use. No arguments.',
  input: z.object({}).strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});
