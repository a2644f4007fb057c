import { AppError } from '@mcp-fleet/kit';
import type { ParsedQuery } from '../query';

export interface MemoryInput {
  key?: string;
  content: string;
  type: string;
  tags: string[];
  importance: number;
  metadata: Record<string, unknown>;
}

export interface Memory {
  id: string;
  key?: string;
  content: string;
  type: string;
  tags: string[];
  importance: number;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** Keyset position: list pages stay stable while memories are added. */
export interface ListPosition {
  createdAt: number;
  id: string;
}

export interface ListQuery {
  type?: string;
  tag?: string;
  order: 'newest' | 'oldest';
  after?: ListPosition;
  /** Rows to fetch (the tool asks for one more than a page to know whether more exist). */
  limit: number;
}

export interface SearchQuery {
  query: ParsedQuery;
  type?: string;
  /** Every one of these tags. */
  tags: string[];
  offset: number;
  limit: number;
}

export interface SearchHit {
  memory: Memory;
  /** Higher is more relevant; comparable within one backend only. */
  score: number;
  snippet: string;
}

export interface MemoryStats {
  backend: 'sqlite' | 'postgres';
  total: number;
  byType: Record<string, number>;
  oldest?: string;
  newest?: string;
  storageBytes: number;
}

export interface StoreResult {
  memory: Memory;
  created: boolean;
}

/**
 * Both backends, same behaviour: storing with an existing `key` updates that entry (same id and
 * createdAt); search ranks best first, ties newest first.
 */
export interface MemoryStore {
  readonly backend: 'sqlite' | 'postgres';
  store(input: MemoryInput): Promise<StoreResult>;
  /** Many at once, in one transaction (bulk loads, benchmarks). */
  storeMany(inputs: MemoryInput[]): Promise<{ created: number; updated: number }>;
  list(query: ListQuery): Promise<Memory[]>;
  search(query: SearchQuery): Promise<SearchHit[]>;
  delete(id: string): Promise<boolean>;
  stats(): Promise<MemoryStats>;
  ping(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export const SNIPPET_MARK = '**';

/** Keys repeated within one bulk batch: the last one wins, as if stored one by one. */
export function lastPerKey(inputs: MemoryInput[]): MemoryInput[] {
  const seen = new Set<string>();
  const out: MemoryInput[] = [];
  for (let i = inputs.length - 1; i >= 0; i--) {
    const key = inputs[i].key;
    if (key !== undefined) {
      if (seen.has(key)) continue;
      seen.add(key);
    }
    out.push(inputs[i]);
  }
  return out.reverse();
}

export function encodeListCursor(p: ListPosition): string {
  return Buffer.from(JSON.stringify({ t: p.createdAt, i: p.id })).toString('base64url');
}

export function decodeListCursor(cursor: string): ListPosition {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
    if (typeof v.t === 'number' && Number.isSafeInteger(v.t) && v.t >= 0 && typeof v.i === 'string' && /^[0-9a-f-]{36}$/.test(v.i)) {
      return { createdAt: v.t, id: v.i };
    }
  } catch {
    // fall through
  }
  throw new AppError('VALIDATION_ERROR', 'The cursor is not one list_memories issued; start again without a cursor.', {
    details: [{ path: 'cursor', message: 'unrecognised cursor' }],
  });
}
