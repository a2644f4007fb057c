export { createApp, type CacheDeps } from './app';
export { configSchema, readConfig, SERVICE_ID, type Config } from './config';
export { Keyspace } from './keyspace';
export { MemoryKvStore, openKvStore, RedisKvStore, type KvStore } from './store';
