import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { needSmtp, addressing, sendOutgoing, type MailDeps } from '../deps';
import { checkBody, outgoingShape, readAttachments, threadingShape } from '../mail/compose';
import { headerText } from '../mail/fields';

export function mailSendTool(deps: MailDeps) {
  const { limits } = deps;
  return defineTool({
    name: 'mail_send',
    title: 'Send mail',
    description:
      'Send a message over SMTP: to/cc/bcc (at most 100 each), subject, text and/or HTML body, reply threading (inReplyTo, references), ' +
      'and attachments read from files inside WORKSPACE_ROOTS only (at most 20). ' +
      `Caps: text and HTML ${limits.maxBodyBytes} bytes each, one attachment ${limits.maxAttachmentBytes} bytes, the whole message ${limits.maxSendBytes} bytes (PAYLOAD_TOO_LARGE above). ` +
      'CR or LF in any header field, or an invalid address, is a VALIDATION_ERROR. Answers the Message-ID and the recipients the server accepted. Also served as POST /mail/send.',
    input: z
      .object({
        ...outgoingShape,
        subject: headerText(998).default('').describe('Subject line (UTF-8 is encoded for you).'),
        text: z.string().optional().describe('Plain-text body.'),
        html: z.string().optional().describe('HTML body; with text too, the message carries both.'),
        ...threadingShape,
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async (args) => {
      needSmtp(deps);
      checkBody('text', args.text, limits);
      checkBody('html', args.html, limits);
      const attachments = await readAttachments(deps.ws, args.attachments, limits);
      return sendOutgoing(deps, {
        ...addressing(deps, args),
        subject: args.subject,
        text: args.text,
        html: args.html,
        inReplyTo: args.inReplyTo,
        references: args.references ?? (args.inReplyTo ? [args.inReplyTo] : undefined),
        attachments,
      });
    },
  });
}
