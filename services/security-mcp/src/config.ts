import { baseEnvShape, int, loadConfig, type Env } from '@mcp-fleet/kit';
import { outboundEnvShape } from '@mcp-fleet/outbound';
import { z } from 'zod';

export const SERVICE_ID = 'security-mcp';

/** bcrypt cost below this is refused everywhere (config and arguments). */
export const BCRYPT_FLOOR = 10;
export const BCRYPT_CEILING = 15;

const optionalSecret = (min: number, what: string) =>
  z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? undefined : v))
    .refine((v) => v === undefined || v.length >= min, `${what} must be at least ${min} characters`);

/** 32 bytes as 64 hex characters or base64 (44 chars with padding, or base64url). */
export function decodeKey(text: string): Buffer | undefined {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const buf = Buffer.from(t, 'base64');
    if (buf.length === 32) return buf;
  }
  return undefined;
}

export const configSchema = z.object({
  ...baseEnvShape,
  ...outboundEnvShape,
  JWT_SECRET: optionalSecret(32, 'JWT_SECRET').describe(
    'HMAC key for minting and verifying tokens; shared with the marketplace. Unset: jwt_token and jwt_verify answer NOT_CONFIGURED.',
  ),
  JWT_ALGORITHM: z.enum(['HS256', 'HS384', 'HS512']).default('HS256').describe('HMAC algorithm of minted tokens.'),
  JWT_ISSUER: z.string().min(1).max(256).default('mcp-fleet').describe('iss claim of minted tokens, checked by jwt_verify.'),
  JWT_DEFAULT_TTL_SECONDS: int(3600, 60, 2_592_000).describe('Lifetime of a minted token when the caller names none.'),
  JWT_MAX_TTL_SECONDS: int(2_592_000, 60, 31_536_000).describe('Longest lifetime a caller may ask for.'),
  SECURITY_ADMIN_TOKEN: optionalSecret(16, 'SECURITY_ADMIN_TOKEN').describe(
    'The admin credential jwt_token requires (Authorization: Bearer <token> or admin_token).',
  ),
  BCRYPT_COST: int(12, BCRYPT_FLOOR, BCRYPT_CEILING).describe('bcrypt cost factor of password_hash (10-15).'),
  ENCRYPTION_KEY: z
    .string()
    .optional()
    .transform((v) => (v === undefined || v === '' ? undefined : v))
    .refine((v) => v === undefined || decodeKey(v) !== undefined, 'ENCRYPTION_KEY must be 32 bytes as 64 hex characters or base64')
    .meta({ secret: true })
    .describe('Key for encrypt/decrypt without a password: 32 bytes, hex or base64.'),
});

export type Config = z.output<typeof configSchema>;

export function readConfig(env?: Env): Config {
  return loadConfig(SERVICE_ID, configSchema, env);
}
