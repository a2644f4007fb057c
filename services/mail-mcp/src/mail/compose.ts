import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '@mcp-fleet/kit';
import { type Workspace } from '@mcp-fleet/kit/workspace';
import type Mail from 'nodemailer/lib/mailer';
import type MailComposer from 'nodemailer/lib/mail-composer';
import { z } from 'zod';
import { addressListSchema, addressSchema, formatAddress, headerText, messageIdSchema, type Address } from './fields';

export const attachmentInput = z
  .object({
    path: z.string().min(1).max(4096).describe('File inside WORKSPACE_ROOTS (relative paths resolve against the first root).'),
    filename: headerText(255).min(1).optional().describe('Name shown to the recipient (default: the file’s name).'),
    contentType: z
      .string()
      .max(255)
      .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type such as application/pdf')
      .optional()
      .describe('MIME type (default: guessed from the file name).'),
  })
  .strict();

/** Fields of an outgoing message shared by mail_send and mail_forward. */
export const outgoingShape = {
  to: addressListSchema('Recipients'),
  cc: addressListSchema('Copy recipients').optional(),
  bcc: addressListSchema('Blind copy recipients (not shown in the headers)').optional(),
  from: addressSchema.optional().describe('Sender; default MAIL_FROM (servers may refuse other senders).'),
  replyTo: addressListSchema('Reply-To addresses').optional(),
  attachments: z.array(attachmentInput).max(20).optional().describe('Files from the workspace roots to attach (at most 20).'),
};

export interface Limits {
  maxAttachmentBytes: number;
  maxSendBytes: number;
  maxBodyBytes: number;
}

export function checkBody(field: string, value: string | undefined, limits: Limits): void {
  if (value !== undefined && Buffer.byteLength(value) > limits.maxBodyBytes) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `${field} is larger than MAIL_MAX_BODY_BYTES (${limits.maxBodyBytes} bytes); shorten it or send it as an attachment.`,
      {
        details: [{ path: field, message: 'too large' }],
      },
    );
  }
}

/** Reads attachment files through the workspace confinement (symlinks resolved, `..` refused). */
export async function readAttachments(
  ws: Workspace,
  list: z.output<typeof attachmentInput>[] | undefined,
  limits: Limits,
): Promise<Mail.Attachment[]> {
  const out: Mail.Attachment[] = [];
  let total = 0;
  for (const [i, a] of (list ?? []).entries()) {
    const field = `attachments.${i}.path`;
    const resolved = await ws.resolve(a.path, { mustExist: true, field });
    const st = await fs.stat(resolved.absolute);
    if (!st.isFile()) {
      throw new AppError('VALIDATION_ERROR', `${field} "${a.path}" is not a regular file.`, {
        details: [{ path: field, message: 'not a file' }],
      });
    }
    if (st.size > limits.maxAttachmentBytes) {
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `${field} "${a.path}" is ${st.size} bytes, above MAIL_MAX_ATTACHMENT_BYTES (${limits.maxAttachmentBytes}); send a link instead.`,
        { details: [{ path: field, message: 'attachment too large' }] },
      );
    }
    total += st.size;
    if (total > limits.maxSendBytes) {
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `The attachments add up to more than MAIL_MAX_SEND_BYTES (${limits.maxSendBytes} bytes); send fewer.`,
        {
          details: [{ path: 'attachments', message: 'too large in total' }],
        },
      );
    }
    out.push({
      filename: a.filename ?? path.basename(resolved.absolute),
      content: await fs.readFile(resolved.absolute),
      ...(a.contentType ? { contentType: a.contentType } : {}),
    });
  }
  return out;
}

export interface Outgoing {
  from: Address;
  to: Address[];
  cc?: Address[];
  bcc?: Address[];
  replyTo?: Address[];
  subject: string;
  text?: string;
  html?: string;
  inReplyTo?: string;
  references?: string[];
  attachments: Mail.Attachment[];
}

export interface BuiltMessage {
  raw: Buffer;
  messageId: string;
  envelope: { from: string; to: string[] };
}

/** Builds the exact bytes that are sent (and, when configured, saved to the Sent folder). Bcc stays out of the headers. */
export async function buildMessage(m: Outgoing, maxSendBytes: number): Promise<BuiltMessage> {
  const domain = m.from.address.split('@').pop() ?? 'localhost';
  const messageId = `<${randomUUID()}@${domain}>`;
  const list = (a?: Address[]) => (a?.length ? a.map(formatAddress) : undefined);
  // nodemailer's composer is loaded at the first message built
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Composer = require('nodemailer/lib/mail-composer') as typeof MailComposer;
  const node = new Composer({
    from: formatAddress(m.from),
    to: list(m.to),
    cc: list(m.cc),
    bcc: list(m.bcc),
    replyTo: list(m.replyTo),
    subject: m.subject,
    text: m.text,
    html: m.html,
    inReplyTo: m.inReplyTo,
    references: m.references?.length ? m.references : undefined,
    messageId,
    date: new Date(),
    attachments: m.attachments,
    disableFileAccess: true,
    disableUrlAccess: true,
  }).compile();
  const raw = await node.build();
  if (raw.length > maxSendBytes) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `The message is ${raw.length} bytes encoded, above MAIL_MAX_SEND_BYTES (${maxSendBytes}); send less.`,
      {
        details: { size: raw.length, limit: maxSendBytes },
      },
    );
  }
  const recipients = [...m.to, ...(m.cc ?? []), ...(m.bcc ?? [])].map((a) => a.address);
  return { raw, messageId, envelope: { from: m.from.address, to: [...new Set(recipients)] } };
}

export const threadingShape = {
  inReplyTo: messageIdSchema.optional().describe('Message-ID this answers (In-Reply-To), e.g. the messageId from mail_get.'),
  references: z.array(messageIdSchema).max(100).optional().describe('Message-IDs of the thread, oldest first (References).'),
};
