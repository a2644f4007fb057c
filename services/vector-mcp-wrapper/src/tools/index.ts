import type { ToolDefinition } from '@mcp-fleet/kit';
import type { VectorStore } from '@mcp-fleet/vector-store';
import { collectionTool } from './collection';
import { searchTool } from './search';
import { vectorTool, type VectorToolOptions } from './vector';

export interface ToolDeps {
  store: VectorStore;
  options: VectorToolOptions;
}

export function createTools({ store, options }: ToolDeps): ToolDefinition[] {
  return [collectionTool(store), vectorTool(store, options), searchTool(store)];
}
