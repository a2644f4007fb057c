import path from 'node:path';
import { baseEnvShape, csv, loadConfig, type Env } from '@mcp-fleet/kit';
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

export const configSchema = z
  .object({
    ...baseEnvShape,
    /** Config files, validate/backup paths and convert outputs stay inside these directories. */
    WORKSPACE_ROOTS: csv(['.']),
    ENV_ALLOWED_PREFIXES: csv(DEFAULT_ALLOWED_PREFIXES),
    ENV_SECRET_PATTERNS: regexList(DEFAULT_SECRET_PATTERNS),
    /** Largest config file (or inline content) read, parsed or converted. */
    CONFIG_MAX_BYTES: z.coerce.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
    /** Where backups go; default `${DATA_DIR}/config-mcp/backups`. */
    BACKUP_DIR: z.string().min(1).optional(),
    /** Backups kept per file; older ones are pruned after every new backup. */
    BACKUP_KEEP: z.coerce.number().int().min(1).max(1000).default(10),
    /** Largest file backup copies. */
    BACKUP_MAX_BYTES: z.coerce.number().int().min(1024).max(1024 * 1024 * 1024).default(10 * 1024 * 1024),
    /** Hard limit for one JSON Schema compile + validation (runs in a worker thread that is killed on overrun). */
    VALIDATE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(2000),
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
