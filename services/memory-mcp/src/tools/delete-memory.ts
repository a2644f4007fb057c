import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { memoryIdSchema } from '../schemas';
import type { MemoryStore } from '../store/memory-store';

export function createDeleteMemoryTool(store: MemoryStore) {
  return defineTool({
    name: 'delete_memory',
    title: 'Delete a memory',
    description: 'Delete one memory by id. NOT_FOUND when no memory has that id (already deleted, or never stored). 30 s call time limit.',
    input: z.object({ memory_id: memoryIdSchema }).strict(),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      if (!(await store.delete(args.memory_id))) {
        throw new AppError('NOT_FOUND', `No memory ${args.memory_id}; list_memories or search_memories show the ids that exist.`);
      }
      return { memory_id: args.memory_id, deleted: true };
    },
  });
}
