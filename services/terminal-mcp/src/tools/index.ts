import type { ToolDefinition } from '@mcp-fleet/kit';
import type { TerminalDeps } from '../deps';
import { directoryTool } from './directory';
import { executeCommandTool } from './execute-command';
import { processesTool } from './processes';
import { systemInfoTool } from './system-info';

export function createTools(deps: TerminalDeps): ToolDefinition[] {
  return [executeCommandTool(deps), directoryTool(deps), processesTool, systemInfoTool];
}
