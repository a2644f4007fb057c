import { AppError } from '@mcp-fleet/kit';

/**
 * Quote an identifier for PostgreSQL or SQLite (both use standard double quotes, doubled inside).
 * Callers still check names against the live schema; quoting only makes a checked name literal.
 */
export function quoteIdent(name: string): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 128 || name.includes('\0')) {
    throw new AppError('VALIDATION_ERROR', 'An identifier must be 1-128 characters without NUL bytes.', {
      details: [{ path: 'identifier', message: 'invalid identifier' }],
    });
  }
  return `"${name.replace(/"/g, '""')}"`;
}

/** `"schema"."table"`, or just `"table"` without a schema. */
export function qualifiedName(table: string, schema?: string): string {
  return schema ? `${quoteIdent(schema)}.${quoteIdent(table)}` : quoteIdent(table);
}
