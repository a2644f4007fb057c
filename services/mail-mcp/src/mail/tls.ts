import { AppError } from '@mcp-fleet/kit';

/** Node's codes for a server certificate that does not verify. */
const CERT_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
// nodemailer replaces the socket error's code with ESOCKET and keeps its message.
const CERT_MESSAGE =
  /self[- ]signed certificate|unable to verify the first certificate|unable to get (local )?issuer certificate|certificate has expired|certificate is not yet valid|does not match certificate's altnames/i;

/**
 * The mail server's TLS certificate was refused (IMAP or SMTP, imaps/smtps or STARTTLS): an error
 * that says so and what to do, instead of "not reachable" or a bare code. Undefined otherwise.
 */
export function certificateError(err: unknown, protocol: 'IMAP' | 'SMTP', where: string): AppError | undefined {
  const e = err as { code?: string; message?: string; cause?: { code?: string } } | undefined;
  const code = [e?.code, e?.cause?.code].find((c) => c !== undefined && CERT_CODES.has(c));
  if (!code && !CERT_MESSAGE.test(e?.message ?? '')) return undefined;
  return new AppError(
    'UPSTREAM_ERROR',
    `The ${protocol} server at ${where} presented a TLS certificate this service does not trust (${code ?? (e?.message ?? '').slice(0, 120)}). ` +
      'Give Node its CA (NODE_EXTRA_CA_CERTS=/path/ca.pem) or fix the certificate; for a test server only, set MAIL_TLS_INSECURE=1.',
    { cause: err },
  );
}
