import type { MemoryStore } from '../store/memory-store';
import { createDeleteMemoryTool } from './delete-memory';
import { createListMemoriesTool } from './list-memories';
import { createMemoryStatsTool } from './memory-stats';
import { createSearchMemoriesTool } from './search-memories';
import { createStoreMemoryTool } from './store-memory';

export function createTools(store: MemoryStore, maxPageChars: number) {
  return [
    createStoreMemoryTool(store),
    createListMemoriesTool(store, maxPageChars),
    createSearchMemoriesTool(store, maxPageChars),
    createDeleteMemoryTool(store),
    createMemoryStatsTool(store),
  ];
}
