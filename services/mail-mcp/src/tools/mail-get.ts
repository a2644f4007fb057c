import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { needImap, type MailDeps } from '../deps';
import { decodeEmailId, emailIdSchema } from '../mail/ids';
import { ImapPool } from '../mail/imap';
import { parseMessage } from '../mail/message';

function cut(value: string, max: number): { value: string; truncated: boolean } {
  return value.length > max ? { value: value.slice(0, max), truncated: true } : { value, truncated: false };
}

export function mailGetTool(deps: MailDeps) {
  const { MAIL_MAX_MESSAGE_BYTES: maxMessage, MAIL_MAX_ATTACHMENT_BYTES: maxAttachment, MAIL_MAX_TEXT_CHARS: maxText } = deps.config;
  return defineTool({
    name: 'mail_get',
    title: 'Read one message',
    description:
      'One message by id: its headers (raw lines, at most 500), parsed addresses, subject, date, Message-ID and threading headers, ' +
      'flags and labels, the text body (HTML converted to text when there is no text part) and attachments as metadata (id, filename, type, size, sha256). ' +
      `includeHtml adds the HTML. Text and HTML over MAIL_MAX_TEXT_CHARS (${maxText}) are cut with truncated: true. ` +
      `With attachmentId the answer is that one attachment, base64, up to MAIL_MAX_ATTACHMENT_BYTES (${maxAttachment}; PAYLOAD_TOO_LARGE above). ` +
      `Messages over MAIL_MAX_MESSAGE_BYTES (${maxMessage}) are refused. Does not mark the message read. Also served as GET /mail/email/{email_id} ` +
      'and GET /mail/email/{email_id}/attachments/{attachmentId}.',
    input: z
      .object({
        email_id: emailIdSchema,
        includeHtml: z.boolean().default(false).describe('Also return the HTML body as HTML (default: text only).'),
        attachmentId: z
          .string()
          .regex(/^[0-9]{1,6}(\.[0-9]{1,6}){0,20}$/, 'an attachment id from mail_get (e.g. "2" or "1.2")')
          .optional()
          .describe('Return this attachment’s bytes (base64) instead of the message.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    handler: async (args, ctx) => {
      const ref = decodeEmailId(args.email_id);
      const imap = needImap(deps);
      return imap.inFolder(
        ref.folder,
        async (client, mailbox) => {
          ImapPool.checkValidity(ref, mailbox);
          const meta = await client.fetchOne(
            String(ref.uid),
            { uid: true, flags: true, size: true, internalDate: true, ...(imap.gmail ? { labels: true } : {}) },
            { uid: true },
          );
          if (!meta) {
            throw new AppError('NOT_FOUND', `Message ${args.email_id} is no longer in "${ref.folder}" (deleted or moved); search again.`, {
              details: { email_id: args.email_id },
            });
          }
          if ((meta.size ?? 0) > maxMessage) {
            throw new AppError('PAYLOAD_TOO_LARGE', `The message is ${meta.size} bytes, above MAIL_MAX_MESSAGE_BYTES (${maxMessage}).`, {
              details: { size: meta.size, limit: maxMessage },
            });
          }
          const dl = await client.download(String(ref.uid), undefined, { uid: true });
          if (!dl.content) throw new AppError('NOT_FOUND', `Message ${args.email_id} could not be read; search again.`);
          const parsed = await parseMessage(dl.content, { keep: args.attachmentId, maxAttachmentBytes: maxAttachment });
          if (args.attachmentId !== undefined) {
            const att = parsed.attachments.find((a) => a.id === args.attachmentId);
            const bytes = parsed.contents.get(args.attachmentId);
            if (!att || !bytes) {
              throw new AppError(
                'NOT_FOUND',
                `Message ${args.email_id} has no attachment "${args.attachmentId}"; mail_get without attachmentId lists them.`,
                {
                  details: { attachments: parsed.attachments.map((a) => a.id) },
                },
              );
            }
            return { email_id: args.email_id, attachment: { ...att, contentBase64: bytes.toString('base64') } };
          }
          const flags = [...(meta.flags ?? [])];
          const text = cut(parsed.text, maxText);
          const html = args.includeHtml && parsed.html !== undefined ? cut(parsed.html, maxText) : undefined;
          const { contents: _contents, text: _text, html: _html, ...rest } = parsed;
          return {
            id: args.email_id,
            folder: ref.folder,
            uid: ref.uid,
            ...rest,
            receivedAt: meta.internalDate ? new Date(meta.internalDate).toISOString() : undefined,
            size: meta.size,
            unread: !flags.includes('\\Seen'),
            flagged: flags.includes('\\Flagged'),
            flags: flags.filter((f) => f.startsWith('\\')),
            labels: [...flags.filter((f) => !f.startsWith('\\')), ...[...(meta.labels ?? [])]],
            text: text.value,
            hasHtml: parsed.html !== undefined,
            ...(html ? { html: html.value } : {}),
            ...(text.truncated || html?.truncated ? { truncated: true } : {}),
          };
        },
        false,
        ctx.signal,
      );
    },
  });
}
