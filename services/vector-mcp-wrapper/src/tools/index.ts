import type { VectorStore } from '@mcp-fleet/vector-store';
import { collectionTool } from './collection';
import { searchTool } from './search';
import { vectorTool, type VectorToolOptions } from './vector';

export function createTools(store: VectorStore, options: VectorToolOptions) {
  return [collectionTool(store), vectorTool(store, options), searchTool(store)];
}
