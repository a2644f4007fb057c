import { z } from 'zod';
import { forwardSpec } from './forward';
import { databaseField } from './fields';

export const dbSchema = forwardSpec({
  name: 'db_schema',
  service: 'database-mcp',
  title: 'Describe a database',
  description:
    'Tables and views of a named database with their columns (type, nullability, default, primary key), indexes and foreign keys; the first 100 tables (then truncated: true).',
  input: z.object({ database: databaseField }).strict(),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
});
