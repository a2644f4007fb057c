import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { AppError } from '@mcp-fleet/kit';
import type { FetchMessageObject, MessageAddressObject, MessageStructureObject } from 'imapflow';
import type { AddressObject, AttachmentStream, EmailAddress, MessageText } from 'mailparser';
import type * as Mailparser from 'mailparser';
import { encodeEmailId } from './ids';

export interface AddressOut {
  name?: string;
  address?: string;
}

const SYSTEM = new Set(['\\Seen', '\\Answered', '\\Flagged', '\\Deleted', '\\Draft', '\\Recent']);

function addresses(list: MessageAddressObject[] | undefined): AddressOut[] {
  return (list ?? []).map((a) => ({ ...(a.name ? { name: a.name } : {}), ...(a.address ? { address: a.address } : {}) }));
}

function iso(d: Date | string | undefined): string | undefined {
  if (!d) return undefined;
  const date = typeof d === 'string' ? new Date(d) : d;
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** Leaf parts a mail client shows as attachments: disposition attachment, a file name, or an attached message. */
export function attachmentParts(node: MessageStructureObject | undefined): MessageStructureObject[] {
  if (!node) return [];
  if (node.childNodes?.length) return node.childNodes.flatMap(attachmentParts);
  const type = node.type?.toLowerCase() ?? '';
  const filename = node.dispositionParameters?.filename ?? node.parameters?.name;
  if (node.disposition?.toLowerCase() === 'attachment') return [node];
  if (type === 'message/rfc822') return [node];
  if (filename && node.disposition?.toLowerCase() !== 'inline') return [node];
  return [];
}

export interface MessageSummary {
  id: string;
  folder: string;
  uid: number;
  messageId?: string;
  subject?: string;
  from: AddressOut[];
  to: AddressOut[];
  cc: AddressOut[];
  date?: string;
  receivedAt?: string;
  size?: number;
  unread: boolean;
  flagged: boolean;
  answered: boolean;
  flags: string[];
  labels: string[];
  hasAttachments: boolean;
}

export function summarize(msg: FetchMessageObject, folder: string, uidValidity: string): MessageSummary {
  const flags = [...(msg.flags ?? [])];
  const env = msg.envelope;
  return {
    id: encodeEmailId({ folder, uidValidity, uid: msg.uid }),
    folder,
    uid: msg.uid,
    ...(env?.messageId ? { messageId: env.messageId } : {}),
    ...(env?.subject !== undefined ? { subject: env.subject } : {}),
    from: addresses(env?.from),
    to: addresses(env?.to),
    cc: addresses(env?.cc),
    ...(iso(env?.date) ? { date: iso(env?.date) } : {}),
    ...(iso(msg.internalDate) ? { receivedAt: iso(msg.internalDate) } : {}),
    ...(msg.size !== undefined ? { size: msg.size } : {}),
    unread: !flags.includes('\\Seen'),
    flagged: flags.includes('\\Flagged'),
    answered: flags.includes('\\Answered'),
    flags: flags.filter((f) => SYSTEM.has(f)),
    labels: [...flags.filter((f) => !SYSTEM.has(f)), ...[...(msg.labels ?? [])]],
    hasAttachments: attachmentParts(msg.bodyStructure).length > 0,
  };
}

export interface AttachmentMeta {
  id: string;
  filename?: string;
  contentType: string;
  size: number;
  sha256: string;
  disposition?: string;
  contentId?: string;
}

export interface ParsedMessage {
  headers: { name: string; value: string }[];
  messageId?: string;
  inReplyTo?: string;
  references: string[];
  subject?: string;
  from: AddressOut[];
  to: AddressOut[];
  cc: AddressOut[];
  bcc: AddressOut[];
  replyTo: AddressOut[];
  date?: string;
  text: string;
  html?: string;
  attachments: AttachmentMeta[];
  /** Contents kept by request (one attachment by id, or all of them for forwarding). */
  contents: Map<string, Buffer>;
}

export interface ParseOptions {
  /** Keep this attachment's bytes (undefined: none; '*': all). */
  keep?: string;
  maxAttachmentBytes: number;
}

function mailAddresses(v: AddressObject | AddressObject[] | undefined): AddressOut[] {
  const flat = (list: EmailAddress[]): AddressOut[] =>
    list.flatMap((a) =>
      a.group ? flat(a.group) : [{ ...(a.name ? { name: a.name } : {}), ...(a.address ? { address: a.address } : {}) }],
    );
  return ([] as AddressObject[]).concat(v ?? []).flatMap((o) => flat(o.value));
}

const MAX_HEADER_LINES = 500;

/**
 * Streams a stored message through mailparser: headers, text, HTML and attachment metadata, with
 * attachment bytes counted and hashed as they pass and kept only when asked for.
 */
export function parseMessage(source: Readable, options: ParseOptions): Promise<ParsedMessage> {
  return new Promise((resolve, reject) => {
    // mailparser is loaded at the first message read
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { MailParser } = require('mailparser') as typeof Mailparser;
    const parser = new MailParser({ checksumAlgo: false, skipImageLinks: true, maxHtmlLengthToParse: 5 * 1024 * 1024 });
    const attachments: AttachmentMeta[] = [];
    const contents = new Map<string, Buffer>();
    let text: MessageText | undefined;
    let index = 0;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      source.destroy();
      reject(err);
    };
    parser.on('data', (data: AttachmentStream | MessageText) => {
      if (data.type === 'text') {
        text = data;
        return;
      }
      index += 1;
      const id = data.partId ?? String(index);
      const hash = createHash('sha256');
      const keep = options.keep === '*' || options.keep === id;
      const chunks: Buffer[] = [];
      let size = 0;
      data.content.on('data', (c: Buffer) => {
        size += c.length;
        hash.update(c);
        if (keep && size <= options.maxAttachmentBytes) chunks.push(c);
      });
      data.content.on('end', () => {
        attachments.push({
          id,
          ...(data.filename ? { filename: data.filename } : {}),
          contentType: data.contentType,
          size,
          sha256: hash.digest('hex'),
          ...(data.contentDisposition ? { disposition: data.contentDisposition } : {}),
          ...(data.contentId ? { contentId: data.contentId } : {}),
        });
        if (keep) {
          if (size > options.maxAttachmentBytes) {
            fail(
              new AppError(
                'PAYLOAD_TOO_LARGE',
                `Attachment ${id} is ${size} bytes, above MAIL_MAX_ATTACHMENT_BYTES (${options.maxAttachmentBytes}); fetch it with a mail client instead.`,
                { details: { attachmentId: id, size, limit: options.maxAttachmentBytes } },
              ),
            );
            return;
          }
          contents.set(id, Buffer.concat(chunks));
        }
        data.release?.();
      });
      data.content.on('error', fail);
    });
    parser.on('error', fail);
    parser.on('end', () => {
      if (failed) return;
      const lines = parser.headerLines || [];
      const refs = parser.references;
      resolve({
        headers: lines.slice(0, MAX_HEADER_LINES).map((h) => {
          const colon = h.line.indexOf(':');
          return {
            name: colon > 0 ? h.line.slice(0, colon) : h.key,
            value: (colon > 0 ? h.line.slice(colon + 1) : h.line).trim().slice(0, 4000),
          };
        }),
        ...(parser.messageId ? { messageId: parser.messageId } : {}),
        ...(parser.inReplyTo ? { inReplyTo: parser.inReplyTo } : {}),
        references: refs ? ([] as string[]).concat(refs) : [],
        ...(parser.subject !== undefined ? { subject: parser.subject } : {}),
        from: mailAddresses(parser.from),
        to: mailAddresses(parser.to),
        cc: mailAddresses(parser.cc),
        bcc: mailAddresses(parser.bcc),
        replyTo: mailAddresses(parser.replyTo),
        ...(iso(parser.date) ? { date: iso(parser.date) } : {}),
        text: text?.text ?? '',
        ...(text?.html ? { html: text.html } : {}),
        attachments,
        contents,
      });
    });
    source.on('error', fail);
    source.pipe(parser);
  });
}
