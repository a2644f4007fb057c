import { EmbeddedVectorStore } from './embedded';
import { QdrantVectorStore } from './qdrant';
import { unsetIfEmpty, int } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { VectorStore, VectorStoreLimits } from './types';

/** The Qdrant variables of every service built on this store (decisions.md "Backends"). */
export const qdrantEnvShape = {
  QDRANT_URL: unsetIfEmpty(z.url({ protocol: /^https?$/ })).describe('Qdrant base URL; unset: the embedded vector store under DATA_DIR.'),
  QDRANT_API_KEY: unsetIfEmpty(z.string().min(1)).describe('Qdrant API key, if the server wants one (never logged).'),
  QDRANT_TIMEOUT_MS: int(30_000, 100, 600_000).describe('Time limit of one Qdrant request.'),
};

/** The openVectorStore options that come from those variables. */
export function qdrantOptions(config: { QDRANT_URL?: string; QDRANT_API_KEY?: string; QDRANT_TIMEOUT_MS: number }) {
  return { qdrantUrl: config.QDRANT_URL, qdrantApiKey: config.QDRANT_API_KEY, qdrantTimeoutMs: config.QDRANT_TIMEOUT_MS };
}

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
