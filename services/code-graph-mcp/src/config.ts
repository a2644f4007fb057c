import { baseEnvShape, int, csv, loadConfig, secretFilesEnvShape, type Env } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'code-graph-mcp';

export const configSchema = z.object({
  ...baseEnvShape,
  ...secretFilesEnvShape,
  WORKSPACE_ROOTS: csv([process.cwd()]).describe('Comma-separated directories that project roots must lie inside.'),
  CODE_GRAPH_MAX_FILES: int(20_000, 1, 1_000_000).describe(
    'Most Python files indexed per project; beyond it the index is marked truncated.',
  ),
  CODE_GRAPH_MAX_FILE_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024).describe('Python files larger than this are reported and skipped.'),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
