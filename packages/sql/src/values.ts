import type { ColumnInfo, QueryResult } from './types';

/** JSON-safe cell values: binary becomes base64, bigint a string, dates ISO strings. */
export function jsonValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (Array.isArray(v)) return v.map(jsonValue);
  return v;
}

function approxBytes(v: unknown): number {
  if (v === null) return 4;
  if (typeof v === 'string') return v.length + 3;
  if (typeof v === 'number' || typeof v === 'boolean') return 8;
  try {
    return JSON.stringify(v)?.length ?? 4;
  } catch {
    return 16;
  }
}

/** Unique keys for object rows: a repeated column name gets a `_2`, `_3`... suffix. */
export function uniqueColumnKeys(columns: ColumnInfo[]): string[] {
  const seen = new Map<string, number>();
  return columns.map((c) => {
    const n = (seen.get(c.name) ?? 0) + 1;
    seen.set(c.name, n);
    return n === 1 ? c.name : `${c.name}_${n}`;
  });
}

export interface ShapeOptions {
  maxRows: number;
  maxBytes: number;
  rowMode: 'object' | 'array';
}

/** Cut array rows to the caps and shape them; `more` says whether the engine had further rows. */
export function shapeRows(
  columns: ColumnInfo[],
  arrayRows: unknown[][],
  more: boolean,
  options: ShapeOptions,
): Pick<QueryResult, 'rows' | 'rowCount' | 'truncated' | 'truncatedReason'> {
  const keys = uniqueColumnKeys(columns);
  const out: (Record<string, unknown> | unknown[])[] = [];
  let bytes = 2;
  let reason: 'maxRows' | 'maxBytes' | undefined = more || arrayRows.length > options.maxRows ? 'maxRows' : undefined;
  const limit = Math.min(arrayRows.length, options.maxRows);
  for (let i = 0; i < limit; i++) {
    const values = arrayRows[i].map(jsonValue);
    let size = 2;
    for (const v of values) size += approxBytes(v) + 1;
    if (options.rowMode === 'object') for (const k of keys) size += k.length + 3;
    if (bytes + size > options.maxBytes && out.length > 0) {
      reason = 'maxBytes';
      break;
    }
    bytes += size;
    if (options.rowMode === 'array') {
      out.push(values);
    } else {
      const row: Record<string, unknown> = {};
      keys.forEach((k, j) => (row[k] = values[j]));
      out.push(row);
    }
  }
  return {
    rows: out as QueryResult['rows'],
    rowCount: out.length,
    truncated: reason !== undefined,
    ...(reason ? { truncatedReason: reason } : {}),
  };
}
