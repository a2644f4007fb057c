import path from 'node:path';
import { baseEnvShape, int, loadConfig, unsetIfEmpty, type Env } from '@mcp-fleet/kit';
import { downstreamServices, GATEWAY_ID, getService, resolveUrl } from '@mcp-fleet/inventory';
import { z } from 'zod';

export const SERVICE_ID = 'marketplace-mcp';

/** The sample catalog shipped in the repository, served when MARKETPLACE_SKILLS_DIR is unset. */
export const SAMPLE_SKILLS_DIR = path.resolve(__dirname, '../catalog/skills');
/** The sample sub-registry entries shipped in the repository. */
export const SAMPLE_REGISTRY_FILE = path.resolve(__dirname, '../catalog/registry.json');

const optionalSecret = (min: number, what: string) =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? undefined : v))
    .refine((v) => v === undefined || v.length >= min, `${what} must be at least ${min} characters`)
    .meta({ secret: true });

/** The environment this service reads: the kit's base variables plus its own, each with `.describe()`. */
export const configSchema = z.object({
  ...baseEnvShape,
  MARKETPLACE_SKILLS_DIR: z
    .string()
    .min(1)
    .default(SAMPLE_SKILLS_DIR)
    .describe('Folder of skills (<name>/SKILL.md, or <name>/<semver>/SKILL.md for several versions); default: the sample catalog.'),
  MARKETPLACE_REGISTRY_FILE: z
    .string()
    .default(SAMPLE_REGISTRY_FILE)
    .describe('JSON file of extra sub-registry entries (server.json objects, or {"servers": [...]}); default: the sample; empty: none.'),
  MARKETPLACE_PUBLIC_URL: unsetIfEmpty(z.url({ protocol: /^https?$/ })).describe(
    'Base URL clients reach the marketplace at, used in download URLs (default http://127.0.0.1:<port>).',
  ),
  MARKETPLACE_GATEWAY_URL: unsetIfEmpty(z.url({ protocol: /^https?$/ })).describe(
    "The gateway's base URL, whose /mcp is every fleet service's streamable-http remote (default: the gateway's documented port).",
  ),
  MARKETPLACE_NAMESPACE: z
    .string()
    .regex(/^[a-zA-Z0-9.-]{1,100}$/, 'a reverse-DNS namespace such as io.example')
    .default('io.mcp-fleet')
    .describe('Reverse-DNS namespace of the fleet services in the sub-registry (<namespace>/<service-id>).'),
  MARKETPLACE_ADMIN_TOKEN: optionalSecret(16, 'MARKETPLACE_ADMIN_TOKEN').describe(
    'The admin credential publishing needs (X-Admin-Token header); unset, publishing answers NOT_CONFIGURED.',
  ),
  MARKETPLACE_MAX_ARCHIVE_BYTES: int(5 * 1024 * 1024, 1024, 256 * 1024 * 1024).describe(
    'Largest skill archive (packed, and unpacked in total) accepted or served.',
  ),
  MARKETPLACE_MAX_FILES: int(500, 1, 10_000).describe('Most files one skill version may hold.'),
  MARKETPLACE_RESCAN_MS: int(2000, 0, 3_600_000).describe(
    'How often (at most) a request compares the skills folder and the store with what was read, reading the catalog again when a file changed; 0: on every request.',
  ),
  JWT_SECRET: optionalSecret(32, 'JWT_SECRET').describe(
    "security-mcp's HMAC key: set, every route but /health needs a bearer token from its jwt_token (scope market:read; publishing market:write).",
  ),
  JWT_ISSUER: z.string().min(1).max(256).default('mcp-fleet').describe('Required "iss" of tokens (security-mcp\'s JWT_ISSUER).'),
  JWT_AUDIENCE: unsetIfEmpty(z.string().min(1).max(256)).describe('Required "aud" of tokens, when set.'),
});

export interface FleetServiceRef {
  id: string;
  description: string;
  url: string;
  tools: string[];
}

export type Config = z.output<typeof configSchema> & {
  /** The fleet's built HTTP services and where each is reached (readConfig fills it from `<ID>_URL`/`<ID>_PORT`). */
  fleet?: FleetServiceRef[];
  gatewayUrl?: string;
};

/** The fleet services the sub-registry lists, at the URLs the environment gives them. */
export function fleetServices(env: Env = {}): { fleet: FleetServiceRef[]; gatewayUrl: string } {
  const fleet = downstreamServices().map((s) => ({ id: s.id, description: s.description, url: resolveUrl(s, env), tools: [...s.tools] }));
  return { fleet, gatewayUrl: resolveUrl(getService(GATEWAY_ID)!, env) };
}

export function readConfig(env?: Env): Config {
  const source = env ?? process.env;
  const config: Config = loadConfig(SERVICE_ID, configSchema, source);
  return { ...config, ...fleetServices(source) };
}
