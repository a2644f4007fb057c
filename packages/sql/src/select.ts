import { AppError } from '@mcp-fleet/kit';
import { qualifiedName, quoteIdent } from './identifiers';
import type { SqlEngine, SqlParam, SqlScalar, TableDescription } from './types';

export const FILTER_OPS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'like', 'ilike', 'in', 'is_null', 'not_null'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export interface SelectFilter {
  column: string;
  op: FilterOp;
  value?: SqlScalar | SqlScalar[];
}

export interface SelectSpec {
  columns?: string[];
  filters?: SelectFilter[];
  order?: { column: string; direction?: 'asc' | 'desc' }[];
  /** Rows wanted; the SQL fetches one more so the caller can tell whether more exist. */
  limit: number;
  offset?: number;
}

export const MAX_IN_VALUES = 1000;

const COMPARE: Record<string, string> = { eq: '=', ne: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' };

function invalid(path: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', `${path}: ${message}`, { details: [{ path, message }] });
}

/**
 * A SELECT over one described table. Every identifier must be a column of the live table (then it
 * is quoted); every value is bound. Without an order, rows come in primary-key order so offsets
 * page stably.
 */
export function buildSelect(engine: SqlEngine, table: TableDescription, spec: SelectSpec): { sql: string; params: SqlParam[] } {
  const known = new Set(table.columns.map((c) => c.name));
  const listed = table.columns
    .slice(0, 50)
    .map((c) => c.name)
    .join(', ');
  const column = (name: string, path: string) => {
    if (!known.has(name)) throw invalid(path, `"${name.slice(0, 128)}" is not a column of ${table.name} (columns: ${listed}).`);
    return quoteIdent(name);
  };
  const params: SqlParam[] = [];
  const bind = (v: SqlParam) => {
    params.push(v);
    return engine === 'postgres' ? `$${params.length}` : '?';
  };

  const select = spec.columns && spec.columns.length > 0 ? spec.columns.map((c, i) => column(c, `columns.${i}`)).join(', ') : '*';
  const where: string[] = [];
  (spec.filters ?? []).forEach((f, i) => {
    const path = `filters.${i}`;
    const col = column(f.column, `${path}.column`);
    const v = f.value;
    switch (f.op) {
      case 'is_null':
      case 'not_null':
        if (v !== undefined) throw invalid(`${path}.value`, `${f.op} takes no value; remove it.`);
        where.push(`${col} IS ${f.op === 'is_null' ? '' : 'NOT '}NULL`);
        return;
      case 'in': {
        if (!Array.isArray(v) || v.length === 0 || v.length > MAX_IN_VALUES) {
          throw invalid(`${path}.value`, `in needs an array of 1-${MAX_IN_VALUES} values.`);
        }
        if (v.some((x) => x === null || typeof x === 'object'))
          throw invalid(`${path}.value`, 'in values must be strings, numbers or booleans.');
        where.push(engine === 'postgres' ? `${col} = ANY(${bind(v)})` : `${col} IN (${v.map((x) => bind(x)).join(', ')})`);
        return;
      }
      default: {
        if (v === undefined || v === null) {
          throw invalid(
            `${path}.value`,
            `${f.op} needs a value${f.op === 'eq' || f.op === 'ne' ? '; use is_null / not_null to test for NULL' : ''}.`,
          );
        }
        if (Array.isArray(v)) throw invalid(`${path}.value`, `${f.op} takes one value; use "in" for a list.`);
        if (f.op === 'like' || f.op === 'ilike') {
          if (typeof v !== 'string') throw invalid(`${path}.value`, `${f.op} needs a string pattern (% and _ are wildcards).`);
          if (engine === 'postgres') where.push(`CAST(${col} AS text) ${f.op === 'like' ? 'LIKE' : 'ILIKE'} ${bind(v)}`);
          else where.push(f.op === 'like' ? `${col} LIKE ${bind(v)}` : `lower(${col}) LIKE lower(${bind(v)})`);
          return;
        }
        where.push(`${col} ${COMPARE[f.op]} ${bind(v)}`);
      }
    }
  });
  const orderSpec =
    spec.order && spec.order.length > 0 ? spec.order : table.primaryKey.map((c) => ({ column: c, direction: 'asc' as const }));
  const order = orderSpec.map((o, i) => `${column(o.column, `order.${i}.column`)} ${o.direction === 'desc' ? 'DESC' : 'ASC'}`);
  const from = engine === 'postgres' ? qualifiedName(table.name, table.schema) : quoteIdent(table.name);
  let sql = `SELECT ${select} FROM ${from}`;
  if (where.length > 0) sql += ` WHERE ${where.join(' AND ')}`;
  if (order.length > 0) sql += ` ORDER BY ${order.join(', ')}`;
  sql += ` LIMIT ${bind(spec.limit + 1)}`;
  if (spec.offset) sql += ` OFFSET ${bind(spec.offset)}`;
  return { sql, params };
}
