import path from 'node:path';
import { baseEnvShape, csv, loadConfig, secretFilesEnvShape, type Env, int } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'log-mcp';

export const configSchema = z.object({
  ...baseEnvShape,
  ...secretFilesEnvShape,
  LOG_ROOTS: csv([]).describe(
    "Comma-separated directories the log tools read (default: DATA_DIR/logs, where the launcher writes every service's <service>.log, plus ./logs when it exists).",
  ),
  LOG_MAX_SCAN_BYTES: int(64 * 1024 * 1024, 1024, 4 * 1024 ** 3).describe(
    'Most bytes one call reads across all files; beyond it the answer says truncated: true.',
  ),
  LOG_MAX_FILES: int(200, 1, 10_000).describe('Most files one call reads.'),
  LOG_MAX_LINE_BYTES: int(64 * 1024, 256, 1024 * 1024).describe('Longer lines are cut to this many bytes before parsing and matching.'),
  LOG_REGEX_TIMEOUT_MS: int(2000, 50, 60_000).describe(
    "Total time one search's regex may run, in a worker thread that is terminated on overrun (TIMEOUT).",
  ),
  LOG_REGEX_MAX_LENGTH: int(500, 1, 10_000).describe('Longest accepted regex, in characters.'),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}

/** The roots to search: LOG_ROOTS, or the fleet log directory plus ./logs. `optional` roots are skipped when missing. */
export function logRoots(config: Config): { path: string; optional: boolean; create: boolean }[] {
  if (config.LOG_ROOTS.length > 0) return config.LOG_ROOTS.map((p) => ({ path: path.resolve(p), optional: false, create: false }));
  return [
    { path: path.join(config.DATA_DIR, 'logs'), optional: false, create: true },
    { path: path.resolve('logs'), optional: true, create: false },
  ];
}
