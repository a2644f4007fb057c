import { defineTool, pageShape, paginate } from '@mcp-fleet/kit';
import { listProcesses } from '@mcp-fleet/host';
import { z } from 'zod';

export const processesTool = defineTool({
  name: 'processes',
  title: 'Processes',
  description:
    'Running processes (pid, parent pid, user, CPU and memory share, resident memory, elapsed time, command) sorted by pid, optionally filtered by a case-insensitive command substring. ' +
    'Paginated: limit 1-500 (default 50) with cursor. Reads ps, limited to 5 s.',
  input: z
    .object({
      filter: z.string().min(1).max(200).optional().describe('Keep processes whose command contains this text (case-insensitive).'),
      ...pageShape,
    })
    .strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async (args) => {
    const needle = args.filter?.toLowerCase();
    const rows = (await listProcesses()).filter((p) => !needle || p.command.toLowerCase().includes(needle)).sort((a, b) => a.pid - b.pid);
    const page = paginate(rows, args.limit, args.cursor);
    return { processes: page.items, total: page.total, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  },
});
