import { baseEnvShape, csv, loadConfig, type Env } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'filesystem-mcp';

const MiB = 1024 * 1024;
const count = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const configSchema = z.object({
  ...baseEnvShape,
  /** Large enough for a FILE_MAX_WRITE_BYTES file sent as base64 (4/3 of its size) plus JSON overhead. */
  BODY_LIMIT: baseEnvShape.BODY_LIMIT.default('8mb'),
  /** Directories the tools may touch; relative caller paths resolve against the first one. */
  WORKSPACE_ROOTS: csv([process.cwd()]),
  FILE_MAX_READ_BYTES: count(MiB, 64 * MiB),
  FILE_MAX_WRITE_BYTES: count(5 * MiB, 256 * MiB),
  FILE_LIST_MAX_ENTRIES: count(10_000, 1_000_000),
  FILE_SEARCH_MAX_FILES: count(20_000, 1_000_000),
  FILE_SEARCH_MAX_FILE_BYTES: count(MiB, 64 * MiB),
  FILE_SEARCH_TIMEOUT_MS: count(10_000, 600_000),
  FILE_ANALYZE_MAX_ENTRIES: count(50_000, 1_000_000),
  FILE_ANALYZE_MAX_BYTES: count(64 * MiB, 16 * 1024 * MiB),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}

/** "8mb" -> 8388608 (the units express.json understands; k and m are powers of 1024). */
export function bodyLimitBytes(limit: string): number {
  const m = /^(\d+)(b|kb|mb)?$/i.exec(limit.trim());
  if (!m) return Number.POSITIVE_INFINITY;
  const unit = (m[2] ?? 'b').toLowerCase();
  return Number(m[1]) * (unit === 'mb' ? MiB : unit === 'kb' ? 1024 : 1);
}
