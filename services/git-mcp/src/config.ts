import { baseEnvShape, int, bool, csv, loadConfig, processEnv, type Env } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'git-mcp';

/** Variables copied from the service's environment into every git process; everything else is dropped. */
export const GIT_ENV_PASSTHROUGH = ['PATH', 'HOME', 'TZ', 'SSH_AUTH_SOCK'] as const;

export const configSchema = z.object({
  ...baseEnvShape,
  WORKSPACE_ROOTS: csv([process.cwd()]).describe(
    'Directories that may hold repositories (comma-separated). Default: the working directory.',
  ),
  GIT_TIMEOUT_MS: int(30_000, 1000, 600_000).describe('Time limit of one git process (push included).'),
  GIT_MAX_DIFF_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024).describe('git_diff returns at most this many bytes of patch text.'),
  GIT_ALLOW_PUSH: bool(true).describe('git_push is refused with FORBIDDEN when false.'),
  GIT_PUSH_REMOTES_ALLOWLIST: csv([]).describe(
    'When set, git_push only pushes to these configured remote names. Empty: any configured remote.',
  ),
});

export type Config = z.output<typeof configSchema> & {
  /** The scrubbed environment git runs with (GIT_ENV_PASSTHROUGH names only). */
  GIT_BASE_ENV: Record<string, string>;
};

export function readConfig(env: Env = processEnv()): Config {
  const parsed = loadConfig(SERVICE_ID, configSchema, env);
  const base: Record<string, string> = {};
  for (const name of GIT_ENV_PASSTHROUGH) {
    const value = env[name];
    if (value !== undefined) base[name] = value;
  }
  return { ...parsed, GIT_BASE_ENV: base };
}
