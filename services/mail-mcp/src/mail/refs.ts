import { AppError } from '@mcp-fleet/kit';
import type { ImapFlow, MailboxObject } from 'imapflow';
import { ImapPool } from './imap';
import type { MessageRef } from './ids';

/**
 * Checks ids against the selected folder: same UIDVALIDITY (else CONFLICT) and the messages still
 * there (else NOT_FOUND naming the missing ids). Returns the UIDs.
 */
export async function existingUids(
  client: ImapFlow,
  mailbox: MailboxObject,
  entries: { id: string; ref: MessageRef }[],
): Promise<number[]> {
  for (const e of entries) ImapPool.checkValidity(e.ref, mailbox);
  const wanted = [...new Set(entries.map((e) => e.ref.uid))];
  const found = await client.search({ uid: wanted.join(',') }, { uid: true });
  const present = new Set(Array.isArray(found) ? found : []);
  const missing = entries.filter((e) => !present.has(e.ref.uid)).map((e) => e.id);
  if (missing.length) {
    throw new AppError(
      'NOT_FOUND',
      `${missing.length === 1 ? 'Message' : `${missing.length} messages`} not found in "${entries[0].ref.folder}" (deleted or moved); search again for current ids.`,
      { details: { missing } },
    );
  }
  return wanted;
}
