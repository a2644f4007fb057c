import { diskUsageTool } from './disk-usage';
import { processListTool } from './process-list';
import { resourceMonitorTool } from './resource-monitor';
import { systemInfoTool } from './system-info';

export const tools = [resourceMonitorTool, processListTool, diskUsageTool, systemInfoTool];
