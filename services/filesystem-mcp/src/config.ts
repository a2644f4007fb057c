import { baseEnvShape, csv, int, loadConfig, secretFilesEnvShape, type Env } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'filesystem-mcp';

const MiB = 1024 * 1024;

export const configSchema = z.object({
  ...baseEnvShape,
  ...secretFilesEnvShape,
  BODY_LIMIT: baseEnvShape.BODY_LIMIT.default('8mb').describe(
    'Large enough for a FILE_MAX_WRITE_BYTES file sent as base64 (4/3 of its size) plus JSON overhead.',
  ),
  WORKSPACE_ROOTS: csv([process.cwd()]).describe('Directories the tools may touch; relative caller paths resolve against the first one.'),
  FILE_MAX_READ_BYTES: int(MiB, 1, 64 * MiB).describe('Largest file file_read returns whole; larger reads need a range or are refused.'),
  FILE_MAX_WRITE_BYTES: int(5 * MiB, 1, 256 * MiB).describe('Largest content one file_write accepts (PAYLOAD_TOO_LARGE above it).'),
  FILE_LIST_MAX_ENTRIES: int(10_000, 1, 1_000_000).describe(
    'Entries collected per file_list listing; beyond it the answer says truncated.',
  ),
  FILE_SEARCH_MAX_FILES: int(20_000, 1, 1_000_000).describe('Files one file_search looks at before it stops with truncated: true.'),
  FILE_SEARCH_MAX_FILE_BYTES: int(MiB, 1, 64 * MiB).describe('Files larger than this are skipped by file_search content matching.'),
  FILE_SEARCH_TIMEOUT_MS: int(10_000, 1, 600_000).describe(
    'Time budget of one file_search; what was found by then is returned with truncated: true.',
  ),
  FILE_ANALYZE_MAX_ENTRIES: int(50_000, 1, 1_000_000).describe(
    'Entries file_analyze walks in one directory tree before it stops (truncated).',
  ),
  FILE_ANALYZE_MAX_BYTES: int(64 * MiB, 1, 16 * 1024 * MiB).describe('Bytes file_analyze reads from one file for its statistics.'),
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
