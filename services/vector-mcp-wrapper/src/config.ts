import { baseEnvShape, int, loadConfig, type Env } from '@mcp-fleet/kit';
import { qdrantEnvShape } from '@mcp-fleet/vector-store';
import { z } from 'zod';

export const SERVICE_ID = 'vector-mcp-wrapper';

/** Compose files often pass `VAR=` for "unset". */

export const configSchema = z.object({
  ...baseEnvShape,
  BODY_LIMIT: baseEnvShape.BODY_LIMIT.removeDefault()
    .default('8mb')
    .describe("1000 points of 384 floats is about 4 MB of JSON, so the body limit is larger than the fleet's 1 MiB default."),
  ...qdrantEnvShape,
  VECTOR_MAX_POINTS_PER_CALL: int(1000, 1, 10_000).describe('Points or ids one vector call may carry.'),
  VECTOR_MAX_PAYLOAD_BYTES: int(65_536, 256, 16 * 1024 * 1024).describe('Largest JSON payload of one point.'),
  VECTOR_MAX_POINTS_PER_COLLECTION: int(1_000_000, 1, 50_000_000).describe('Points one embedded collection may hold.'),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
