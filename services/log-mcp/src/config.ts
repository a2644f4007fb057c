import path from 'node:path';
import { baseEnvShape, csv, loadConfig, type Env } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'log-mcp';

export const configSchema = z.object({
  ...baseEnvShape,
  LOG_ROOTS: csv([]).describe(
    "Comma-separated directories the log tools read (default: DATA_DIR/logs, where the launcher writes every service's <service>.log, plus ./logs when it exists).",
  ),
  LOG_MAX_SCAN_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(4 * 1024 ** 3)
    .default(64 * 1024 * 1024)
    .describe('Most bytes one call reads across all files; beyond it the answer says truncated: true.'),
  LOG_MAX_FILES: z.coerce.number().int().min(1).max(10_000).default(200).describe('Most files one call reads.'),
  LOG_MAX_LINE_BYTES: z.coerce
    .number()
    .int()
    .min(256)
    .max(1024 * 1024)
    .default(64 * 1024)
    .describe('Longer lines are cut to this many bytes before parsing and matching.'),
  LOG_REGEX_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(50)
    .max(60_000)
    .default(2000)
    .describe("Total time one search's regex may run, in a worker thread that is terminated on overrun (TIMEOUT)."),
  LOG_REGEX_MAX_LENGTH: z.coerce.number().int().min(1).max(10_000).default(500).describe('Longest accepted regex, in characters.'),
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
