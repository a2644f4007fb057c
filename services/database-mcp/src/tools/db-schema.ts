import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { databaseField, schemaField, type DbToolDeps } from './shared';

const MAX_DESCRIBED = 100;

export function createDbSchemaTool({ registry }: DbToolDeps) {
  return defineTool({
    name: 'db_schema',
    title: 'Describe tables',
    description:
      'Describes one table or view (columns with type, nullability, default and primary-key flag; indexes; foreign keys) when ' +
      `table_name is given, otherwise the first ${MAX_DESCRIBED} tables of the database (then truncated: true). NOT_FOUND for an unknown table.`,
    input: z
      .object({
        database: databaseField,
        table_name: z.string().min(1).max(128).optional().describe('Table or view to describe; omit to describe the whole database.'),
        schema: schemaField,
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const conn = registry.get(args.database);
      if (args.table_name !== undefined) {
        return { database: conn.info.name, engine: conn.info.engine, table: await conn.describeTable(args.table_name, args.schema) };
      }
      const refs = await conn.listTables({ schema: args.schema });
      const tables = [];
      for (const ref of refs.slice(0, MAX_DESCRIBED)) tables.push(await conn.describeTable(ref.name, ref.schema));
      return { database: conn.info.name, engine: conn.info.engine, tables, truncated: refs.length > MAX_DESCRIBED };
    },
  });
}
