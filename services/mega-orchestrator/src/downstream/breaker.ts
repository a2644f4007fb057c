export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  failureThreshold: number;
  cooldownMs: number;
  now?: () => number;
}

export interface BreakerSnapshot {
  state: BreakerState;
  consecutiveFailures: number;
  openedAt?: string;
  retryAfterSeconds?: number;
  timesOpened: number;
}

/**
 * A circuit breaker per downstream: `failureThreshold` consecutive failures open it; after
 * `cooldownMs` one trial call is let through (half-open); its success closes the breaker, its
 * failure opens it again for another cooldown.
 */
export class CircuitBreaker {
  private state: BreakerState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private trialInFlight = false;
  private opened = 0;
  private readonly now: () => number;

  constructor(private readonly options: BreakerOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Whether a call may go out now. In half-open state only one trial at a time is allowed. */
  tryAcquire(): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open') {
      if (this.now() - this.openedAt < this.options.cooldownMs) return false;
      this.state = 'half-open';
      this.trialInFlight = false;
    }
    if (this.trialInFlight) return false;
    this.trialInFlight = true;
    return true;
  }

  /** Would a call be let through (without taking the half-open trial slot)? */
  isAvailable(): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'open') return this.now() - this.openedAt >= this.options.cooldownMs;
    return !this.trialInFlight;
  }

  onSuccess(): void {
    this.failures = 0;
    this.trialInFlight = false;
    this.state = 'closed';
  }

  onFailure(): void {
    this.trialInFlight = false;
    this.failures += 1;
    if (this.state === 'half-open' || (this.state === 'closed' && this.failures >= this.options.failureThreshold)) {
      this.state = 'open';
      this.openedAt = this.now();
      this.opened += 1;
    }
  }

  /** A call that neither proved nor disproved the downstream (e.g. the caller left): free the trial slot. */
  release(): void {
    this.trialInFlight = false;
  }

  reset(): void {
    this.state = 'closed';
    this.failures = 0;
    this.trialInFlight = false;
  }

  retryAfterSeconds(): number {
    if (this.state !== 'open') return 1;
    return Math.max(1, Math.ceil((this.options.cooldownMs - (this.now() - this.openedAt)) / 1000));
  }

  snapshot(): BreakerSnapshot {
    const open = this.state === 'open';
    return {
      state: open && this.now() - this.openedAt >= this.options.cooldownMs ? 'half-open' : this.state,
      consecutiveFailures: this.failures,
      ...(this.opened > 0 && this.openedAt ? { openedAt: new Date(this.openedAt).toISOString() } : {}),
      ...(open ? { retryAfterSeconds: this.retryAfterSeconds() } : {}),
      timesOpened: this.opened,
    };
  }
}
