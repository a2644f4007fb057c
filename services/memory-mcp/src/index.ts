export { createApp, type MemoryDeps } from './app';
export { configSchema, memoryDatabaseUrl, readConfig, SERVICE_ID, type Config } from './config';
export { parseSearchQuery, toFts5Match, type ParsedQuery } from './query';
export { openMemoryStore, PostgresMemoryStore, sqliteFile, SqliteMemoryStore, type MemoryStore } from './store';
export type { Memory, MemoryInput } from './store/memory-store';
