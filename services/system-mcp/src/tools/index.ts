import type { ToolDefinition } from '@mcp-fleet/kit';
import { diskUsageTool } from './disk-usage';
import { processListTool } from './process-list';
import { resourceMonitorTool } from './resource-monitor';
import { systemInfoTool } from './system-info';

/** system-mcp's tools need no dependencies: they read the host they run on. */
export function createTools(): ToolDefinition[] {
  return [resourceMonitorTool, processListTool, diskUsageTool, systemInfoTool];
}
