import { Readable } from 'node:stream';
import { AppError, defineTool } from '@mcp-fleet/kit';
import type Mail from 'nodemailer/lib/mailer';
import { z } from 'zod';
import { needImap, needSmtp, addressing, sendOutgoing, type MailDeps } from '../deps';
import { checkBody, outgoingShape, readAttachments } from '../mail/compose';
import { formatAddress, headerText } from '../mail/fields';
import { decodeEmailId, emailIdSchema } from '../mail/ids';
import { ImapPool } from '../mail/imap';
import { parseMessage, type AddressOut } from '../mail/message';

const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const names = (list: AddressOut[]) =>
  list.map((a) => (a.address ? formatAddress({ name: a.name, address: a.address }) : (a.name ?? ''))).join(', ');

export function mailForwardTool(deps: MailDeps) {
  const { limits } = deps;
  return defineTool({
    name: 'mail_forward',
    title: 'Forward mail',
    description:
      'Forward a stored message (by id) to new recipients with an optional note above it. mode "inline" (default) quotes the original ' +
      'headers and body and carries its attachments; mode "attachment" attaches the original unchanged as message/rfc822. ' +
      'Subject defaults to "Fwd: <original subject>"; References carries the original Message-ID. Extra attachments come from WORKSPACE_ROOTS only. ' +
      `Caps as mail_send; originals over MAIL_MAX_MESSAGE_BYTES (${deps.config.MAIL_MAX_MESSAGE_BYTES}) are refused. Also served as POST /mail/forward.`,
    input: z
      .object({
        email_id: emailIdSchema,
        ...outgoingShape,
        subject: headerText(998).optional().describe('Subject (default "Fwd: " + the original subject).'),
        text: z.string().optional().describe('Note above the forwarded message.'),
        html: z.string().optional().describe('HTML note above the forwarded message.'),
        mode: z.enum(['inline', 'attachment']).default('inline').describe('inline: quote it; attachment: attach it as message/rfc822.'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args, ctx) => {
      const imap = needImap(deps);
      needSmtp(deps);
      checkBody('text', args.text, limits);
      checkBody('html', args.html, limits);
      const ref = decodeEmailId(args.email_id);
      const extra = await readAttachments(deps.ws, args.attachments, limits);
      const original = await imap.inFolder(
        ref.folder,
        async (client, mailbox) => {
          ImapPool.checkValidity(ref, mailbox);
          const meta = await client.fetchOne(String(ref.uid), { uid: true, size: true }, { uid: true });
          if (!meta) throw new AppError('NOT_FOUND', `Message ${args.email_id} is no longer in "${ref.folder}"; search again.`);
          if ((meta.size ?? 0) > Math.min(deps.config.MAIL_MAX_MESSAGE_BYTES, limits.maxSendBytes)) {
            throw new AppError(
              'PAYLOAD_TOO_LARGE',
              `The message is ${meta.size} bytes, too large to forward (MAIL_MAX_MESSAGE_BYTES / MAIL_MAX_SEND_BYTES).`,
            );
          }
          const dl = await client.fetchOne(String(ref.uid), { uid: true, source: true }, { uid: true });
          if (!dl || !dl.source) throw new AppError('NOT_FOUND', `Message ${args.email_id} could not be read; search again.`);
          return dl.source;
        },
        false,
        ctx.signal,
      );
      const parsed = await parseMessage(Readable.from([original]), {
        keep: args.mode === 'inline' ? '*' : undefined,
        maxAttachmentBytes: limits.maxSendBytes,
      });
      const subject =
        args.subject ?? (/^fwd?:/i.test(parsed.subject ?? '') ? (parsed.subject ?? '') : `Fwd: ${parsed.subject ?? ''}`.trim());
      const references = [...parsed.references, ...(parsed.messageId ? [parsed.messageId] : [])].slice(-100);
      let text: string;
      let html: string | undefined;
      let attachments: Mail.Attachment[];
      if (args.mode === 'attachment') {
        text = args.text ?? '';
        html = args.html;
        attachments = [
          {
            filename: `${(parsed.subject ?? 'message').replace(/[\\/:*?"<>|\r\n]+/g, '_').slice(0, 100) || 'message'}.eml`,
            content: original,
            contentType: 'message/rfc822',
            contentDisposition: 'attachment',
          },
          ...extra,
        ];
      } else {
        const head = [
          '---------- Forwarded message ----------',
          `From: ${names(parsed.from)}`,
          ...(parsed.date ? [`Date: ${parsed.date}`] : []),
          `Subject: ${parsed.subject ?? ''}`,
          `To: ${names(parsed.to)}`,
          ...(parsed.cc.length ? [`Cc: ${names(parsed.cc)}`] : []),
        ];
        text = `${args.text ? `${args.text}\n\n` : ''}${head.join('\n')}\n\n${parsed.text}`;
        if (args.html !== undefined || parsed.html !== undefined) {
          const note = args.html ?? (args.text ? `<p>${escapeHtml(args.text).replace(/\n/g, '<br>')}</p>` : '');
          const body = parsed.html ?? `<pre>${escapeHtml(parsed.text)}</pre>`;
          html = `${note}<div>${head.map(escapeHtml).join('<br>')}</div><br>${body}`;
        }
        attachments = [
          ...parsed.attachments.map((a) => ({
            filename: a.filename,
            content: parsed.contents.get(a.id) ?? Buffer.alloc(0),
            contentType: a.contentType,
            ...(a.contentId ? { cid: a.contentId.replace(/^<|>$/g, '') } : {}),
          })),
          ...extra,
        ];
      }
      return sendOutgoing(deps, {
        ...addressing(deps, args),
        subject,
        text,
        html,
        references,
        attachments,
      });
    },
  });
}
