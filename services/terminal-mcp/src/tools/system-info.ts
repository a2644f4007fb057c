import { defineTool } from '@mcp-fleet/kit';
import { systemInfo } from '@mcp-fleet/host';
import { z } from 'zod';

export const systemInfoTool = defineTool({
  name: 'system_info',
  title: 'System information',
  description:
    'Host name, OS, architecture, CPU count and model, total and free memory, load average, uptime and Node version of the machine running the commands. Cheap; no caps needed.',
  input: z.object({}).strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: () => systemInfo(),
});
