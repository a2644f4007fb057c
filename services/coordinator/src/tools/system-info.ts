import { z } from 'zod';
import { forwardSpec } from './forward';

export const systemInfo = forwardSpec({
  name: 'system_info',
  service: 'system-mcp',
  title: 'System information',
  description:
    'Host name, OS, architecture, CPUs, total and free memory, load average, uptime and Node version of the host system-mcp runs on. No arguments.',
  input: z.object({}).strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
});
