import { AppError, type Logger } from '@mcp-fleet/kit';
import { type Workspace } from '@mcp-fleet/kit/workspace';
import type { Config } from './config';
import { notConfigured, type MailAccount } from './mail/account';
import type { Address } from './mail/fields';
import { buildMessage, type Limits, type Outgoing } from './mail/compose';
import { decodeEmailId, encodeEmailId, type MessageRef } from './mail/ids';
import type { ImapPool } from './mail/imap';
import type { Sender } from './mail/smtp';

export interface MailDeps {
  config: Config;
  logger: Logger;
  account: MailAccount;
  ws: Workspace;
  /** Absent when IMAP_URL is unset. */
  imap?: ImapPool;
  /** Absent when SMTP_URL is unset. */
  smtp?: Sender;
  limits: Limits;
}

export function needImap(deps: MailDeps): ImapPool {
  if (!deps.imap) throw notConfigured('imap');
  return deps.imap;
}

export function needSmtp(deps: MailDeps): Sender {
  if (!deps.smtp) throw notConfigured('smtp');
  return deps.smtp;
}

/** The sender: the caller's, else MAIL_FROM (or the login when it is an address). */
export function senderOf(deps: MailDeps, from: Address | undefined): Address {
  if (from) return from;
  const fallback = deps.account.from;
  const m = fallback ? /^\s*(?:"?([^"<>]*?)"?\s*)?<([^<>]+)>\s*$/.exec(fallback) : null;
  if (fallback) return m ? { ...(m[1]?.trim() ? { name: m[1].trim() } : {}), address: m[2].trim() } : { address: fallback.trim() };
  throw new AppError('VALIDATION_ERROR', 'No sender: pass from, or set MAIL_FROM (or a MAIL_USER that is an address) for mail-mcp.', {
    details: [{ path: 'from', message: 'required when MAIL_FROM is unset' }],
  });
}

/** Sender and recipients of an outgoing message, from the caller's arguments. */
export function addressing(
  deps: MailDeps,
  args: { from?: Address; to: Address[]; cc?: Address[]; bcc?: Address[]; replyTo?: Address[] },
): Pick<Outgoing, 'from' | 'to' | 'cc' | 'bcc' | 'replyTo'> {
  return { from: senderOf(deps, args.from), to: args.to, cc: args.cc, bcc: args.bcc, replyTo: args.replyTo };
}

/** Groups message ids by folder, keeping each id's position for the answer. */
export function byFolder(ids: string[]): Map<string, { id: string; ref: MessageRef }[]> {
  const groups = new Map<string, { id: string; ref: MessageRef }[]>();
  ids.forEach((id, i) => {
    const ref = decodeEmailId(id, `ids.${i}`);
    const list = groups.get(ref.folder) ?? [];
    list.push({ id, ref });
    groups.set(ref.folder, list);
  });
  return groups;
}

/** Builds, sends and (with MAIL_SENT_FOLDER) files a copy; the answer names what the server accepted. */
export async function sendOutgoing(deps: MailDeps, message: Outgoing) {
  const smtp = needSmtp(deps);
  const built = await buildMessage(message, deps.limits.maxSendBytes);
  const result = await smtp.send(built.raw, built.envelope);
  deps.logger.info('mail sent', { messageId: built.messageId, recipients: built.envelope.to.length, bytes: built.raw.length });
  let sentCopy: { folder: string; id?: string; error?: string } | undefined;
  const folder = deps.config.MAIL_SENT_FOLDER;
  if (folder && deps.imap) {
    try {
      const appended = await deps.imap.use((client) => client.append(folder, built.raw, ['\\Seen']));
      sentCopy = {
        folder,
        ...(appended && appended.uid && appended.uidValidity !== undefined
          ? { id: encodeEmailId({ folder, uidValidity: appended.uidValidity.toString(), uid: appended.uid }) }
          : {}),
      };
    } catch (err) {
      // The message went out; a failed copy is reported, not thrown.
      sentCopy = { folder, error: err instanceof AppError ? err.message : 'the copy could not be saved' };
    }
  }
  return { messageId: built.messageId, size: built.raw.length, ...result, ...(sentCopy ? { sentCopy } : {}) };
}
