import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { BCRYPT_CEILING } from '../config';
import type { SecurityDeps } from '../deps';
import { BCRYPT_HASH, passwordField } from './password-shared';
import { bcrypt } from './lazy-modules';

export function passwordVerifyTool({ config }: SecurityDeps) {
  return defineTool({
    name: 'password_verify',
    title: 'Verify password',
    description:
      `Check a password against a stored bcrypt hash ($2a$, $2b$ or $2y$, cost at most ${BCRYPT_CEILING}). Answers valid true or ` +
      `false, the hash's cost, and needsRehash when that cost is below BCRYPT_COST (${config.BCRYPT_COST}). Constant-time compare.`,
    input: z
      .object({
        password: passwordField.describe('The password to check (1-72 bytes UTF-8).'),
        hash: z.string().max(128).regex(BCRYPT_HASH, 'a bcrypt hash such as $2b$12$...').describe('The stored bcrypt hash.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    timeoutMs: 60_000,
    handler: async (args) => {
      const cost = Number(BCRYPT_HASH.exec(args.hash)![1]);
      if (cost < 4 || cost > BCRYPT_CEILING) {
        throw new AppError('VALIDATION_ERROR', `The hash has cost ${cost}; only costs 4-${BCRYPT_CEILING} are checked.`, {
          details: [{ path: 'hash', message: 'cost out of range' }],
        });
      }
      const valid = await bcrypt().compare(args.password, args.hash);
      return { valid, cost, needsRehash: cost < config.BCRYPT_COST };
    },
  });
}
