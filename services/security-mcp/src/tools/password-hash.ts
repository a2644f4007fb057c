import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { BCRYPT_CEILING, BCRYPT_FLOOR } from '../config';
import type { SecurityDeps } from '../deps';
import { passwordField } from './password-shared';
import { bcrypt } from './lazy-modules';

export function passwordHashTool({ config }: SecurityDeps) {
  return defineTool({
    name: 'password_hash',
    title: 'Hash password',
    description:
      `Hash a password with bcrypt. cost defaults to BCRYPT_COST (${config.BCRYPT_COST}); ${BCRYPT_FLOOR} is the floor and ` +
      `${BCRYPT_CEILING} the ceiling (each step doubles the time; cost 15 takes seconds). Passwords are 1-72 bytes of UTF-8 ` +
      `without NUL bytes (bcrypt's own limit; longer ones are refused, never cut). The password is never logged or returned.`,
    input: z
      .object({
        password: passwordField.describe('The password (1-72 bytes UTF-8).'),
        cost: z
          .number()
          .int()
          .min(BCRYPT_FLOOR)
          .max(BCRYPT_CEILING)
          .optional()
          .describe(`bcrypt cost (${BCRYPT_FLOOR}-${BCRYPT_CEILING}).`),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: false, openWorldHint: false },
    timeoutMs: 60_000,
    handler: async (args) => {
      const cost = args.cost ?? config.BCRYPT_COST;
      const hash = await bcrypt().hash(args.password, cost);
      return { hash, algorithm: 'bcrypt', cost };
    },
  });
}
