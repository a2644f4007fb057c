import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { MemoryStore } from '../store/memory-store';

export function createMemoryStatsTool(store: MemoryStore) {
  return defineTool({
    name: 'memory_stats',
    title: 'Memory statistics',
    description:
      'Counts of stored memories (total and by type), oldest and newest creation time, storage size in bytes and the backend in use. 30 s call time limit.',
    input: z.object({}).strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: () => store.stats(),
  });
}
