import { AppError } from '@mcp-fleet/kit';
import type { FetchQueryObject, ImapFlow, SearchObject } from 'imapflow';
import { z } from 'zod';
import { folderSchema, headerText, labelSchema } from './fields';
import { decodeSearchCursor, encodeSearchCursor, filterHash, uidValidityChanged } from './ids';
import type { ImapPool } from './imap';
import { attachmentParts, summarize, type MessageSummary } from './message';

const dateSchema = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })])
  .describe('A date (2025-01-31) or date-time; IMAP compares dates by day, in the server’s time zone.');

const needle = (what: string) => headerText(500).min(1).optional().describe(what);

/** The filter shared by mail_search and mail_count. */
export const filterShape = {
  folder: folderSchema.default('INBOX').describe('Folder to search (default INBOX); GET /mail/labels lists them.'),
  from: needle('Substring of the From header (name or address).'),
  to: needle('Substring of the To header.'),
  cc: needle('Substring of the Cc header.'),
  subject: needle('Substring of the subject.'),
  body: needle('Substring of the body text.'),
  text: needle('Substring anywhere: headers or body.'),
  since: dateSchema.optional().describe('Received on or after this day.'),
  before: dateSchema.optional().describe('Received before this day.'),
  unread: z.boolean().optional().describe('true: only unread (no \\Seen); false: only read.'),
  flagged: z.boolean().optional().describe('true: only flagged (starred); false: only unflagged.'),
  hasAttachment: z
    .boolean()
    .optional()
    .describe('true: only messages with attachments; false: only without (checked on the MIME structure).'),
  label: labelSchema.optional().describe('Only messages carrying this keyword (or Gmail label, on Gmail).'),
};

export type Filter = z.output<z.ZodObject<typeof filterShape>>;

export function criteria(f: Filter, gmail: boolean): SearchObject {
  const q: SearchObject = {};
  for (const k of ['from', 'to', 'cc', 'subject', 'body', 'text'] as const) if (f[k]) q[k] = f[k];
  if (f.since) q.since = new Date(f.since);
  if (f.before) q.before = new Date(f.before);
  if (f.unread !== undefined) q.seen = !f.unread;
  if (f.flagged !== undefined) q.flagged = f.flagged;
  if (f.label) {
    if (gmail) q.labels = { has: [f.label] };
    else if (f.label.startsWith('\\')) {
      const flag = f.label.slice(1).toLowerCase();
      if (!['seen', 'flagged', 'answered', 'draft'].includes(flag)) {
        throw new AppError('VALIDATION_ERROR', 'label may name the system flags \\Seen, \\Flagged, \\Answered or \\Draft, or a keyword.', {
          details: [{ path: 'label', message: 'unknown system flag' }],
        });
      }
      (q as Record<string, boolean>)[flag] = true;
    } else q.keyword = f.label;
  }
  if (Object.keys(q).length === 0) q.all = true;
  return q;
}

const SUMMARY_QUERY: FetchQueryObject = { uid: true, flags: true, envelope: true, internalDate: true, size: true, bodyStructure: true };

async function matchingUids(client: ImapFlow, q: SearchObject): Promise<number[]> {
  const found = await client.search(q, { uid: true });
  return (Array.isArray(found) ? found : []).sort((a, b) => b - a);
}

/** Keeps the UIDs (newest first) whose MIME structure matches hasAttachment, scanning at most `scanMax`. */
async function byAttachment(
  client: ImapFlow,
  uids: number[],
  want: boolean,
  stopAfter: number,
  scanMax: number,
): Promise<{ kept: number[]; scanned: number; lastScanned?: number }> {
  const kept: number[] = [];
  let scanned = 0;
  let lastScanned: number | undefined;
  for (let i = 0; i < uids.length && kept.length < stopAfter && scanned < scanMax;) {
    const chunk = uids.slice(i, i + Math.min(500, scanMax - scanned));
    i += chunk.length;
    const msgs = await client.fetchAll(chunk, { uid: true, bodyStructure: true }, { uid: true });
    const has = new Map(msgs.map((m) => [m.uid, attachmentParts(m.bodyStructure).length > 0]));
    for (const uid of chunk) {
      scanned += 1;
      lastScanned = uid;
      if ((has.get(uid) ?? false) === want) {
        kept.push(uid);
        if (kept.length >= stopAfter) break;
      }
    }
  }
  return { kept, scanned, lastScanned };
}

export interface SearchPage {
  folder: string;
  messages: MessageSummary[];
  total?: number;
  nextCursor?: string;
  truncated?: boolean;
}

export async function searchMail(
  pool: ImapPool,
  f: Filter,
  limit: number,
  cursor: string | undefined,
  scanMax: number,
  signal?: AbortSignal,
): Promise<SearchPage> {
  const hash = filterHash({ ...f, folder: undefined });
  return pool.inFolder(
    f.folder,
    async (client, mailbox) => {
      const validity = mailbox.uidValidity.toString();
      const q = criteria(f, pool.gmail);
      let below: number | undefined;
      if (cursor) {
        const c = decodeSearchCursor(cursor);
        if (c.folder !== f.folder || c.filter !== hash) {
          throw new AppError(
            'VALIDATION_ERROR',
            'The cursor belongs to a different search; repeat the same filter or start without a cursor.',
            {
              details: [{ path: 'cursor', message: 'cursor of another search' }],
            },
          );
        }
        if (c.uidValidity !== validity) throw uidValidityChanged(f.folder, c.uidValidity, validity);
        below = c.below;
        if (below <= 1) return { folder: f.folder, messages: [] };
        q.uid = `1:${below - 1}`;
      }
      const uids = await matchingUids(client, q);
      let page: number[];
      let truncated = false;
      let resumeBelow: number | undefined;
      if (f.hasAttachment === undefined) {
        page = uids.slice(0, limit);
        if (uids.length > limit) resumeBelow = page[page.length - 1];
      } else {
        const r = await byAttachment(client, uids, f.hasAttachment, limit, scanMax);
        page = r.kept;
        const last = r.lastScanned;
        const moreToScan = last !== undefined && uids.indexOf(last) < uids.length - 1;
        if (moreToScan) resumeBelow = last;
        truncated = r.scanned >= scanMax && moreToScan && page.length < limit;
      }
      const fetched = page.length
        ? await client.fetchAll(page, { ...SUMMARY_QUERY, ...(pool.gmail ? { labels: true } : {}) }, { uid: true })
        : [];
      const messages = fetched.sort((a, b) => b.uid - a.uid).map((m) => summarize(m, f.folder, validity));
      return {
        folder: f.folder,
        messages,
        ...(cursor === undefined && f.hasAttachment === undefined ? { total: uids.length } : {}),
        ...(resumeBelow !== undefined
          ? { nextCursor: encodeSearchCursor({ folder: f.folder, uidValidity: validity, below: resumeBelow, filter: hash }) }
          : {}),
        ...(truncated ? { truncated: true } : {}),
      };
    },
    false,
    signal,
  );
}

export async function countMail(
  pool: ImapPool,
  f: Filter,
  scanMax: number,
  signal?: AbortSignal,
): Promise<{ folder: string; count: number; truncated?: boolean }> {
  return pool.inFolder(
    f.folder,
    async (client) => {
      const uids = await matchingUids(client, criteria(f, pool.gmail));
      if (f.hasAttachment === undefined) return { folder: f.folder, count: uids.length };
      const r = await byAttachment(client, uids, f.hasAttachment, Number.MAX_SAFE_INTEGER, scanMax);
      return { folder: f.folder, count: r.kept.length, ...(r.scanned < uids.length ? { truncated: true } : {}) };
    },
    false,
    signal,
  );
}
