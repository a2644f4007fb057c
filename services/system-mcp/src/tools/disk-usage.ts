import path from 'node:path';
import { AppError, defineTool } from '@mcp-fleet/kit';
import { listDisks, statDisk } from '@mcp-fleet/host';
import { z } from 'zod';

export const diskUsageTool = defineTool({
  name: 'disk_usage',
  title: 'Disk usage',
  description:
    'Total, used and free bytes of every mounted filesystem with real storage, or of the one filesystem holding `path` (an absolute path). At most 500 mounts are returned.',
  input: z
    .object({
      path: z.string().min(1).max(4096).optional().describe('Absolute path; report only the filesystem that holds it.'),
    })
    .strict(),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: async (args) => {
    if (args.path !== undefined) {
      if (args.path.includes('\0') || !path.isAbsolute(args.path)) {
        throw new AppError('VALIDATION_ERROR', 'path must be an absolute path without NUL bytes.', {
          details: [{ path: 'path', message: 'absolute path required' }],
        });
      }
      try {
        return { disks: [await statDisk(path.normalize(args.path))] };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') throw new AppError('NOT_FOUND', `No such path: ${args.path}.`);
        if (code === 'EACCES' || code === 'EPERM') throw new AppError('FORBIDDEN', `No permission to read ${args.path}.`);
        throw err;
      }
    }
    const disks = await listDisks();
    return { disks: disks.slice(0, 500), ...(disks.length > 500 ? { truncated: true } : {}) };
  },
});
