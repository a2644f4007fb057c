import dns from 'node:dns';
import net from 'node:net';
import { AppError, defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { NetworkDeps } from '../deps';

const RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'NS', 'SRV', 'PTR'] as const;
type RecordType = (typeof RECORD_TYPES)[number];
const MAX_RECORDS = 100;
const HOSTNAME = /^(?=.{1,253}\.?$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)(\.[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

async function queryDns(resolver: dns.promises.Resolver, name: string, type: RecordType): Promise<unknown[]> {
  switch (type) {
    case 'A':
      return (await resolver.resolve4(name, { ttl: true })).map((r) => ({ address: r.address, ttl: r.ttl }));
    case 'AAAA':
      return (await resolver.resolve6(name, { ttl: true })).map((r) => ({ address: r.address, ttl: r.ttl }));
    case 'CNAME':
      return (await resolver.resolveCname(name)).map((value) => ({ value }));
    case 'NS':
      return (await resolver.resolveNs(name)).map((value) => ({ value }));
    case 'MX':
      return (await resolver.resolveMx(name)).sort((a, b) => a.priority - b.priority);
    case 'TXT':
      return (await resolver.resolveTxt(name)).map((chunks) => ({ value: chunks.join(''), chunks }));
    case 'SRV':
      return (await resolver.resolveSrv(name)).sort((a, b) => a.priority - b.priority || b.weight - a.weight);
    case 'PTR':
      return (await resolver.reverse(name)).map((value) => ({ value }));
  }
}

function systemLookup(name: string, family: 4 | 6): Promise<unknown[]> {
  return new Promise((resolve, reject) =>
    dns.lookup(name, { all: true, family, verbatim: true }, (err, addresses) =>
      err ? reject(err) : resolve(addresses.map((a) => ({ address: a.address }))),
    ),
  );
}

export function dnsLookupTool({ config }: NetworkDeps) {
  return defineTool({
    name: 'dns_lookup',
    title: 'DNS lookup',
    description:
      `Resolve DNS records: A, AAAA, CNAME, MX, TXT, NS, SRV, or PTR (give an IP address as name). A and AAAA use the system ` +
      `resolver by default (hosts file included, the same answer outbound connections get); resolver: "dns" queries DNS servers ` +
      `directly and adds TTLs. A name with no records is a result (rcode NXDOMAIN or NODATA), not an error. ` +
      `At most ${MAX_RECORDS} records (truncated: true beyond); each query times out after ${config.DNS_TIMEOUT_MS} ms.`,
    input: z
      .object({
        name: z.string().min(1).max(253).describe('Host name to resolve, or an IPv4/IPv6 address for PTR.'),
        type: z.enum(RECORD_TYPES).default('A').describe('Record type.'),
        resolver: z
          .enum(['system', 'dns'])
          .optional()
          .describe(
            'For A/AAAA: "system" (default; getaddrinfo, reads /etc/hosts) or "dns" (DNS servers, with TTLs). Other types always use "dns".',
          ),
      })
      .strict(),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
    timeoutMs: config.DNS_TIMEOUT_MS * 3 + 1000,
    handler: async (args, ctx) => {
      const name = args.name.trim();
      if (args.type === 'PTR') {
        if (!net.isIP(name)) {
          throw new AppError('VALIDATION_ERROR', 'PTR lookups take an IP address as name, such as 8.8.8.8 or 2001:4860:4860::8888.', {
            details: [{ path: 'name', message: 'expected an IP address' }],
          });
        }
      } else if (!HOSTNAME.test(name) || net.isIP(name)) {
        throw new AppError(
          'VALIDATION_ERROR',
          `"${name}" is not a host name; use labels of letters, digits and hyphens (for an IP, ask for PTR).`,
          {
            details: [{ path: 'name', message: 'invalid host name' }],
          },
        );
      }
      if (args.resolver && args.type !== 'A' && args.type !== 'AAAA') {
        throw new AppError('VALIDATION_ERROR', 'resolver applies to A and AAAA only; drop it for other types.', {
          details: [{ path: 'resolver', message: 'only for A/AAAA' }],
        });
      }
      const source = (args.type === 'A' || args.type === 'AAAA') && args.resolver !== 'dns' ? 'system' : 'dns';
      const resolver = new dns.promises.Resolver({ timeout: config.DNS_TIMEOUT_MS, tries: 2 });
      if (config.DNS_SERVERS.length) resolver.setServers(config.DNS_SERVERS);
      const onAbort = () => resolver.cancel();
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      const started = performance.now();
      try {
        const records =
          source === 'system' ? await systemLookup(name, args.type === 'A' ? 4 : 6) : await queryDns(resolver, name, args.type);
        return {
          name,
          type: args.type,
          source,
          rcode: records.length ? 'NOERROR' : 'NODATA',
          records: records.slice(0, MAX_RECORDS),
          ...(records.length > MAX_RECORDS ? { truncated: true } : {}),
          durationMs: Math.round(performance.now() - started),
        };
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const durationMs = Math.round(performance.now() - started);
        if (code === 'ENOTFOUND' || code === 'ENODATA' || code === 'EAI_NONAME') {
          return { name, type: args.type, source, rcode: code === 'ENODATA' ? 'NODATA' : 'NXDOMAIN', records: [], durationMs };
        }
        if (code === 'ETIMEOUT' || code === 'ECANCELLED') {
          throw new AppError('TIMEOUT', `No DNS answer for ${name} within ${config.DNS_TIMEOUT_MS} ms; check DNS_SERVERS or try again.`, {
            cause: err,
          });
        }
        if (code === 'ECONNREFUSED' || code === 'ESERVFAIL' || code === 'EREFUSED' || code === 'EAI_AGAIN') {
          throw new AppError('UPSTREAM_UNAVAILABLE', `The DNS server could not answer for ${name} (${code}); check DNS_SERVERS.`, {
            cause: err,
          });
        }
        throw new AppError('UPSTREAM_ERROR', `DNS lookup of ${name} failed${code ? ` (${code})` : ''}.`, { cause: err });
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
      }
    },
  });
}
