import { z } from 'zod';
import { AppError } from './errors';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;

/** `limit` (default 50, max 500) and `cursor`, for every list (decisions.md, "Lists and limits"). */
export const pageShape = {
  limit: z.number().int().min(1).max(MAX_LIMIT).default(DEFAULT_LIMIT).describe('Items per page (1-500, default 50).'),
  cursor: z.string().max(512).optional().describe('nextCursor from the previous page.'),
};

export interface Page<T> {
  items: T[];
  nextCursor?: string;
  total?: number;
}

export function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): number {
  if (!cursor) return 0;
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o?: unknown };
    if (typeof v.o === 'number' && Number.isInteger(v.o) && v.o >= 0) return v.o;
  } catch {
    // fall through
  }
  throw new AppError('VALIDATION_ERROR', 'The cursor is not one this service issued; start again without a cursor.', {
    details: [{ path: 'cursor', message: 'unrecognised cursor' }],
  });
}

/** Offset pagination over an in-memory list. */
export function paginate<T>(items: readonly T[], limit: number = DEFAULT_LIMIT, cursor?: string): Page<T> {
  const offset = decodeCursor(cursor);
  const slice = items.slice(offset, offset + limit);
  const next = offset + slice.length;
  return { items: slice, total: items.length, ...(next < items.length ? { nextCursor: encodeCursor(next) } : {}) };
}

/** A keyset cursor: the key of the last item served, so what is added between two pages is neither repeated nor skipped. */
export function encodeKeysetCursor(after: string): string {
  return Buffer.from(JSON.stringify({ after })).toString('base64url');
}

/** The key a keyset cursor continues after (undefined: the first page); VALIDATION_ERROR for a cursor this service did not issue. */
export function decodeKeysetCursor(cursor: unknown): string | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  if (typeof cursor === 'string' && cursor.length <= 4096) {
    try {
      const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown };
      if (typeof v.after === 'string') return v.after;
    } catch {
      // fall through
    }
  }
  throw new AppError('VALIDATION_ERROR', 'The cursor is not one this service issued; start again without a cursor.', {
    details: [{ path: 'cursor', message: 'unrecognised cursor' }],
  });
}

/** One page of items ordered by a unique key, after the cursor's key (limit 0: all the rest). */
export function keysetPage<T>(items: readonly T[], keyOf: (item: T) => string, cursor: unknown, limit: number): Page<T> {
  const after = decodeKeysetCursor(cursor);
  const rest = after === undefined ? items : items.filter((i) => keyOf(i) > after);
  const slice = limit > 0 ? rest.slice(0, limit) : [...rest];
  return {
    items: slice,
    total: rest.length,
    ...(rest.length > slice.length ? { nextCursor: encodeKeysetCursor(keyOf(slice[slice.length - 1])) } : {}),
  };
}
