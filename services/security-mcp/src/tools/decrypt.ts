import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { FORMAT, open, parseSealed } from '../crypto-box';
import type { SecurityDeps } from '../deps';

export function decryptTool({ encryptionKey }: SecurityDeps) {
  return defineTool({
    name: 'decrypt',
    title: 'Decrypt',
    description:
      `Decrypt a ${FORMAT}.* string made by encrypt: with the same password, or with ENCRYPTION_KEY when it was made without one. ` +
      `A wrong password or key, or any modification, is refused with VALIDATION_ERROR "authentication failed". Output as UTF-8 ` +
      `text, or base64 with encoding "base64" (binary plaintext needs it). Ciphertext up to about 1.4 MB.`,
    input: z
      .object({
        ciphertext: z.string().min(1).max(1_500_000).describe(`The ${FORMAT}.* string from encrypt.`),
        password: z.string().min(1).max(1024).optional().describe('The password used to encrypt, if any.'),
        encoding: z.enum(['utf8', 'base64']).default('utf8').describe('How to return the plaintext.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const { mode } = parseSealed(args.ciphertext);
      if (mode === 'p' && args.password === undefined) {
        throw new AppError('VALIDATION_ERROR', 'This ciphertext was encrypted with a password; send it as password.', {
          details: [{ path: 'password', message: 'required for this ciphertext' }],
        });
      }
      if (mode === 'k' && args.password !== undefined) {
        throw new AppError('VALIDATION_ERROR', 'This ciphertext was encrypted with ENCRYPTION_KEY, not a password; drop password.', {
          details: [{ path: 'password', message: 'not used for this ciphertext' }],
        });
      }
      if (mode === 'k' && !encryptionKey) {
        throw new AppError('NOT_CONFIGURED', 'This ciphertext needs ENCRYPTION_KEY, which is not set on security-mcp.');
      }
      const data = await open(args.ciphertext, mode === 'p' ? { password: args.password } : { key: encryptionKey });
      if (args.encoding === 'base64') return { plaintext: data.toString('base64'), encoding: 'base64' };
      try {
        return { plaintext: new TextDecoder('utf-8', { fatal: true }).decode(data), encoding: 'utf8' };
      } catch {
        throw new AppError('VALIDATION_ERROR', 'The plaintext is binary, not UTF-8; ask again with encoding "base64".', {
          details: [{ path: 'encoding', message: 'plaintext is not UTF-8' }],
        });
      }
    },
  });
}
