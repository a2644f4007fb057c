import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { SERVICE_ID, type Config } from './config';
import { openMemoryStore, type MemoryStore } from './store';
import { createTools } from './tools';

export interface MemoryDeps {
  config: Config;
  logger: Logger;
  /** A store to use instead of the one the config selects (closed with the app). */
  store?: MemoryStore;
}

export async function createApp({ config, logger, store: given }: MemoryDeps): Promise<ServiceApp> {
  const store = given ?? (await openMemoryStore(config, logger));
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ store, maxPageChars: config.MEMORY_MAX_PAGE_CHARS }),
    healthChecks: [{ name: store.backend, required: true, check: () => store.ping() }],
    routes: (r) => {
      r.tool('post', '/memory/store', 'store_memory');
      r.tool('get', '/memory/list', 'list_memories');
      r.tool('get', '/memory/search', 'search_memories');
      r.tool('get', '/memory/stats', 'memory_stats');
      r.tool('delete', '/memory/:memory_id', 'delete_memory');
    },
    onClose: () => store.close(),
  });
}
