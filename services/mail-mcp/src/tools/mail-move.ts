import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { byFolder, needImap, type MailDeps } from '../deps';
import { folderSchema } from '../mail/fields';
import { emailIdSchema, encodeEmailId } from '../mail/ids';
import { existingUids } from '../mail/refs';

export function mailMoveTool(deps: MailDeps) {
  return defineTool({
    name: 'mail_move',
    title: 'Move messages',
    description:
      'Move messages (at most 500 ids) to another folder (e.g. Archive or Trash). Answers each message’s new id in the destination (UIDPLUS). ' +
      'Unknown destination folders and ids are NOT_FOUND, ids from before a UIDVALIDITY change CONFLICT; nothing is moved then. Also served as POST /mail/move.',
    input: z
      .object({
        ids: z.array(emailIdSchema).min(1).max(500).describe('Message ids from mail_search.'),
        folder: folderSchema.describe('Destination folder; GET /mail/labels lists them.'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args) => {
      const imap = needImap(deps);
      const groups = byFolder(args.ids);
      const folders = await imap.listFolders();
      const dest = folders.find((f) => f.path === args.folder);
      if (!dest || dest.flags.has('\\Noselect')) {
        throw new AppError(
          'NOT_FOUND',
          `Folder "${args.folder}" does not exist; GET /mail/labels lists the folders, POST /mail/labels creates one.`,
          {
            details: { folder: args.folder },
          },
        );
      }
      for (const [folder, entries] of groups) await imap.inFolder(folder, (client, mailbox) => existingUids(client, mailbox, entries));
      const moved: { id: string; to?: string }[] = [];
      for (const [folder, entries] of groups) {
        if (folder === args.folder) {
          for (const e of entries) moved.push({ id: e.id, to: e.id });
          continue;
        }
        await imap.inFolder(
          folder,
          async (client, mailbox) => {
            const uids = await existingUids(client, mailbox, entries);
            const res = await client.messageMove(uids, args.folder, { uid: true });
            for (const e of entries) {
              const newUid = res && res.uidMap?.get(e.ref.uid);
              moved.push({
                id: e.id,
                ...(res && newUid && res.uidValidity !== undefined
                  ? { to: encodeEmailId({ folder: args.folder, uidValidity: res.uidValidity.toString(), uid: newUid }) }
                  : {}),
              });
            }
          },
          true,
        );
      }
      return { folder: args.folder, moved };
    },
  });
}
