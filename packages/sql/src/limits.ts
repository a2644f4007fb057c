/** Caps applied to every statement on a connection; per-call options may lower them, never raise them past the ceilings. */
export interface ConnectionLimits {
  /** Rows returned when the caller names no cap. */
  maxRows: number;
  /** Largest cap a caller may ask for. */
  maxRowsCeiling: number;
  /** Approximate serialized size of the rows. */
  maxBytes: number;
  statementTimeoutMs: number;
  statementTimeoutCeilingMs: number;
}

export const DEFAULT_LIMITS: ConnectionLimits = {
  maxRows: 1000,
  maxRowsCeiling: 10_000,
  maxBytes: 8 * 1024 * 1024,
  statementTimeoutMs: 10_000,
  statementTimeoutCeilingMs: 300_000,
};

export function pickLimits(o: Partial<ConnectionLimits>): Partial<ConnectionLimits> {
  const out: Partial<ConnectionLimits> = {};
  for (const k of Object.keys(DEFAULT_LIMITS) as (keyof ConnectionLimits)[]) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
