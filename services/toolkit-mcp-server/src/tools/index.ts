import type { ToolDefinition } from '@mcp-fleet/kit';
import { analyzeTool } from './analyze';
import type { ToolDeps } from './context';
import { fileretrieveTool } from './fileretrieve';
import { MODEL_TOOLS, modelTool } from './model';
import { precommitTool } from './precommit';
import { tracerTool } from './tracer';

export type { ToolDeps } from './context';

export function createTools(deps: ToolDeps): ToolDefinition[] {
  const byName = new Map<string, ToolDefinition>(MODEL_TOOLS.map((s) => [s.name, modelTool(deps, s)]));
  const offline: Record<string, ToolDefinition> = {
    analyze: analyzeTool(deps),
    precommit: precommitTool(deps),
    tracer: tracerTool(deps),
    fileretrieve: fileretrieveTool(deps),
  };
  // the contract's order
  return ['thinkdeep', 'codereview', 'debug', 'analyze', 'chat', 'precommit', 'testgen', 'refactor', 'tracer', 'fileretrieve'].map(
    (n) => byName.get(n) ?? offline[n],
  );
}
