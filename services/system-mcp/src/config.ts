import { baseEnvShape, loadConfig, type Env } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'system-mcp';

export const configSchema = z.object({ ...baseEnvShape });

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
