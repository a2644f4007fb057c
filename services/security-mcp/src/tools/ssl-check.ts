import net from 'node:net';
import tls from 'node:tls';
import { AppError, defineTool } from '@mcp-fleet/kit';
import { connectTls } from '@mcp-fleet/outbound';
import { z } from 'zod';
import type { SecurityDeps } from '../deps';

const MAX_CHAIN = 10;
const HOSTNAME = /^(?=.{1,253}$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;
const DAY_MS = 86_400_000;

function describeCert(cert: tls.PeerCertificate) {
  const validTo = new Date(cert.valid_to);
  return {
    subject: { ...cert.subject },
    issuer: { ...cert.issuer },
    validFrom: new Date(cert.valid_from).toISOString(),
    validTo: validTo.toISOString(),
    daysLeft: Math.floor((validTo.getTime() - Date.now()) / DAY_MS),
    serialNumber: cert.serialNumber,
    fingerprint256: cert.fingerprint256,
    isCA: (cert as tls.PeerCertificate & { ca?: boolean }).ca ?? false,
  };
}

function sansOf(cert: tls.PeerCertificate): string[] {
  return (cert.subjectaltname ?? '')
    .split(/,\s*/)
    .filter(Boolean)
    .map((s) => s.replace(/^IP Address:/, 'IP:'));
}

export function sslCheckTool({ policy }: SecurityDeps) {
  return defineTool({
    name: 'ssl_check',
    title: 'TLS certificate check',
    description:
      `Connect to host:port over TLS and report the certificate: subject, issuer, SANs, validity dates, days left, SHA-256 ` +
      `fingerprint, the chain (at most ${MAX_CHAIN} certificates), whether the chain is trusted (authorized, authorizationError: ` +
      `self-signed and expired certificates are reported, not thrown) and whether it matches the host name. The outbound ` +
      `policy applies (private and loopback addresses refused unless allowlisted). Timeout default 10 s, at most 30 s.`,
    input: z
      .object({
        host: z.string().min(1).max(253).describe('Host name or IP address to connect to.'),
        port: z.number().int().min(1).max(65535).default(443).describe('TCP port (default 443).'),
        servername: z.string().min(1).max(253).optional().describe('SNI name and the name to match; defaults to host.'),
        timeoutMs: z.number().int().min(100).max(30_000).default(10_000).describe('Connect and handshake deadline.'),
        warnDays: z.number().int().min(0).max(365).default(14).describe('expiresSoon is true when fewer days than this are left.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    timeoutMs: 35_000,
    handler: async (args, ctx) => {
      const host = args.host.trim().replace(/^\[(.*)\]$/, '$1');
      if (!net.isIP(host) && !HOSTNAME.test(host)) {
        throw new AppError('VALIDATION_ERROR', `host "${args.host}" is not a host name or IP address (no scheme, path or port).`, {
          details: [{ path: 'host', message: 'invalid host' }],
        });
      }
      if (args.servername !== undefined && (!HOSTNAME.test(args.servername) || net.isIP(args.servername))) {
        throw new AppError('VALIDATION_ERROR', 'servername must be a DNS name (SNI cannot carry an IP address).', {
          details: [{ path: 'servername', message: 'invalid servername' }],
        });
      }
      const socket = await connectTls(policy, {
        host,
        port: args.port,
        servername: args.servername,
        timeoutMs: args.timeoutMs,
        signal: ctx.signal,
      });
      try {
        const leaf = socket.getPeerCertificate(true);
        if (!leaf || Object.keys(leaf).length === 0) {
          throw new AppError('UPSTREAM_ERROR', `${host}:${args.port} presented no certificate.`);
        }
        const chain = [];
        const seen = new Set<string>();
        for (let c: tls.DetailedPeerCertificate | undefined = leaf; c && chain.length < MAX_CHAIN; c = c.issuerCertificate) {
          if (seen.has(c.fingerprint256)) break;
          seen.add(c.fingerprint256);
          chain.push(describeCert(c));
        }
        const nameToMatch = args.servername ?? host;
        const identityError = tls.checkServerIdentity(nameToMatch, leaf);
        const info = describeCert(leaf);
        const cipher = socket.getCipher();
        return {
          host,
          port: args.port,
          servername: args.servername ?? (net.isIP(host) ? null : host),
          address: socket.remoteAddress ?? null,
          protocol: socket.getProtocol(),
          cipher: cipher?.name ?? null,
          authorized: socket.authorized,
          authorizationError: socket.authorizationError ? String(socket.authorizationError) : null,
          hostnameMatches: identityError === undefined,
          ...(identityError ? { hostnameError: identityError.message } : {}),
          ...info,
          subjectAltNames: sansOf(leaf),
          expired: info.daysLeft < 0 || Date.now() > new Date(info.validTo).getTime(),
          notYetValid: Date.now() < new Date(info.validFrom).getTime(),
          expiresSoon: info.daysLeft < args.warnDays,
          selfSigned: leaf.fingerprint256 === leaf.issuerCertificate?.fingerprint256,
          chain,
        };
      } finally {
        socket.destroy();
      }
    },
  });
}
