import path from 'node:path';
import { baseEnvShape, csv, loadConfig, secretFilesEnvShape, type Env, int } from '@mcp-fleet/kit';
import { z } from 'zod';

export const SERVICE_ID = 'config-mcp';

/** Names shown by env_vars: a variable is listed when its name starts with one of these. */
export const DEFAULT_ALLOWED_PREFIXES = ['MCP_', 'FLEET_', 'NODE_ENV', 'LOG_', 'PORT', 'HOST', 'DATA_DIR', 'WORKSPACE_ROOTS', 'TZ'];

/** Secret-looking names beyond the kit's isSecretName (password, secret, token, api key, ...). Case-insensitive. */
export const DEFAULT_SECRET_PATTERNS = ['(^|_)KEYS?($|_)', 'SALT', 'DSN', 'SIGNATURE', '(^|_)AUTH($|_)', 'PRIVATE'];

const regexList = (fallback: string[]) =>
  csv(fallback).superRefine((patterns, ctx) => {
    for (const p of patterns) {
      try {
        if (p.length > 200) throw new Error('longer than 200 characters');
        new RegExp(p, 'i');
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: `"${p}" is not a usable regular expression (${(err as Error).message})` });
      }
    }
  });

export const configSchema = z.object({
  ...baseEnvShape,
  ...secretFilesEnvShape,
  WORKSPACE_ROOTS: csv(['.']).describe(
    'Comma-separated directories that config files, validate/backup paths and convert outputs must stay inside (default: the current directory).',
  ),
  ENV_ALLOWED_PREFIXES: csv(DEFAULT_ALLOWED_PREFIXES).describe(
    `env_vars shows only variables whose names start with one of these (default ${DEFAULT_ALLOWED_PREFIXES.join(',')}).`,
  ),
  ENV_SECRET_PATTERNS: regexList(DEFAULT_SECRET_PATTERNS)
    .describe(
      `Comma-separated case-insensitive regexes of secret names, on top of the kit's password/secret/token/api key/authorization/cookie/credential rule (default ${DEFAULT_SECRET_PATTERNS.join(',')}).`,
    )
    .meta({ secret: false }),
  CONFIG_MAX_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024).describe(
    'Largest config file or inline content read, parsed, converted or validated (PAYLOAD_TOO_LARGE above it).',
  ),
  BACKUP_DIR: z.string().min(1).optional().describe('Where backups are kept (default DATA_DIR/config-mcp/backups).'),
  BACKUP_KEEP: int(10, 1, 1000).describe('Backups kept per file; older ones are pruned after each new backup.'),
  BACKUP_MAX_BYTES: int(10 * 1024 * 1024, 1024, 1024 * 1024 * 1024).describe('Largest file the backup tool copies.'),
  VALIDATE_TIMEOUT_MS: int(2000, 100, 60_000).describe(
    'Hard limit for one JSON Schema compile + validation, run in a worker thread that is terminated on overrun (TIMEOUT).',
  ),
});

export type Config = z.output<typeof configSchema>;

export function backupDir(config: Config): string {
  return config.BACKUP_DIR ?? path.join(config.DATA_DIR, 'config-mcp', 'backups');
}

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}

/** The environment env_vars inspects. Injected into createApp so tests pass their own. */
export function processEnvironment(): Env {
  return process.env;
}
