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
