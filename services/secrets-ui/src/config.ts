import path from 'node:path';
import { baseEnvShape, bool, loadConfig, unsetIfEmpty, type Env, int } from '@mcp-fleet/kit';
import { resolvePort, SERVICES } from '@mcp-fleet/inventory';
import { z } from 'zod';

export const SERVICE_ID = 'secrets-ui';

export const configSchema = z.object({
  ...baseEnvShape,
  VAULT_ADDR: unsetIfEmpty(z.url({ protocol: /^https?$/ })).describe(
    'HashiCorp Vault base URL (e.g. http://vault:8200); set, secrets live in Vault KV v2, unset, in the encrypted file store under DATA_DIR.',
  ),
  VAULT_TOKEN_FILE: unsetIfEmpty(z.string()).describe(
    'The mounted secrets-store token file: the Vault token when VAULT_ADDR is set, else the key material of the file store. Default DATA_DIR/secrets-ui/store-token, created (mode 600) on first start when VAULT_ADDR is unset.',
  ),
  VAULT_KV_MOUNT: z
    .string()
    .regex(/^[\w-]{1,64}$/, 'a mount name such as secret')
    .default('secret')
    .describe('Mount path of the KV v2 engine in Vault.'),
  VAULT_PATH_PREFIX: z
    .string()
    .regex(/^[\w-]{1,64}(\/[\w-]{1,64}){0,4}$/, 'a path such as mcp-fleet')
    .default('mcp-fleet')
    .describe('Path under the mount that holds one secret per service: <mount>/data/<prefix>/<service-id>.'),
  VAULT_TIMEOUT_MS: int(5000, 100, 60_000).describe('Time limit of one request to Vault.'),
  SECRETS_UI_ADMIN_TOKEN: unsetIfEmpty(z.string().min(16, 'SECRETS_UI_ADMIN_TOKEN must be at least 16 characters')).describe(
    'Admin credential for the API (Authorization: Bearer) and the UI login. Unset: the content of SECRETS_UI_ADMIN_TOKEN_FILE, else of the store token file.',
  ),
  SECRETS_UI_ADMIN_TOKEN_FILE: unsetIfEmpty(z.string()).describe('File holding the admin credential (read at start).'),
  SECRETS_EXPORT_DIR: unsetIfEmpty(z.string())
    .describe(
      'Where the runtime environment export files <service-id>.env are written (mode 600). Default DATA_DIR/secrets-ui/env, which the launcher and the image read at start.',
    )
    .meta({ secret: false }),
  SECRETS_RESTART_COMMAND: z
    .string()
    .min(1)
    .max(500)
    .default('docker compose restart {services}')
    .describe('The restart command a write answers with; {services} becomes the space-separated service ids.')
    .meta({ secret: false }),
  SECRET_VALUE_MAX_BYTES: int(8192, 16, 65_536).describe('Largest accepted secret value, in bytes.').meta({ secret: false }),
  SESSION_TTL_SECONDS: int(1800, 60, 86_400).describe('UI sessions end after this long without use.'),
  COOKIE_SECURE: bool(false).describe('Mark the session cookie Secure (set it when the UI is served over HTTPS).').meta({ secret: false }),
  LOGIN_MAX_FAILURES: int(10, 1, 1000).describe(
    'Wrong admin credentials per client address per minute before every attempt answers RATE_LIMITED.',
  ),
});

export type Config = z.output<typeof configSchema> & {
  /** Where each service of the inventory listens: `<ID>_PORT` (the launcher's, FLEET_PORT_OFFSET included), else its documented port. */
  servicePorts?: Record<string, number>;
};

/** The store token file: configured, else DATA_DIR/secrets-ui/store-token. */
export const tokenFileOf = (c: Config): string => c.VAULT_TOKEN_FILE ?? path.join(c.DATA_DIR, SERVICE_ID, 'store-token');

/** Where the export files go: configured, else DATA_DIR/secrets-ui/env (the launcher reads the same place). */
export const exportDirOf = (c: Config): string => c.SECRETS_EXPORT_DIR ?? path.join(c.DATA_DIR, SERVICE_ID, 'env');

export function readConfig(env?: Env): Config {
  const source = env ?? process.env;
  const config: Config = loadConfig(SERVICE_ID, configSchema, source);
  config.servicePorts = Object.fromEntries(SERVICES.map((s) => [s.id, resolvePort(s, source)]));
  return config;
}
