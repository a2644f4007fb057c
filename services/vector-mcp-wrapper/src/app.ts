import path from 'node:path';
import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { openVectorStore, qdrantOptions, type VectorStore } from '@mcp-fleet/vector-store';
import { SERVICE_ID, type Config } from './config';
import { registerQdrantRoutes } from './qdrant-routes';
import { createTools } from './tools';

export interface VectorWrapperDeps {
  config: Config;
  logger: Logger;
  /** Injected in tests; otherwise Qdrant (QDRANT_URL) or the embedded store under DATA_DIR. */
  store?: VectorStore;
}

export async function createApp({ config, logger, store: injected }: VectorWrapperDeps): Promise<ServiceApp & { store: VectorStore }> {
  const store =
    injected ??
    (await openVectorStore({
      ...qdrantOptions(config),
      dir: path.join(config.DATA_DIR, SERVICE_ID),
      limits: { maxPointsPerCall: config.VECTOR_MAX_POINTS_PER_CALL, maxPayloadBytes: config.VECTOR_MAX_PAYLOAD_BYTES },
      maxPointsPerCollection: config.VECTOR_MAX_POINTS_PER_COLLECTION,
    }));
  logger.info('vector store ready', { backend: store.kind });
  const service = createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({
      store,
      options: { maxPointsPerCall: store.limits.maxPointsPerCall, maxPayloadBytes: store.limits.maxPayloadBytes },
    }),
    healthChecks: [{ name: `vector-store:${store.kind}`, required: true, check: () => store.health() }],
    extend: (app, kit) => registerQdrantRoutes(app, kit, store, config.BODY_LIMIT),
    onClose: () => store.close(),
  });
  return { ...service, store };
}
