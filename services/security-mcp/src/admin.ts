import { AppError, FailureBrake, sameSecret } from '@mcp-fleet/kit';

/** Constant-time comparison of the presented credential with the configured one. */
export function requireAdmin(configured: string | undefined, presented: string | undefined, action: string): void {
  if (!configured) {
    throw new AppError(
      'NOT_CONFIGURED',
      `${action} needs SECURITY_ADMIN_TOKEN, which is not set on security-mcp; an operator must configure it.`,
    );
  }
  if (!presented || !sameSecret(configured, presented)) {
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
  private readonly brake: FailureBrake;

  constructor(
    private readonly configured: string | undefined,
    options: AdminGuardOptions = { maxFailures: 10, windowMs: 60_000 },
  ) {
    this.brake = new FailureBrake(options.maxFailures, options.windowMs);
  }

  check(presented: string | undefined, action: string, now = Date.now()): void {
    this.brake.check(PROCESS, `admin credentials for ${action}`, now);
    try {
      requireAdmin(this.configured, presented, action);
    } catch (err) {
      if (err instanceof AppError && err.code === 'UNAUTHORIZED') this.brake.fail(PROCESS, now);
      throw err;
    }
  }
}

/** The brake's one client: every caller together (see AdminGuard). */
const PROCESS = 'process';
