import type { ConnectionRegistry } from '@mcp-fleet/sql';
import { z } from 'zod';
import { SANDBOX, type Config } from '../config';

export interface DbToolDeps {
  config: Config;
  registry: ConnectionRegistry;
}

export const databaseField = z
  .string()
  .min(1)
  .max(63)
  .default(SANDBOX)
  .describe(`Named connection to use (default "${SANDBOX}", the embedded SQLite database); GET /health lists the configured names.`);

export const tableNameField = z.string().min(1).max(128).describe('Table or view name, exactly as db_tables lists it.');

export const schemaField = z
  .string()
  .min(1)
  .max(128)
  .optional()
  .describe('PostgreSQL schema of the table (default: the search path); SQLite has only "main".');
