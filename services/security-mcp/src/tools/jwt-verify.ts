import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { SecurityDeps } from '../deps';
import { audienceField, scopeField, scopesOf } from './jwt-shared';
import { jose } from './lazy-modules';

type Reason = 'expired' | 'not-yet-valid' | 'bad-signature' | 'wrong-algorithm' | 'claim-mismatch' | 'malformed' | 'missing-scope';

function reasonOf(err: unknown): { reason: Reason; message: string } {
  const { errors } = jose();
  if (err instanceof errors.JWTExpired) return { reason: 'expired', message: 'The token has expired.' };
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf' || err.claim === 'iat')
      return { reason: 'not-yet-valid', message: `The token is not valid yet (${err.claim}).` };
    return { reason: 'claim-mismatch', message: `The "${err.claim}" claim does not match (${err.reason}).` };
  }
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return { reason: 'bad-signature', message: 'The signature does not match: wrong secret or modified token.' };
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return { reason: 'wrong-algorithm', message: 'The token uses an algorithm this service does not accept.' };
  }
  if (err instanceof errors.JOSEError) return { reason: 'malformed', message: 'The token is not a well-formed signed JWT.' };
  throw err;
}

export function jwtVerifyTool({ config, jwtKey }: SecurityDeps) {
  return defineTool({
    name: 'jwt_verify',
    title: 'Verify JWT',
    description:
      `Verify a bearer token minted with JWT_SECRET (${config.JWT_ALGORITHM} only; issuer ${config.JWT_ISSUER}): signature, exp/nbf ` +
      `(30 s clock tolerance), optional audience and required scopes. An invalid token is a result ({valid: false, reason}), ` +
      `not an error. Tokens at most 8 KiB. NOT_CONFIGURED when JWT_SECRET is unset.`,
    input: z
      .object({
        token: z.string().min(1).max(8192).describe('The JWT (with or without a "Bearer " prefix).'),
        audience: audienceField.optional().describe('Required "aud" value (one, or any of a list).'),
        requiredScopes: scopeField.optional().describe('Scopes the token must all carry.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      if (!jwtKey) throw new AppError('NOT_CONFIGURED', 'Token verification is off: JWT_SECRET is not set on security-mcp.');
      const token = args.token.replace(/^Bearer\s+/i, '').trim();
      try {
        const { payload, protectedHeader } = await jose().jwtVerify(token, jwtKey, {
          algorithms: [config.JWT_ALGORITHM],
          issuer: config.JWT_ISSUER,
          clockTolerance: 30,
          requiredClaims: ['sub', 'exp'],
          ...(args.audience !== undefined ? { audience: args.audience } : {}),
        });
        const scopes = scopesOf(typeof payload.scope === 'string' ? payload.scope : undefined);
        const missing = scopesOf(args.requiredScopes).filter((s) => !scopes.includes(s));
        if (missing.length) {
          return {
            valid: false,
            reason: 'missing-scope' as Reason,
            message: `The token lacks scope ${missing.join(', ')}.`,
            missingScopes: missing,
            claims: payload,
          };
        }
        return {
          valid: true,
          algorithm: protectedHeader.alg,
          subject: payload.sub,
          scopes,
          expiresAt: new Date((payload.exp ?? 0) * 1000).toISOString(),
          claims: payload,
        };
      } catch (err) {
        return { valid: false, ...reasonOf(err) };
      }
    },
  });
}
