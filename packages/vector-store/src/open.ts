import { EmbeddedVectorStore } from './embedded';
import { QdrantVectorStore } from './qdrant';
import type { VectorStore, VectorStoreLimits } from './types';

export interface OpenVectorStoreOptions {
  /** Qdrant base URL; when set, Qdrant is used and `dir` is ignored. */
  qdrantUrl?: string;
  qdrantApiKey?: string;
  qdrantTimeoutMs?: number;
  /** Directory of the embedded store. */
  dir: string;
  limits?: Partial<VectorStoreLimits>;
  maxPointsPerCollection?: number;
}

/** Qdrant when configured (decisions.md "Backends"), the embedded store under `dir` otherwise. */
export async function openVectorStore(options: OpenVectorStoreOptions): Promise<VectorStore> {
  if (options.qdrantUrl) {
    return new QdrantVectorStore({
      url: options.qdrantUrl,
      apiKey: options.qdrantApiKey,
      timeoutMs: options.qdrantTimeoutMs,
      limits: options.limits,
    });
  }
  return EmbeddedVectorStore.open({ dir: options.dir, limits: options.limits, maxPointsPerCollection: options.maxPointsPerCollection });
}
