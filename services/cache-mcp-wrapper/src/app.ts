import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { SERVICE_ID, type Config } from './config';
import { Keyspace } from './keyspace';
import { openKvStore, type KvStore } from './store';
import { createTools } from './tools';

export interface CacheDeps {
  config: Config;
  logger: Logger;
  /** A store to use instead of the one the config selects (closed with the app). */
  store?: KvStore;
}

export async function createApp({ config, logger, store: given }: CacheDeps): Promise<ServiceApp> {
  const store = given ?? (await openKvStore(config, logger));
  const keyspace = new Keyspace(config.CACHE_NAMESPACE);
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ store, keyspace, maxValueBytes: config.CACHE_MAX_VALUE_BYTES, maxResponseBytes: config.CACHE_MAX_RESPONSE_BYTES }),
    healthChecks: [{ name: store.backend, required: true, check: () => store.ping() }],
    onClose: () => store.close(),
  });
}
