import { AppError, defineTool, pageShape, paginate } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { SqlToolDeps } from './shared';

export function createSchemaTool({ connection, schemaCache }: SqlToolDeps) {
  return defineTool({
    name: 'schema',
    title: 'Tables and columns',
    description:
      'action "list": the tables and views (PostgreSQL: all non-system schemas, search-path schemas first; SQLite: "main"), ' +
      'paginated with limit 1-500 (default 50) and nextCursor, at most 10000 considered. action "describe": one table\'s columns ' +
      '(type, nullability, default, primary key), indexes and foreign keys; NOT_FOUND for an unknown table. Read-only.',
    input: z
      .object({
        action: z.enum(['list', 'describe']).describe('"list" the tables or "describe" one.'),
        table: z.string().min(1).max(128).optional().describe('Table or view to describe (required for "describe").'),
        schema: z.string().min(1).max(128).optional().describe('PostgreSQL schema: filters "list", disambiguates "describe".'),
        ...pageShape,
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      if (args.action === 'describe') {
        if (!args.table) {
          throw new AppError('VALIDATION_ERROR', 'action "describe" needs "table"; list the tables with action "list".', {
            details: [{ path: 'table', message: 'required for describe' }],
          });
        }
        return { engine: connection.info.engine, table: await schemaCache.describe(args.table, args.schema) };
      }
      const page = paginate(await schemaCache.listTables(args.schema), args.limit, args.cursor);
      return {
        engine: connection.info.engine,
        tables: page.items,
        total: page.total,
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      };
    },
  });
}
