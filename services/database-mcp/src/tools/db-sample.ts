import { defineTool } from '@mcp-fleet/kit';
import { buildSelect } from '@mcp-fleet/sql';
import { z } from 'zod';
import { databaseField, schemaField, tableNameField, type DbToolDeps } from './shared';

export function createDbSampleTool({ registry }: DbToolDeps) {
  return defineTool({
    name: 'db_sample',
    title: 'Sample rows',
    description:
      'Returns the first rows of a table or view (primary-key order when it has one), at most 100 (default 10), with column types; ' +
      'truncated: true when the table holds more. The table name is checked against the live schema (NOT_FOUND otherwise).',
    input: z
      .object({
        table_name: tableNameField,
        database: databaseField,
        schema: schemaField,
        limit: z.number().int().min(1).max(100).default(10).describe('Rows to return (1-100, default 10).'),
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const conn = registry.get(args.database);
      const table = await conn.describeTable(args.table_name, args.schema);
      const { sql, params } = buildSelect(conn.info.engine, table, { limit: args.limit });
      const result = await conn.query(sql, params, { maxRows: args.limit, signal: ctx.signal });
      return {
        database: conn.info.name,
        engine: conn.info.engine,
        table: { schema: table.schema, name: table.name, type: table.type },
        columns: result.columns,
        rows: result.rows,
        rowCount: result.rowCount,
        truncated: result.truncated,
      };
    },
  });
}
