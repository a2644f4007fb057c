import { randomUUID } from 'node:crypto';
import { AppError, bearerToken, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import { AdminGuard } from '../admin';
import type { SecurityDeps } from '../deps';
import { jose } from './lazy-modules';
import { audienceField, RESERVED_CLAIMS, scopeField, scopesOf } from './jwt-shared';

export function jwtTokenTool({ config, jwtKey }: SecurityDeps) {
  const guard = new AdminGuard(config.SECURITY_ADMIN_TOKEN);
  return defineTool({
    name: 'jwt_token',
    title: 'Mint JWT',
    description:
      `Mint a signed bearer token (${config.JWT_ALGORITHM}, JWT_SECRET) for a subject with scopes (space-separated in "scope"). ` +
      `Needs the admin credential: "Authorization: Bearer <SECURITY_ADMIN_TOKEN>" on a direct call or the admin_token argument ` +
      `(the gateway forwards arguments only). exp is always set: ttlSeconds default ${config.JWT_DEFAULT_TTL_SECONDS}, at most ` +
      `${config.JWT_MAX_TTL_SECONDS}. Extra claims at most 4 KiB of JSON. NOT_CONFIGURED when JWT_SECRET or SECURITY_ADMIN_TOKEN is unset. ` +
      `After 10 wrong admin credentials within a minute every attempt answers RATE_LIMITED (Retry-After) until the window passes.`,
    input: z
      .object({
        subject: z.string().min(1).max(256).describe('The "sub" claim: who the token is for.'),
        scope: scopeField.default('market:read').describe('Scopes, as a space-separated string or a list (default "market:read").'),
        ttlSeconds: z
          .number()
          .int()
          .min(60)
          .max(config.JWT_MAX_TTL_SECONDS)
          .default(config.JWT_DEFAULT_TTL_SECONDS)
          .describe(`Lifetime in seconds (60-${config.JWT_MAX_TTL_SECONDS}).`),
        audience: audienceField.optional().describe('The "aud" claim (one value or a list).'),
        claims: z
          .record(z.string().min(1).max(64), z.json())
          .optional()
          .describe('Extra custom claims (not iss, sub, aud, exp, nbf, iat, jti, scope); at most 4 KiB as JSON.'),
        admin_token: z.string().max(1024).optional().describe('The admin credential, when it cannot be sent as a bearer header.'),
      })
      .strict(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async (args, ctx) => {
      if (!jwtKey) {
        throw new AppError(
          'NOT_CONFIGURED',
          'Token minting is off: JWT_SECRET is not set on security-mcp (the marketplace must share it).',
        );
      }
      guard.check(args.admin_token ?? bearerToken(ctx.authorization), 'jwt_token');
      const extra = args.claims ?? {};
      const reserved = Object.keys(extra).filter((k) => RESERVED_CLAIMS.has(k));
      if (reserved.length) {
        throw new AppError('VALIDATION_ERROR', `claims may not set ${reserved.join(', ')}; use the dedicated arguments.`, {
          details: reserved.map((k) => ({ path: `claims.${k}`, message: 'reserved claim' })),
        });
      }
      if (Buffer.byteLength(JSON.stringify(extra)) > 4096) {
        throw new AppError('VALIDATION_ERROR', 'claims are larger than 4 KiB as JSON; keep tokens small.', {
          details: [{ path: 'claims', message: 'too large' }],
        });
      }
      const scopes = scopesOf(args.scope);
      const now = Math.floor(Date.now() / 1000);
      const jti = randomUUID();
      const payload = { ...extra, scope: scopes.join(' ') };
      let builder = new (jose().SignJWT)(payload)
        .setProtectedHeader({ alg: config.JWT_ALGORITHM, typ: 'JWT' })
        .setSubject(args.subject)
        .setIssuer(config.JWT_ISSUER)
        .setIssuedAt(now)
        .setExpirationTime(now + args.ttlSeconds)
        .setJti(jti);
      if (args.audience !== undefined) builder = builder.setAudience(args.audience);
      const token = await builder.sign(jwtKey);
      return {
        token,
        tokenType: 'Bearer',
        expiresIn: args.ttlSeconds,
        expiresAt: new Date((now + args.ttlSeconds) * 1000).toISOString(),
        claims: {
          ...payload,
          sub: args.subject,
          iss: config.JWT_ISSUER,
          ...(args.audience !== undefined ? { aud: args.audience } : {}),
          iat: now,
          exp: now + args.ttlSeconds,
          jti,
        },
      };
    },
  });
}
