import fs from 'node:fs/promises';
import { AppError, defineTool, pageShape, paginate } from '@mcp-fleet/kit';
import { z } from 'zod';
import { BACKUP_ID, type BackupStore } from '../lib/backups';
import { type ConfigContext, fsError } from '../lib/context';
import type { Workspace } from '@mcp-fleet/kit/workspace';

const input = z
  .object({
    action: z
      .enum(['create', 'list', 'restore', 'prune'])
      .describe(
        'create: copy the file now; list: its backups, newest first; restore: put a backup back; prune: delete the oldest beyond keep.',
      ),
    path: z.string().min(1).max(4096).describe('The config file, inside the workspace roots.'),
    id: z
      .string()
      .regex(BACKUP_ID, 'a backup id as returned by create or list, e.g. 2025-01-02T03-04-05.678Z')
      .optional()
      .describe('restore: the backup to restore.'),
    keep: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe('create/restore/prune: backups to keep for this file (default BACKUP_KEEP).'),
    ...pageShape,
  })
  .strict()
  .superRefine((args, ctx) => {
    if (args.action === 'restore' && !args.id)
      ctx.addIssue({ code: 'custom', path: ['id'], message: 'action "restore" needs id (see action "list")' });
    if (args.action !== 'restore' && args.id)
      ctx.addIssue({ code: 'custom', path: ['id'], message: 'id is used only by action "restore"' });
  });

export function backupTool(ctx: ConfigContext, store: BackupStore) {
  const readCurrent = async (ws: Workspace, absolute: string, input: string): Promise<Buffer | undefined> => {
    let handle: fs.FileHandle | undefined;
    try {
      handle = (await ws.openFile(absolute, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)).handle;
      const st = await handle.stat();
      if (!st.isFile()) throw new AppError('VALIDATION_ERROR', `path "${input}" is not a regular file.`);
      if (st.size > ctx.config.BACKUP_MAX_BYTES) {
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `path "${input}" is ${st.size} bytes; backups are limited to ${ctx.config.BACKUP_MAX_BYTES} (BACKUP_MAX_BYTES).`,
        );
      }
      return await handle.readFile();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      if (err instanceof AppError) throw err;
      return fsError(err, 'path', input);
    } finally {
      await handle?.close();
    }
  };

  return defineTool({
    name: 'backup',
    title: 'Config backups',
    description:
      'Timestamped backups of a config file inside the workspace roots, stored under BACKUP_DIR (default DATA_DIR/config-mcp/backups). create copies the file (up to BACKUP_MAX_BYTES, default 10 MiB) and prunes the oldest beyond keep (default BACKUP_KEEP = 10); list pages through its backups newest first (limit 1-500, default 50); restore first backs up the current file, then replaces it atomically with the chosen backup; prune deletes the oldest beyond keep.',
    input,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args) => {
      const ws = await ctx.workspace();
      const keep = args.keep ?? ctx.config.BACKUP_KEEP;
      const target = await ws.resolve(args.path, { mustExist: args.action === 'create' });

      switch (args.action) {
        case 'create': {
          const content = await readCurrent(ws, target.absolute, args.path);
          if (!content) throw new AppError('NOT_FOUND', `path "${args.path}" does not exist.`);
          const backup = await store.create(target.absolute, content);
          const pruned = await store.prune(target.absolute, keep);
          ctx.logger.info('config backed up', { path: target.relative, id: backup.id, pruned: pruned.length });
          return { path: target.relative, backup, pruned };
        }
        case 'list': {
          const page = paginate(await store.list(target.absolute), args.limit, args.cursor);
          return {
            path: target.relative,
            backups: page.items,
            total: page.total,
            ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
          };
        }
        case 'restore': {
          const restored = await store.read(target.absolute, args.id!);
          const current = await readCurrent(ws, target.absolute, args.path);
          const previous = current ? await store.create(target.absolute, current) : undefined;
          try {
            await ws.writeFile(target.absolute, restored);
          } catch (err) {
            fsError(err, 'path', args.path);
          }
          const pruned = await store.prune(target.absolute, keep);
          ctx.logger.info('config restored', { path: target.relative, id: args.id });
          return { path: target.relative, restored: args.id, bytes: restored.length, previousBackup: previous?.id ?? null, pruned };
        }
        case 'prune': {
          const pruned = await store.prune(target.absolute, keep);
          return { path: target.relative, kept: (await store.ids(target.absolute)).length, pruned };
        }
      }
    },
  });
}
