import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from './errors';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Constant-time equality of two strings of any length (both hashed first, so lengths leak nothing). */
export function sameSecret(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** The token of an "Authorization: Bearer <token>" header (at most 8 KiB), if any. */
export function bearerToken(header: string | undefined): string | undefined {
  return header?.match(/^Bearer\s+(\S{1,8192})\s*$/i)?.[1];
}

/**
 * A brake on credential guessing: after `maxFailures` wrong credentials from one client within the
 * window, every attempt from it (right or wrong) answers RATE_LIMITED with Retry-After until its
 * oldest failure ages out. Only failures count, so busy honest callers never trip it. The client
 * key is the caller's choice (an address, or one key for the whole process); at most `maxClients`
 * are tracked, the least recently failing forgotten first.
 */
export class FailureBrake {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs = 60_000,
    private readonly maxClients = 10_000,
  ) {}

  /** Throws RATE_LIMITED while `client` is braked; `what` ends the sentence "Too many wrong ..." */
  check(client: string, what = 'admin credentials', now = Date.now()): void {
    const recent = (this.failures.get(client) ?? []).filter((t) => now - t < this.windowMs);
    if (recent.length >= this.maxFailures) {
      const retryAfter = Math.max(1, Math.ceil((recent[0] + this.windowMs - now) / 1000));
      throw new AppError('RATE_LIMITED', `Too many wrong ${what}; try again in ${retryAfter} s.`, { retryAfter });
    }
  }

  fail(client: string, now = Date.now()): void {
    const recent = (this.failures.get(client) ?? []).filter((t) => now - t < this.windowMs);
    recent.push(now);
    this.failures.delete(client);
    this.failures.set(client, recent);
    if (this.failures.size > this.maxClients) this.failures.delete(this.failures.keys().next().value!);
  }
}
