import { defineTool, pageShape, paginate } from '@mcp-fleet/kit';
import { z } from 'zod';
import { databaseField, type DbToolDeps } from './shared';

export function createDbTablesTool({ registry }: DbToolDeps) {
  return defineTool({
    name: 'db_tables',
    title: 'List tables',
    description:
      'Lists the tables and views of a named database (PostgreSQL: every schema except the system ones, search-path schemas first; ' +
      'SQLite: schema "main"), paginated: limit 1-500 (default 50) with nextCursor. At most 10000 tables are considered.',
    input: z
      .object({
        database: databaseField,
        schema: z.string().min(1).max(128).optional().describe('Only this PostgreSQL schema.'),
        ...pageShape,
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const conn = registry.get(args.database);
      const page = paginate(await conn.listTables({ schema: args.schema }), args.limit, args.cursor);
      return {
        database: conn.info.name,
        engine: conn.info.engine,
        tables: page.items,
        total: page.total,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      };
    },
  });
}
