import type { ToolDefinition } from '@mcp-fleet/kit';
import type { MemoryStore } from '../store/memory-store';
import { createDeleteMemoryTool } from './delete-memory';
import { createListMemoriesTool } from './list-memories';
import { createMemoryStatsTool } from './memory-stats';
import { createSearchMemoriesTool } from './search-memories';
import { createStoreMemoryTool } from './store-memory';

export interface ToolDeps {
  store: MemoryStore;
  /** Page size cap of list and search answers, in characters. */
  maxPageChars: number;
}

export function createTools({ store, maxPageChars }: ToolDeps): ToolDefinition[] {
  return [
    createStoreMemoryTool(store),
    createListMemoriesTool(store, maxPageChars),
    createSearchMemoriesTool(store, maxPageChars),
    createDeleteMemoryTool(store),
    createMemoryStatsTool(store),
  ];
}
