import type { ToolDefinition } from '@mcp-fleet/kit';
import { type Config } from '../config';
import { type LogRoots } from '../lib/log-files';
import { logAnalysisTool } from './log-analysis';
import { logSearchTool } from './log-search';

export interface ToolDeps {
  config: Config;
  roots: LogRoots;
}

export function createTools({ config, roots }: ToolDeps): ToolDefinition[] {
  return [logSearchTool(config, roots), logAnalysisTool(config, roots)];
}
