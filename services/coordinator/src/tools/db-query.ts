import { z } from 'zod';
import { forwardSpec } from './forward';
import { databaseField } from './fields';

export const dbQuery = forwardSpec({
  name: 'db_query',
  service: 'database-mcp',
  title: 'Run one SQL statement',
  description:
    "Run ONE SQL statement on a named database and return its columns and rows (several statements are refused). PostgreSQL connections are read-only unless configured writable. At most database-mcp's DB_MAX_ROWS rows (then truncated: true) and its DB_STATEMENT_TIMEOUT_MS per statement.",
  input: z
    .object({
      query: z.string().min(1).max(100_000).describe('One SQL statement (a trailing semicolon is fine).'),
      database: databaseField,
    })
    .strict(),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
});
