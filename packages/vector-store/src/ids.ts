import { AppError } from '@mcp-fleet/kit';
import { z } from 'zod';

/** A point id: an unsigned integer (0..2^53-1, JavaScript's safe range) or a UUID string (stored lower-case). */
export type PointId = number | string;

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ID_HINT = 'a point id is an unsigned integer (0 to 9007199254740991) or a UUID string such as 550e8400-e29b-41d4-a716-446655440000';

export const pointIdSchema = z
  .union(
    [
      z.number({ error: ID_HINT }).int({ error: ID_HINT }).min(0, { error: ID_HINT }).max(Number.MAX_SAFE_INTEGER, { error: ID_HINT }),
      z
        .string({ error: ID_HINT })
        .regex(UUID_PATTERN, { error: ID_HINT })
        .transform((s) => s.toLowerCase()),
    ],
    { error: ID_HINT },
  )
  .describe('Point id: unsigned integer or UUID string.');

/** Checks one id from any caller (tools validate with pointIdSchema; programmatic callers land here). */
export function parsePointId(value: unknown, path = 'id'): PointId {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && UUID_PATTERN.test(value)) return value.toLowerCase();
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 80)) : String(value).slice(0, 80);
  throw new AppError('VALIDATION_ERROR', `Bad point id ${shown}: ${ID_HINT}.`, { details: [{ path, message: ID_HINT }] });
}

/** The stored text form of an id (SQLite key). */
export function idToKey(id: PointId): string {
  return typeof id === 'number' ? String(id) : id;
}

export function keyToId(key: string): PointId {
  return /^\d+$/.test(key) ? Number(key) : key;
}

/** Qdrant's order: integer ids ascending, then UUIDs in lexical order. */
export function compareIds(a: PointId, b: PointId): number {
  if (typeof a === 'number') return typeof b === 'number' ? a - b : -1;
  if (typeof b === 'number') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
