import { defineTool, paginate, pageShape } from '@mcp-fleet/kit';
import { z } from 'zod';
import { needImap, type MailDeps } from '../deps';
import { folderSchema } from '../mail/fields';

export interface LabelEntry {
  name: string;
  kind: 'folder' | 'keyword' | 'gmail-label';
  specialUse?: string;
  delimiter?: string;
  subscribed?: boolean;
  selectable?: boolean;
  messages?: number;
  unread?: number;
}

export function mailLabelsTool(deps: MailDeps) {
  return defineTool({
    name: 'mail_labels',
    title: 'List labels',
    description:
      'The labels of the mailbox: every IMAP folder (with special use such as \\Sent or \\Trash, and message and unread counts when withCounts) ' +
      'and the keywords in use in one folder (default INBOX). On Gmail (X-GM-EXT-1) the folders are its labels and are listed as kind "gmail-label". ' +
      'canCreateKeywords says whether the server accepts new keywords there. Paginated: limit 1-500 (default 50) with cursor. Also served as GET /mail/labels.',
    input: z
      .object({
        folder: folderSchema.default('INBOX').describe('Folder whose keywords are listed (default INBOX).'),
        withCounts: z.boolean().default(false).describe('Add message and unread counts per folder (one STATUS per folder).'),
        ...pageShape,
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    handler: async (args) => {
      const imap = needImap(deps);
      const folders = await imap.listFolders(args.withCounts);
      const { keywords, canCreateKeywords } = await imap.inFolder(args.folder, async (_client, mailbox) => ({
        keywords: [...mailbox.flags].filter((f) => !f.startsWith('\\')).sort(),
        canCreateKeywords: !mailbox.permanentFlags || mailbox.permanentFlags.has('\\*'),
      }));
      const gmail = imap.gmail;
      const labels: LabelEntry[] = [
        ...folders
          .sort((a, b) => a.path.localeCompare(b.path))
          .map((f): LabelEntry => ({
            name: f.path,
            kind: gmail && !f.path.startsWith('[Gmail]') ? 'gmail-label' : 'folder',
            ...(f.specialUse ? { specialUse: f.specialUse } : {}),
            delimiter: f.delimiter,
            subscribed: f.subscribed,
            selectable: !f.flags.has('\\Noselect') && !f.flags.has('\\NonExistent'),
            ...(f.status ? { messages: f.status.messages, unread: f.status.unseen } : {}),
          })),
        ...keywords.map((k): LabelEntry => ({ name: k, kind: 'keyword' })),
      ];
      const page = paginate(labels, args.limit, args.cursor);
      return {
        labels: page.items,
        total: page.total,
        gmail,
        keywordsFolder: args.folder,
        canCreateKeywords,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      };
    },
  });
}
