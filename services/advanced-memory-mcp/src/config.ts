import { baseEnvShape, int, loadConfig, unsetIfEmpty, type Env } from '@mcp-fleet/kit';
import { collectionNameSchema, qdrantEnvShape } from '@mcp-fleet/vector-store';
import { z } from 'zod';

export const SERVICE_ID = 'advanced-memory-mcp';

/** Compose files often pass `VAR=` for "unset". */

export const configSchema = z.object({
  ...baseEnvShape,
  ...qdrantEnvShape,
  MEMORY_COLLECTION: collectionNameSchema.default('memories'),
  MEMORY_SCAN_LIMIT: int(50_000, 100, 1_000_000).describe('Memories read by one search_memories call (text search scans payloads).'),
  EMBEDDINGS_URL: unsetIfEmpty(z.url({ protocol: /^https?$/ })).describe(
    'OpenAI-compatible server base URL (POST {url}/v1/embeddings); unset: the local deterministic embedder.',
  ),
  EMBEDDINGS_MODEL: z
    .string()
    .min(1)
    .max(200)
    .default('text-embedding-3-small')
    .describe('Model name sent to the OpenAI-compatible embeddings endpoint.'),
  EMBEDDINGS_API_KEY: unsetIfEmpty(z.string().min(1)).describe('API key for the embeddings endpoint (never shown or logged).'),
  EMBEDDINGS_DIMENSIONS: unsetIfEmpty(z.coerce.number().int().min(1).max(4096)).describe(
    'Expected size of remote embeddings; checked on every answer when set.',
  ),
  EMBEDDINGS_TIMEOUT_MS: int(15_000, 100, 300_000).describe('Time limit of one embeddings request.'),
  LOCAL_EMBEDDING_DIMENSIONS: int(384, 16, 4096).describe('Vector size of the local deterministic embedder.'),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
