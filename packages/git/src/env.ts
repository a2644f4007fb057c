import path from 'node:path';
import type { Env } from '@mcp-fleet/kit';

/**
 * Variables copied from the service's environment into every git process (inside the sandbox);
 * everything else is dropped. HOME is not among them: git reads no global config and no ssh keys
 * of the service user (hardening.ts).
 */
export const GIT_ENV_PASSTHROUGH = ['PATH', 'TZ'] as const;

/** The scrubbed environment git runs with: GIT_ENV_PASSTHROUGH names only, PATH without relative entries. */
export function gitBaseEnv(env: Env): Record<string, string> {
  const base: Record<string, string> = {};
  for (const name of GIT_ENV_PASSTHROUGH) {
    const value = env[name];
    if (value !== undefined) base[name] = value;
  }
  // A relative PATH entry would find programs in the repository's own directory.
  base.PATH = (base.PATH ?? '/usr/local/bin:/usr/bin:/bin')
    .split(':')
    .filter((dir) => path.isAbsolute(dir))
    .join(':');
  return base;
}
