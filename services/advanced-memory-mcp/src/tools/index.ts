import type { ToolDefinition } from '@mcp-fleet/kit';
import type { MemoryBank } from '../memories';
import { getContextTool } from './get-context';
import { searchMemoriesTool } from './search-memories';
import { semanticSimilarityTool } from './semantic-similarity';
import { storeMemoryTool } from './store-memory';
import { vectorSearchTool } from './vector-search';

export interface ToolDeps {
  bank: MemoryBank;
}

export function createTools({ bank }: ToolDeps): ToolDefinition[] {
  return [storeMemoryTool(bank), searchMemoriesTool(bank), semanticSimilarityTool(bank), vectorSearchTool(bank), getContextTool(bank)];
}
