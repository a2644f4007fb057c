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

export interface AdminGuardOptions {
  /** Wrong credentials allowed per window before every attempt is refused until the window passes. */
  maxFailures: number;
  windowMs: number;
}

/**
 * requireAdmin with a brake on guessing: after maxFailures wrong credentials within windowMs, every
 * attempt (right or wrong) answers RATE_LIMITED with Retry-After until the oldest failure ages out.
 * Per process, not per caller: the gateway hides callers' addresses, and a lockout is the safe side.
 */
export class AdminGuard {
  private failures: number[] = [];

  constructor(
    private readonly configured: string | undefined,
    private readonly options: AdminGuardOptions = { maxFailures: 10, windowMs: 60_000 },
  ) {}

  check(presented: string | undefined, action: string, now = Date.now()): void {
    this.failures = this.failures.filter((t) => now - t < this.options.windowMs);
    if (this.failures.length >= this.options.maxFailures) {
      const retryAfter = Math.max(1, Math.ceil((this.failures[0] + this.options.windowMs - now) / 1000));
      throw new AppError('RATE_LIMITED', `Too many wrong admin credentials for ${action}; try again in ${retryAfter} s.`, { retryAfter });
    }
    try {
      requireAdmin(this.configured, presented, action);
    } catch (err) {
      if (err instanceof AppError && err.code === 'UNAUTHORIZED') this.failures.push(now);
      throw err;
    }
  }
}
