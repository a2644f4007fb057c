import { AppError, bearerToken, FailureBrake, sameSecret } from '@mcp-fleet/kit';
import type { NextFunction, Request, Response } from 'express';
import { errors as joseErrors, jwtVerify } from 'jose';

export const READ_SCOPE = 'market:read';
export const WRITE_SCOPE = 'market:write';

export interface AuthOptions {
  secret?: string;
  issuer: string;
  audience?: string;
}

/**
 * Bearer tokens from security-mcp's jwt_token: the same HMAC secret (HS256/384/512), its issuer and,
 * when configured, audience; "scope" is space-separated. Answers the granted scopes or throws
 * UNAUTHORIZED (401 with WWW-Authenticate) or FORBIDDEN (403, wrong scope).
 */
export class TokenVerifier {
  private readonly key?: Uint8Array;

  constructor(private readonly options: AuthOptions) {
    if (options.secret) this.key = new TextEncoder().encode(options.secret);
  }

  get enabled(): boolean {
    return this.key !== undefined;
  }

  async check(authorization: string | undefined, scope: string): Promise<{ subject?: string; scopes: string[] }> {
    if (!this.key) return { scopes: [] };
    const token = bearerToken(authorization);
    if (!token)
      throw unauthorized(
        'invalid_request',
        `This marketplace needs "Authorization: Bearer <token>" with scope ${scope} (scripts/marketplace/get_market_token.sh mints one).`,
      );
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.key, {
        issuer: this.options.issuer,
        ...(this.options.audience ? { audience: this.options.audience } : {}),
        algorithms: ['HS256', 'HS384', 'HS512'],
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      const why =
        err instanceof joseErrors.JWTExpired
          ? 'the token has expired'
          : err instanceof joseErrors.JWTClaimValidationFailed
            ? `the token's "${err.claim}" claim is not accepted`
            : 'the token is not one security-mcp signed with this JWT_SECRET';
      throw unauthorized('invalid_token', `Bearer token refused: ${why}; mint a new one with scripts/marketplace/get_market_token.sh.`);
    }
    const scopes = typeof payload.scope === 'string' ? payload.scope.split(/\s+/).filter(Boolean) : [];
    if (!scopes.includes(scope)) {
      throw new AppError(
        'FORBIDDEN',
        `The token lacks scope ${scope} (it has: ${scopes.join(' ') || 'none'}); mint one with --scope "${scope}".`,
        {
          details: { requiredScope: scope },
        },
      );
    }
    return { subject: payload.sub, scopes };
  }
}

function unauthorized(error: 'invalid_request' | 'invalid_token', message: string): AppError {
  return new AppError('UNAUTHORIZED', message, { details: { wwwAuthenticate: `Bearer realm="marketplace", error="${error}"` } });
}

/** Sends WWW-Authenticate with a 401 (RFC 6750) and the scope with a 403, then the error envelope. */
export function sendAuthError(res: Response, err: unknown, send: (res: Response, err: unknown) => void): void {
  if (err instanceof AppError && err.code === 'UNAUTHORIZED') {
    const d = err.details as { wwwAuthenticate?: string } | undefined;
    res.set('WWW-Authenticate', d?.wwwAuthenticate ?? 'Bearer realm="marketplace"');
  } else if (err instanceof AppError && err.code === 'FORBIDDEN') {
    const d = err.details as { requiredScope?: string } | undefined;
    res.set('WWW-Authenticate', `Bearer realm="marketplace", error="insufficient_scope", scope="${d?.requiredScope ?? READ_SCOPE}"`);
  }
  send(res, err);
}

/** Every route but /health needs market:read when JWT_SECRET is set (issue 11), /metrics included. */
export function requireRead(verifier: TokenVerifier, send: (res: Response, err: unknown) => void) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!verifier.enabled || req.path === '/health') return next();
    verifier.check(req.get('authorization'), READ_SCOPE).then(
      (who) => {
        res.locals.auth = who;
        next();
      },
      (err) => sendAuthError(res, err, send),
    );
  };
}

/** The admin credential for publishing, compared in constant time; a brake after 10 wrong ones a minute (all callers together). */
export class AdminCheck {
  private readonly brake = new FailureBrake(10);

  constructor(private readonly configured: string | undefined) {}

  check(presented: string | undefined, now = Date.now()): void {
    if (!this.configured) {
      throw new AppError(
        'NOT_CONFIGURED',
        'Publishing is off: MARKETPLACE_ADMIN_TOKEN is not set on marketplace-mcp; an operator must set it.',
      );
    }
    this.brake.check('process', 'admin credentials', now);
    if (!presented || !sameSecret(this.configured, presented)) {
      this.brake.fail('process', now);
      throw new AppError('FORBIDDEN', 'Publishing needs the admin credential in the X-Admin-Token header (MARKETPLACE_ADMIN_TOKEN).');
    }
  }
}
