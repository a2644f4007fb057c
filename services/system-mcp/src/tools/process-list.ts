import { defineTool, pageShape, paginate } from '@mcp-fleet/kit';
import { listProcesses } from '@mcp-fleet/host';
import { z } from 'zod';

export const processListTool = defineTool({
  name: 'process_list',
  title: 'Process list',
  description:
    'Running processes (pid, parent, user, CPU and memory share, resident memory, elapsed time, command), optionally filtered by a case-insensitive command substring, sorted by cpu, memory or pid. Paginated: limit 1-500 (default 50) with cursor.',
  input: z
    .object({
      filter: z.string().max(200).optional().describe('Keep processes whose command contains this text.'),
      sortBy: z.enum(['cpu', 'memory', 'pid']).default('cpu'),
      ...pageShape,
    })
    .strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async (args) => {
    const needle = args.filter?.toLowerCase();
    const rows = (await listProcesses()).filter((p) => !needle || p.command.toLowerCase().includes(needle));
    const key = {
      cpu: (p: (typeof rows)[number]) => -p.cpuPercent,
      memory: (p: (typeof rows)[number]) => -p.rssKb,
      pid: (p: (typeof rows)[number]) => p.pid,
    }[args.sortBy];
    rows.sort((a, b) => key(a) - key(b) || a.pid - b.pid);
    const page = paginate(rows, args.limit, args.cursor);
    return { processes: page.items, total: page.total, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  },
});
