import type { MemoryBank } from '../memories';
import { getContextTool } from './get-context';
import { searchMemoriesTool } from './search-memories';
import { semanticSimilarityTool } from './semantic-similarity';
import { storeMemoryTool } from './store-memory';
import { vectorSearchTool } from './vector-search';

export function createTools(bank: MemoryBank) {
  return [storeMemoryTool(bank), searchMemoriesTool(bank), semanticSimilarityTool(bank), vectorSearchTool(bank), getContextTool(bank)];
}
