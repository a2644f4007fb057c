import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-fleet-signature';
export const TIMESTAMP_HEADER = 'x-fleet-timestamp';
export const EVENT_HEADER = 'x-fleet-event';
export const DELIVERY_HEADER = 'x-fleet-delivery';
export const WEBHOOK_ID_HEADER = 'x-fleet-webhook-id';

/** A fresh webhook secret: 32 random bytes, hex. */
export function generateSecret(): string {
  return randomBytes(32).toString('hex');
}

/** "sha256=<hex>" of HMAC-SHA256(secret, "<timestamp>.<raw body>"). */
export function sign(secret: string, timestamp: string, body: Uint8Array): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${timestamp}.`);
  mac.update(body);
  return `sha256=${mac.digest('hex')}`;
}

export type SignatureFailure = 'missing-signature' | 'missing-timestamp' | 'stale-timestamp' | 'bad-signature';

/** Checks a signature and its timestamp (unix seconds) within the tolerance; constant-time compare. */
export function verify(
  secret: string,
  headers: { signature?: string; timestamp?: string },
  body: Uint8Array,
  toleranceSeconds: number,
  nowSeconds = Math.floor(Date.now() / 1000),
): { ok: true } | { ok: false; reason: SignatureFailure } {
  if (!headers.signature) return { ok: false, reason: 'missing-signature' };
  if (!headers.timestamp || !/^\d{1,12}$/.test(headers.timestamp)) return { ok: false, reason: 'missing-timestamp' };
  if (Math.abs(nowSeconds - Number(headers.timestamp)) > toleranceSeconds) return { ok: false, reason: 'stale-timestamp' };
  const expected = Buffer.from(sign(secret, headers.timestamp, body));
  const given = Buffer.from(headers.signature.trim());
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad-signature' };
  return { ok: true };
}
