import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { FORMAT, seal } from '../crypto-box';
import type { SecurityDeps } from '../deps';

export function encryptTool({ encryptionKey }: SecurityDeps) {
  return defineTool({
    name: 'encrypt',
    title: 'Encrypt',
    description:
      `Encrypt with AES-256-GCM. With a password the key is scrypt(password, random 16-byte salt; N=2^15, r=8, p=1); without ` +
      `one, the configured ENCRYPTION_KEY is used (HKDF per message). Random 12-byte nonce. Returns one ${FORMAT}.* string ` +
      `that decrypt opens; any change to it is detected. Plaintext up to 1 MiB (text, or base64 with encoding "base64").`,
    input: z
      .object({
        plaintext: z.string().max(1_400_000).describe('Data to encrypt: UTF-8 text, or base64 when encoding is "base64".'),
        password: z.string().min(1).max(1024).optional().describe('Password to derive the key from; omit to use ENCRYPTION_KEY.'),
        encoding: z.enum(['utf8', 'base64']).default('utf8').describe('How plaintext is encoded.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args) => {
      if (args.password === undefined && !encryptionKey) {
        throw new AppError(
          'NOT_CONFIGURED',
          'No password given and ENCRYPTION_KEY is not set on security-mcp; send a password or configure the key.',
        );
      }
      if (args.encoding === 'base64' && !/^[A-Za-z0-9+/]*={0,2}$/.test(args.plaintext)) {
        throw new AppError('VALIDATION_ERROR', 'plaintext is not valid base64.', {
          details: [{ path: 'plaintext', message: 'invalid base64' }],
        });
      }
      const data = Buffer.from(args.plaintext, args.encoding);
      if (data.length > 1024 * 1024) {
        throw new AppError('PAYLOAD_TOO_LARGE', 'plaintext is larger than 1 MiB; split it.', {
          details: [{ path: 'plaintext', message: 'too large' }],
        });
      }
      const { token, mode } = await seal(data, args.password !== undefined ? { password: args.password } : { key: encryptionKey });
      return { ciphertext: token, algorithm: 'AES-256-GCM', kdf: mode === 'p' ? 'scrypt' : 'hkdf-sha256', format: FORMAT };
    },
  });
}
