import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { databaseField, type DbToolDeps } from './shared';

const scalar = z.union([z.string().max(1_000_000), z.number(), z.boolean(), z.null()]);

export function createDbQueryTool({ config, registry }: DbToolDeps) {
  return defineTool({
    name: 'db_query',
    title: 'Run one SQL statement',
    description:
      `Runs ONE SQL statement with bound parameters on a named database and returns its columns (name and engine type) and rows. ` +
      `Placeholders: $1, $2... on PostgreSQL, ? on SQLite. The default database "sandbox" is a writable embedded SQLite file; ` +
      `PostgreSQL connections are read-only (a READ ONLY transaction) unless configured writable, and writes there answer FORBIDDEN. ` +
      `Several statements in one call are refused (VALIDATION_ERROR). At most ${config.DB_MAX_ROWS} rows and about ` +
      `${Math.round(config.DB_MAX_RESULT_BYTES / 1048576)} MiB are returned (then truncated: true); each statement may run ` +
      `${config.DB_STATEMENT_TIMEOUT_MS} ms (then TIMEOUT). SQL errors answer VALIDATION_ERROR with the engine's message and position.`,
    input: z
      .object({
        query: z.string().min(1).max(100_000).describe('One SQL statement (a trailing semicolon is fine).'),
        params: z
          .array(z.union([scalar, z.array(scalar).max(10_000)]))
          .max(1000)
          .default([])
          .describe('Values bound to the placeholders, in order. Arrays only on PostgreSQL (e.g. WHERE id = ANY($1)).'),
        database: databaseField,
        maxRows: z
          .number()
          .int()
          .min(1)
          .max(10_000)
          .optional()
          .describe(`Rows to return at most (default and ceiling ${config.DB_MAX_ROWS}).`),
        rowMode: z
          .enum(['object', 'array'])
          .default('object')
          .describe('"object": rows keyed by column name (a repeated name gets _2, _3...); "array": rows as arrays in column order.'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    timeoutMs: Math.max(config.TOOL_TIMEOUT_MS, config.DB_STATEMENT_TIMEOUT_MS + 5000),
    handler: async (args, ctx) => {
      const conn = registry.get(args.database);
      const maxRows = Math.min(args.maxRows ?? config.DB_MAX_ROWS, config.DB_MAX_ROWS);
      const result = await conn.query(args.query, args.params, { maxRows, rowMode: args.rowMode, signal: ctx.signal });
      return { database: conn.info.name, engine: conn.info.engine, writable: conn.info.writable, maxRows, ...result };
    },
  });
}
