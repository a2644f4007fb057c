import { createHash } from 'node:crypto';
import { AppError } from '@mcp-fleet/kit';
import { z } from 'zod';

/**
 * A message id names its folder, the folder's UIDVALIDITY and the message's UID:
 * `<base64url(folder)>.<uidvalidity>.<uid>`. It stays valid while the folder's UIDVALIDITY does
 * (RFC 9051 2.3.1.1); after a change the server may have renumbered, so the id is refused (CONFLICT).
 */
export interface MessageRef {
  folder: string;
  uidValidity: string;
  uid: number;
}

const ID = /^([A-Za-z0-9_-]{1,1400})\.(\d{1,20})\.(\d{1,10})$/;

export const emailIdSchema = z
  .string()
  .min(5)
  .max(1500)
  .regex(ID, 'an email id as returned by mail_search (<folder>.<uidvalidity>.<uid>)')
  .describe('A message id as returned by mail_search (folder, UIDVALIDITY and UID).');

export function encodeEmailId(ref: MessageRef): string {
  return `${Buffer.from(ref.folder, 'utf8').toString('base64url')}.${ref.uidValidity}.${ref.uid}`;
}

export function decodeEmailId(id: string, field = 'email_id'): MessageRef {
  const m = ID.exec(id);
  const folder = m ? Buffer.from(m[1], 'base64url').toString('utf8') : '';
  const uid = m ? Number(m[3]) : 0;
  if (!m || !folder || uid < 1 || uid > 0xffffffff || Buffer.from(folder, 'utf8').toString('base64url') !== m[1]) {
    throw new AppError('VALIDATION_ERROR', `${field} "${id.slice(0, 80)}" is not an id this service issued; take ids from mail_search.`, {
      details: [{ path: field, message: 'malformed email id' }],
    });
  }
  return { folder, uidValidity: BigInt(m[2]).toString(), uid };
}

/** Search cursors carry the folder, its UIDVALIDITY, the last UID handed out and a hash of the filter. */
export interface SearchCursor {
  folder: string;
  uidValidity: string;
  /** The next page holds UIDs below this one (newest first). */
  below: number;
  filter: string;
}

export function filterHash(filter: unknown): string {
  return createHash('sha256').update(JSON.stringify(filter)).digest('base64url').slice(0, 16);
}

export function encodeSearchCursor(c: SearchCursor): string {
  return Buffer.from(JSON.stringify([c.folder, c.uidValidity, c.below, c.filter])).toString('base64url');
}

export function decodeSearchCursor(cursor: string): SearchCursor {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(v) &&
      v.length === 4 &&
      typeof v[0] === 'string' &&
      typeof v[1] === 'string' &&
      /^\d{1,20}$/.test(v[1]) &&
      Number.isInteger(v[2]) &&
      v[2] >= 1 &&
      typeof v[3] === 'string'
    ) {
      return { folder: v[0], uidValidity: v[1], below: v[2], filter: v[3] };
    }
  } catch {
    // fall through
  }
  throw new AppError('VALIDATION_ERROR', 'The cursor is not one this service issued; start again without a cursor.', {
    details: [{ path: 'cursor', message: 'unrecognised cursor' }],
  });
}

export function uidValidityChanged(folder: string, was: string, now: string): AppError {
  return new AppError(
    'CONFLICT',
    `Folder "${folder}" was renumbered by the server (UIDVALIDITY ${was} is now ${now}), so ids and cursors issued before no longer name the same messages; search again for fresh ids.`,
    { details: { folder, uidValidity: now, previous: was } },
  );
}
