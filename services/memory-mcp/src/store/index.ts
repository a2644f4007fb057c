import path from 'node:path';
import type { Logger } from '@mcp-fleet/kit';
import { memoryDatabaseUrl, type Config } from '../config';
import type { MemoryStore } from './memory-store';
import { PostgresMemoryStore } from './postgres-store';
import { SqliteMemoryStore } from './sqlite-store';

export type { MemoryStore } from './memory-store';
export { PostgresMemoryStore } from './postgres-store';
export { SqliteMemoryStore } from './sqlite-store';

export function sqliteFile(config: Config): string {
  return path.join(config.DATA_DIR, 'memory-mcp', 'memories.sqlite');
}

/** PostgreSQL when MEMORY_DATABASE_URL (or a postgres DATABASE_URL) is set, SQLite under DATA_DIR otherwise. */
export async function openMemoryStore(config: Config, logger: Logger): Promise<MemoryStore> {
  const url = memoryDatabaseUrl(config);
  if (url) {
    return new PostgresMemoryStore({
      url,
      schema: config.MEMORY_PG_SCHEMA,
      tsConfig: config.MEMORY_PG_TS_CONFIG,
      poolMax: config.MEMORY_PG_POOL_MAX,
      logger,
    });
  }
  return SqliteMemoryStore.open(sqliteFile(config), { searchShards: config.MEMORY_SEARCH_SHARDS });
}
