import type { ToolDefinition } from '@mcp-fleet/kit';
import type { Keyspace } from '../keyspace';
import type { KvStore } from '../store/kv-store';
import { createCacheTool } from './cache';
import { createSessionTool } from './session';

export interface ToolDeps {
  store: KvStore;
  keyspace: Keyspace;
  maxValueBytes: number;
  maxResponseBytes: number;
}

export function createTools(deps: ToolDeps): ToolDefinition[] {
  return [createCacheTool(deps), createSessionTool(deps)];
}
