import { createHash, timingSafeEqual } from 'node:crypto';
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
