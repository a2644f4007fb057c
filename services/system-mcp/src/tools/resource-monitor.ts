import { defineTool } from '@mcp-fleet/kit';
import { sampleResources } from '@mcp-fleet/host';
import { z } from 'zod';

export const resourceMonitorTool = defineTool({
  name: 'resource_monitor',
  title: 'Resource monitor',
  description:
    'CPU busy percentage (overall and per core) measured over a sample window, memory use, load average and this service’s own memory. The sample window is 50-5000 ms (default 250).',
  input: z
    .object({
      sampleMs: z.number().int().min(50).max(5000).default(250).describe('How long to measure CPU use, in milliseconds.'),
    })
    .strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: (args, ctx) => sampleResources(args.sampleMs, ctx.signal),
});
