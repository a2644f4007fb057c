import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { byFolder, needImap, type MailDeps } from '../deps';
import { KEYWORD, labelSchema, SYSTEM_FLAGS } from '../mail/fields';
import { emailIdSchema, encodeEmailId } from '../mail/ids';
import { existingUids } from '../mail/refs';

const SYSTEM = new Map<string, string>(SYSTEM_FLAGS.map((f) => [f.toLowerCase(), f]));

export function mailLabelApplyTool(deps: MailDeps) {
  return defineTool({
    name: 'mail_label_apply',
    title: 'Apply labels',
    description:
      'Add and remove labels on messages (at most 500 ids, 50 labels each way). A label naming an existing folder copies the messages into it ' +
      '(the folder-as-label model; remove a message from a folder with mail_move); \\Seen, \\Flagged, \\Answered and \\Draft set or clear those flags; ' +
      'any other name is an IMAP keyword. On Gmail (X-GM-EXT-1) names are Gmail labels (X-GM-LABELS). Unknown ids are NOT_FOUND, ids from before a ' +
      'UIDVALIDITY change are CONFLICT; nothing is changed then. Also served as POST /mail/labels/apply.',
    input: z
      .object({
        ids: z.array(emailIdSchema).min(1).max(500).describe('Message ids from mail_search.'),
        add: z.array(labelSchema).max(50).default([]).describe('Labels to add.'),
        remove: z.array(labelSchema).max(50).default([]).describe('Labels to remove.'),
      })
      .strict()
      .refine((v) => v.add.length + v.remove.length > 0, { message: 'name at least one label to add or remove', path: ['add'] }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    handler: async (args) => {
      const imap = needImap(deps);
      const groups = byFolder(args.ids);
      const folders = new Set((await imap.listFolders()).map((f) => f.path));
      const classify = (name: string, i: number, field: string) => {
        const system = SYSTEM.get(name.toLowerCase());
        if (system) return { kind: 'flag' as const, name: system };
        if (name.startsWith('\\')) {
          throw new AppError(
            'VALIDATION_ERROR',
            `${field}.${i}: only \\Seen, \\Flagged, \\Answered and \\Draft may be set (use mail_move to delete).`,
            {
              details: [{ path: `${field}.${i}`, message: 'unsupported system flag' }],
            },
          );
        }
        if (imap.gmail) return { kind: 'gmail' as const, name };
        if (folders.has(name)) {
          if (field === 'remove') {
            throw new AppError(
              'VALIDATION_ERROR',
              `"${name}" is a folder: a message leaves a folder with mail_move, not by removing a label.`,
              {
                details: [{ path: `${field}.${i}`, message: 'folder label cannot be removed' }],
              },
            );
          }
          return { kind: 'folder' as const, name };
        }
        if (!KEYWORD.test(name)) {
          throw new AppError(
            'VALIDATION_ERROR',
            `${field}.${i}: "${name}" is neither a folder nor a valid IMAP keyword (printable ASCII, no spaces or ( ) { } " \\ % * ]).`,
            {
              details: [{ path: `${field}.${i}`, message: 'not a keyword or folder' }],
            },
          );
        }
        return { kind: 'keyword' as const, name };
      };
      const add = args.add.map((n, i) => classify(n, i, 'add'));
      const remove = args.remove.map((n, i) => classify(n, i, 'remove'));
      const names = (list: typeof add, kinds: string[]) => list.filter((l) => kinds.includes(l.kind)).map((l) => l.name);
      // Check every group first, so a bad id changes nothing.
      for (const [folder, entries] of groups) await imap.inFolder(folder, (client, mailbox) => existingUids(client, mailbox, entries));
      const copies: { id: string; folder: string; copy?: string }[] = [];
      for (const [folder, entries] of groups) {
        await imap.inFolder(
          folder,
          async (client, mailbox) => {
            const uids = await existingUids(client, mailbox, entries);
            const flagsAdd = names(add, ['flag', 'keyword']);
            const flagsRemove = names(remove, ['flag', 'keyword']);
            if (flagsAdd.length) await client.messageFlagsAdd(uids, flagsAdd, { uid: true });
            if (flagsRemove.length) await client.messageFlagsRemove(uids, flagsRemove, { uid: true });
            const gAdd = names(add, ['gmail']);
            const gRemove = names(remove, ['gmail']);
            if (gAdd.length) await client.messageFlagsAdd(uids, gAdd, { uid: true, useLabels: true });
            if (gRemove.length) await client.messageFlagsRemove(uids, gRemove, { uid: true, useLabels: true });
            for (const target of names(add, ['folder'])) {
              const res = await client.messageCopy(uids, target, { uid: true });
              for (const e of entries) {
                const newUid = res && res.uidMap?.get(e.ref.uid);
                copies.push({
                  id: e.id,
                  folder: target,
                  ...(res && newUid && res.uidValidity !== undefined
                    ? { copy: encodeEmailId({ folder: target, uidValidity: res.uidValidity.toString(), uid: newUid }) }
                    : {}),
                });
              }
            }
          },
          true,
        );
      }
      return {
        updated: args.ids.length,
        added: args.add,
        removed: args.remove,
        ...(copies.length ? { copies } : {}),
      };
    },
  });
}
