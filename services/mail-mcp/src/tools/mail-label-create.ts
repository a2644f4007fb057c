import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { needImap, type MailDeps } from '../deps';
import { folderSchema, KEYWORD } from '../mail/fields';

export function mailLabelCreateTool(deps: MailDeps) {
  return defineTool({
    name: 'mail_label_create',
    title: 'Create a label',
    description:
      'Create a label. kind "folder" (default) creates an IMAP folder (a Gmail label on Gmail; nested with the server’s delimiter, e.g. "Projects/2025"); ' +
      'CONFLICT when it exists. kind "keyword" checks that the name is a valid IMAP keyword and that the server accepts new keywords ' +
      'in the folder (IMAP keywords come into being when first applied with mail_label_apply). Also served as POST /mail/labels.',
    input: z
      .object({
        name: folderSchema.describe('Folder path or keyword.'),
        kind: z.enum(['folder', 'keyword']).default('folder').describe('folder (default) or keyword.'),
        folder: folderSchema.default('INBOX').describe('For keywords: the folder to check (default INBOX).'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args) => {
      const imap = needImap(deps);
      if (args.kind === 'keyword') {
        if (!KEYWORD.test(args.name)) {
          throw new AppError(
            'VALIDATION_ERROR',
            'A keyword is 1-128 printable ASCII characters without spaces, ( ) { } " \\ % * ] or a leading \\.',
            {
              details: [{ path: 'name', message: 'not an IMAP keyword' }],
            },
          );
        }
        return imap.inFolder(
          args.folder,
          async (_client, mailbox) => {
            const open = !mailbox.permanentFlags || mailbox.permanentFlags.has('\\*');
            const exists = mailbox.flags.has(args.name);
            if (!open && !exists) {
              throw new AppError(
                'UPSTREAM_ERROR',
                `The server does not accept new keywords in "${args.folder}"; use a folder label instead.`,
              );
            }
            return { name: args.name, kind: 'keyword', folder: args.folder, created: false, inUse: exists };
            // SELECT, not EXAMINE: a read-only open reports no PERMANENTFLAGS.
          },
          true,
        );
      }
      const existing = await imap.listFolders();
      return imap.use(async (client) => {
        if (existing.some((f) => f.path === args.name)) {
          throw new AppError('CONFLICT', `Folder "${args.name}" already exists.`, { details: { name: args.name } });
        }
        const res = await client.mailboxCreate(args.name);
        return { name: res.path, kind: imap.gmail ? 'gmail-label' : 'folder', created: res.created !== false };
      });
    },
  });
}
