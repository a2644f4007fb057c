import { createCipheriv, createDecipheriv, hkdfSync, randomBytes, scrypt as scryptCb, type ScryptOptions } from 'node:crypto';
import { AppError } from '@mcp-fleet/kit';

/**
 * Sealed-box format, version 1, one dot-separated string (base64url fields):
 *   fleet1.<mode>.<salt>.<nonce>.<ciphertext>.<tag>
 * mode "p": key = scrypt(password, salt, N=2^15, r=8, p=1); mode "k": key = HKDF-SHA256(ENCRYPTION_KEY, salt).
 * AES-256-GCM, 16-byte salt, 12-byte nonce, 16-byte tag; "fleet1.<mode>.<salt>.<nonce>" is the associated data,
 * so changing any field makes decryption fail.
 */
export const FORMAT = 'fleet1';
export const SCRYPT_PARAMS: ScryptOptions = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const SALT_BYTES = 16;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_INFO = 'mcp-fleet encrypt v1';

export type KeyMode = 'p' | 'k';

function scrypt(password: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password, salt, 32, SCRYPT_PARAMS, (err, key) => (err ? reject(err) : resolve(key))));
}

async function deriveKey(mode: KeyMode, salt: Buffer, secret: { password?: string; key?: Buffer }): Promise<Buffer> {
  if (mode === 'p') return scrypt(secret.password!, salt);
  return Buffer.from(hkdfSync('sha256', secret.key!, salt, HKDF_INFO, 32));
}

export async function seal(plaintext: Buffer, secret: { password?: string; key?: Buffer }): Promise<{ token: string; mode: KeyMode }> {
  const mode: KeyMode = secret.password !== undefined ? 'p' : 'k';
  const salt = randomBytes(SALT_BYTES);
  const nonce = randomBytes(NONCE_BYTES);
  const key = await deriveKey(mode, salt, secret);
  const header = `${FORMAT}.${mode}.${salt.toString('base64url')}.${nonce.toString('base64url')}`;
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(header));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { token: `${header}.${ciphertext.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`, mode };
}

const B64URL = /^[A-Za-z0-9_-]*$/;

export function parseSealed(token: string): {
  mode: KeyMode;
  header: string;
  salt: Buffer;
  nonce: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
} {
  const parts = token.trim().split('.');
  const malformed = () =>
    new AppError(
      'VALIDATION_ERROR',
      `ciphertext is not a ${FORMAT} token from the encrypt tool (fleet1.<mode>.<salt>.<nonce>.<data>.<tag>).`,
      {
        details: [{ path: 'ciphertext', message: 'malformed' }],
      },
    );
  if (parts.length !== 6 || parts[0] !== FORMAT || (parts[1] !== 'p' && parts[1] !== 'k') || !parts.slice(2).every((p) => B64URL.test(p))) {
    throw malformed();
  }
  const [, mode, salt, nonce, data, tag] = parts;
  const out = {
    mode: mode as KeyMode,
    header: parts.slice(0, 4).join('.'),
    salt: Buffer.from(salt, 'base64url'),
    nonce: Buffer.from(nonce, 'base64url'),
    ciphertext: Buffer.from(data, 'base64url'),
    tag: Buffer.from(tag, 'base64url'),
  };
  if (out.salt.length !== SALT_BYTES || out.nonce.length !== NONCE_BYTES || out.tag.length !== TAG_BYTES) throw malformed();
  return out;
}

export async function open(token: string, secret: { password?: string; key?: Buffer }): Promise<Buffer> {
  const sealed = parseSealed(token);
  const key = await deriveKey(sealed.mode, sealed.salt, secret);
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(sealed.header));
  decipher.setAuthTag(sealed.tag);
  try {
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  } catch {
    throw new AppError(
      'VALIDATION_ERROR',
      'Decryption failed: authentication failed. The password or key is wrong, or the ciphertext was modified.',
      { details: [{ path: 'ciphertext', message: 'authentication failed' }] },
    );
  }
}
