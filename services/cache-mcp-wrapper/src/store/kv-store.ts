import { AppError } from '@mcp-fleet/kit';

export interface SetOptions {
  /** Expire after this many milliseconds; without it (and without keepTtl) the key never expires. */
  ttlMs?: number;
  /** Only when the key does not exist. */
  nx?: boolean;
  /** Only when the key exists. */
  xx?: boolean;
  /** Keep the key's current expiry (used by session updates without sliding). */
  keepTtl?: boolean;
}

export interface ScanPage {
  /** Full (namespaced) keys. */
  keys: string[];
  /** Opaque; present when the scan has more to give. */
  cursor?: string;
}

/**
 * What both backends do, with the same semantics. Keys here are full keys: namespacing and
 * validation happen in the tools, so a store never sees caller text it could be tricked with.
 */
export interface KvStore {
  readonly backend: 'embedded' | 'redis';
  get(key: string): Promise<string | null>;
  mget(keys: string[]): Promise<(string | null)[]>;
  /** False when an NX/XX condition stopped the write. */
  set(key: string, value: string, options?: SetOptions): Promise<boolean>;
  /** All or nothing. */
  mset(entries: [string, string][], ttlMs?: number): Promise<void>;
  del(keys: string[]): Promise<number>;
  exists(key: string): Promise<boolean>;
  /** False when the key does not exist. */
  pexpire(key: string, ttlMs: number): Promise<boolean>;
  /** Milliseconds left; -1 when the key never expires, -2 when it does not exist. */
  pttl(key: string): Promise<number>;
  /** Integer increment; a missing key counts as 0; CONFLICT when the value is not a safe integer. */
  incrBy(key: string, by: number): Promise<number>;
  /** Keys matching a full glob pattern, at most `limit` of them per page. */
  scan(pattern: string, limit: number, cursor?: string): Promise<ScanPage>;
  /** Health probe. */
  ping(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The same words for the same refusals in both backends. */
export const notInteger = () =>
  new AppError(
    'CONFLICT',
    'The key holds a value that is not an integer; incr works only on integer values. Set a number first or use another key.',
  );

export const outOfRange = () =>
  new AppError('CONFLICT', `The increment would leave the safe integer range (±${Number.MAX_SAFE_INTEGER}); reset the key.`);

export const INTEGER_TEXT = /^(0|-?[1-9][0-9]*)$/;

export function badCursor(): AppError {
  return new AppError('VALIDATION_ERROR', 'The cursor is not one this service issued; start again without a cursor.', {
    details: [{ path: 'cursor', message: 'unrecognised cursor' }],
  });
}

export function encodeScanCursor(value: Record<string, unknown>): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeScanCursor(cursor: string): Record<string, unknown> {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw badCursor();
}
