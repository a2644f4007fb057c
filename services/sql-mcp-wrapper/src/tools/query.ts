import { defineTool } from '@mcp-fleet/kit';
import { buildSelect, FILTER_OPS, MAX_IN_VALUES } from '@mcp-fleet/sql';
import { z } from 'zod';
import type { SqlToolDeps } from './shared';

const identifier = z.string().min(1).max(128);
const scalar = z.union([z.string().max(100_000), z.number(), z.boolean(), z.null()]);

export const MAX_LIMIT = 500;

export function createQueryTool({ config, connection, schemaCache }: SqlToolDeps) {
  return defineTool({
    name: 'query',
    title: 'Structured read-only query',
    description:
      'Reads rows from one table or view without writing SQL: pick columns, filter (eq, ne, lt, lte, gt, gte, like, ilike, in, ' +
      'is_null, not_null), order, limit (1-500, default 50) and offset. Table and column names must exist in the live schema ' +
      '(NOT_FOUND / VALIDATION_ERROR otherwise); values are always bound, never spliced into SQL. Read-only; rows come in ' +
      `primary-key order when no order is given; truncated: true and nextOffset when more rows match. Each query may run ` +
      `${config.SQL_STATEMENT_TIMEOUT_MS} ms (then TIMEOUT). "like" is case-sensitive on PostgreSQL and ASCII-case-insensitive on SQLite.`,
    input: z
      .object({
        table: identifier.describe('Table or view name, as schema { action: "list" } shows it.'),
        schema: identifier.optional().describe('PostgreSQL schema (default: the search path). SQLite has only "main".'),
        columns: z.array(identifier).max(100).optional().describe('Columns to return (default: all).'),
        filters: z
          .array(
            z
              .object({
                column: identifier.describe('Column to test.'),
                op: z.enum(FILTER_OPS).describe('Operator; like/ilike take a pattern with % and _ wildcards.'),
                value: z
                  .union([scalar, z.array(scalar).max(MAX_IN_VALUES)])
                  .optional()
                  .describe(`Value to compare with; an array of up to ${MAX_IN_VALUES} for "in"; omitted for is_null / not_null.`),
              })
              .strict(),
          )
          .max(50)
          .default([])
          .describe('Conditions, all of which must hold (AND).'),
        order: z
          .array(
            z
              .object({
                column: identifier.describe('Column to sort by.'),
                direction: z.enum(['asc', 'desc']).default('asc').describe('Sort direction.'),
              })
              .strict(),
          )
          .max(10)
          .default([])
          .describe('Sort keys, most significant first (default: the primary key).'),
        limit: z.number().int().min(1).max(MAX_LIMIT).default(50).describe(`Rows to return (1-${MAX_LIMIT}, default 50).`),
        offset: z.number().int().min(0).max(1_000_000).default(0).describe('Rows to skip (at most 1000000).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    timeoutMs: Math.max(config.TOOL_TIMEOUT_MS, config.SQL_STATEMENT_TIMEOUT_MS + 5000),
    handler: async (args, ctx) => {
      const table = await schemaCache.describe(args.table, args.schema);
      const { sql, params } = buildSelect(connection.info.engine, table, args);
      const result = await connection.query(sql, params, { maxRows: args.limit, signal: ctx.signal });
      return {
        table: { schema: table.schema, name: table.name, type: table.type },
        columns: result.columns,
        rows: result.rows,
        rowCount: result.rowCount,
        truncated: result.truncated,
        ...(result.truncatedReason ? { truncatedReason: result.truncatedReason } : {}),
        ...(result.truncated ? { nextOffset: args.offset + result.rowCount } : {}),
      };
    },
  });
}
