import path from 'node:path';
import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { openVectorStore, qdrantOptions, type VectorStore } from '@mcp-fleet/vector-store';
import { SERVICE_ID, type Config } from './config';
import { createEmbedder, type Embedder } from './embedder';
import { MemoryBank } from './memories';
import { createTools } from './tools';

export interface AdvancedMemoryDeps {
  config: Config;
  logger: Logger;
  /** Injected in tests; otherwise Qdrant (QDRANT_URL) or the embedded store under DATA_DIR. */
  store?: VectorStore;
  embedder?: Embedder;
}

export async function createApp({
  config,
  logger,
  store: injected,
  embedder: givenEmbedder,
}: AdvancedMemoryDeps): Promise<ServiceApp & { bank: MemoryBank }> {
  const store =
    injected ??
    (await openVectorStore({
      ...qdrantOptions(config),
      dir: path.join(config.DATA_DIR, SERVICE_ID),
      // content (16000 chars, up to 64 KB of UTF-8) + metadata (16 KB) + the other fields
      limits: { maxPayloadBytes: 128 * 1024 },
    }));
  const embedder = givenEmbedder ?? createEmbedder(config);
  const bank = new MemoryBank(store, embedder, config.MEMORY_COLLECTION, config.MEMORY_SCAN_LIMIT);
  logger.info('memory bank ready', { store: store.kind, embedder: embedder.describe() });
  const service = createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ bank }),
    healthChecks: [
      { name: `vector-store:${store.kind}`, required: true, check: () => store.health() },
      { name: 'embedder', required: false, check: () => embedder.describe() },
    ],
    onClose: () => store.close(),
    // The reference's direct interface: POST /memories {content, metadata}, POST /search {query, limit, threshold}.
    routes: (r) => {
      r.tool('post', '/memories', 'store_memory');
      r.tool('post', '/search', 'vector_search', (req) => {
        const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
        const { threshold, ...rest } = body;
        return { ...rest, ...(threshold === undefined ? {} : { scoreThreshold: threshold }) };
      });
    },
  });
  return { ...service, bank };
}
