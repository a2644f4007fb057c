import type { SchemaCache, SqlConnection } from '@mcp-fleet/sql';
import type { Config } from '../config';

export interface SqlToolDeps {
  config: Config;
  connection: SqlConnection;
  schemaCache: SchemaCache;
}
