import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { AppError } from '@mcp-fleet/kit';

/** The token of an "Authorization: Bearer <token>" header, if any. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = header?.match(/^Bearer\s+(\S{1,1024})\s*$/i);
  return m?.[1];
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Constant-time comparison of the presented credential with the configured one. */
export function requireAdmin(configured: string | undefined, presented: string | undefined, action: string): void {
  if (!configured) {
    throw new AppError(
      'NOT_CONFIGURED',
      `${action} needs SECURITY_ADMIN_TOKEN, which is not set on security-mcp; an operator must configure it.`,
    );
  }
  if (!presented || !timingSafeEqual(digest(configured), digest(presented))) {
    throw new AppError(
      'UNAUTHORIZED',
      `${action} needs the admin credential: send "Authorization: Bearer <SECURITY_ADMIN_TOKEN>" or the admin_token argument.`,
    );
  }
}

/**
 * Tool handlers see arguments, not headers, so a bearer header on a direct jwt_token call
 * (POST /tools/jwt_token or /tools/call) is handed to the tool as its admin_token argument.
 * Registered through the kit's `extend` hook, ahead of the kit's own JSON parser and routes.
 */
export function registerAdminHeader(app: Express, bodyLimit: string, toolName: string): void {
  const parse = express.json({ limit: bodyLimit, strict: true, type: ['application/json', 'application/*+json'] });
  const inject = (req: Request, _res: Response, next: NextFunction) => {
    const token = bearerToken(req.get('authorization'));
    const body = req.body as Record<string, unknown> | undefined;
    if (token && body && typeof body === 'object' && !Array.isArray(body)) {
      const args =
        req.path === '/tools/call' ? (body.name === toolName ? (body.arguments ??= {}) : undefined) : (body as Record<string, unknown>);
      if (args && typeof args === 'object' && !Array.isArray(args) && (args as Record<string, unknown>).admin_token === undefined) {
        (args as Record<string, unknown>).admin_token = token;
      }
    }
    next();
  };
  app.post([`/tools/${toolName}`, '/tools/call'], parse, inject);
}
