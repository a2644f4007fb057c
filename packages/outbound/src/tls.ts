import net from 'node:net';
import tls from 'node:tls';
import { AppError } from '@mcp-fleet/kit';
import { toOutboundError } from './client';
import { normalizeHost } from './ip';
import type { OutboundPolicy } from './policy';

export interface TlsConnectOptions {
  host: string;
  port: number;
  /** SNI name; defaults to the host when it is a name (never sent for an IP). */
  servername?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Opens a TLS connection under the outbound policy (literal IPs checked, names resolved through the
 * policy's lookup). Certificates are not verified here, so a caller can inspect an untrusted chain:
 * read `authorized` and `authorizationError` on the socket. The caller must destroy the socket.
 */
export function connectTls(policy: OutboundPolicy, options: TlsConnectOptions): Promise<tls.TLSSocket> {
  const host = normalizeHost(options.host);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const where = new URL(`https://${net.isIPv6(host) ? `[${host}]` : host}:${options.port}`);
  return new Promise((resolve, reject) => {
    try {
      policy.assertHost(host);
    } catch (err) {
      reject(err);
      return;
    }
    const servername = options.servername ?? (net.isIP(host) ? undefined : host);
    const socket = tls.connect({
      host,
      port: options.port,
      ...(servername ? { servername } : {}),
      lookup: policy.lookup as unknown as net.LookupFunction,
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    let settled = false;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (err) {
        socket.destroy();
        reject(err instanceof AppError ? err : toOutboundError(err, where, timeoutMs));
      } else {
        resolve(socket);
      }
    };
    const timer = setTimeout(
      () =>
        finish(new AppError('TIMEOUT', `No TLS handshake with ${where.host} within ${timeoutMs} ms; raise timeoutMs or check the port.`)),
      timeoutMs,
    );
    const onAbort = () => finish(options.signal?.reason ?? new AppError('TIMEOUT', 'The TLS check was cancelled.'));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('secureConnect', () => finish());
    socket.once('error', (err) => finish(err));
  });
}
