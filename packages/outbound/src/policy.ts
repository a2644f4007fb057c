import dns from 'node:dns';
import net from 'node:net';
import { AppError, csv } from '@mcp-fleet/kit';
import { classifyIp, inCidr, isMetadataHostname, normalizeHost, parseCidr, parseIp, unmapIp, type AddressClass, type Cidr } from './ip';

/** A connection the policy refused. Always FORBIDDEN; `details` names the host, address and class. */
export class OutboundRefusedError extends AppError {
  constructor(
    readonly host: string,
    readonly address: string | undefined,
    readonly addressClass: AddressClass,
  ) {
    const target = address && address !== host ? `${host} (${address})` : host;
    super(
      'FORBIDDEN',
      `Refused to connect to ${target}: it is a ${addressClass} address, and outbound requests to private, loopback, ` +
        `link-local and metadata addresses are blocked. An operator can allow it by adding "${host}"` +
        `${address && address !== host ? ` or "${address}"` : ''} to OUTBOUND_ALLOWLIST.`,
      { details: { host, ...(address ? { address } : {}), addressClass } },
    );
    this.name = 'OutboundRefusedError';
  }
}

export interface ParsedAllowlist {
  hosts: Set<string>;
  /** "*.corp.internal" entries, stored as ".corp.internal". */
  suffixes: string[];
  cidrs: Cidr[];
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** Parses OUTBOUND_ALLOWLIST entries: IPs, CIDRs, host names and "*.suffix" wildcards. Throws naming every bad entry. */
export function parseAllowlist(entries: readonly string[]): ParsedAllowlist {
  const out: ParsedAllowlist = { hosts: new Set(), suffixes: [], cidrs: [] };
  const bad: string[] = [];
  for (const raw of entries) {
    const entry = raw.trim();
    if (!entry) continue;
    const cidr = entry.includes('/') || parseIp(entry) ? parseCidr(entry.replace(/^\[(.*)\](\/\d+)?$/, '$1$2')) : null;
    if (cidr) {
      out.cidrs.push(cidr);
      continue;
    }
    const host = normalizeHost(entry);
    if (host.startsWith('*.') && HOSTNAME.test(host.slice(2))) out.suffixes.push(host.slice(1));
    else if (!entry.includes('/') && HOSTNAME.test(host)) out.hosts.add(host);
    else bad.push(raw);
  }
  if (bad.length) {
    throw new Error(`not an IP address, CIDR, host name or *.suffix: ${bad.map((b) => JSON.stringify(b)).join(', ')}`);
  }
  return out;
}

/** The config shape every service with outbound traffic adds to its config.ts. */
export const outboundEnvShape = {
  OUTBOUND_ALLOWLIST: csv([])
    .superRefine((list, ctx) => {
      try {
        parseAllowlist(list);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
      }
    })
    .describe(
      'Hosts, IPs, CIDRs and *.suffix names outbound calls may reach even though they are private or loopback (e.g. "127.0.0.1,localhost,10.0.0.0/8"); empty: none.',
    ),
};

export interface AddressVerdict {
  allowed: boolean;
  addressClass: AddressClass;
}

type LookupAll = (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void;
type LookupOne = (err: NodeJS.ErrnoException | null, address: string, family: number) => void;
export type LookupFunction = (hostname: string, options: dns.LookupOptions, callback: LookupAll | LookupOne) => void;

/**
 * Which destinations outbound traffic may reach. Public addresses always; anything else only when
 * the host name, the address or a CIDR holding it is allowlisted.
 */
export interface OutboundPolicyOptions {
  /** Resolves a name to every address (default: the system resolver, dns.lookup). */
  resolve?: (host: string, family: number) => Promise<dns.LookupAddress[]>;
}

const systemResolve = (host: string, family: number) =>
  new Promise<dns.LookupAddress[]>((resolve, reject) =>
    dns.lookup(host, { all: true, family, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

/**
 * Which destinations outbound traffic may reach. Public addresses always; anything else only when
 * the host name, the address or a CIDR holding it is allowlisted.
 */
export class OutboundPolicy {
  private readonly list: ParsedAllowlist;
  private readonly resolve: (host: string, family: number) => Promise<dns.LookupAddress[]>;

  constructor(allowlist: readonly string[] = [], options: OutboundPolicyOptions = {}) {
    this.list = parseAllowlist(allowlist);
    this.resolve = options.resolve ?? systemResolve;
  }

  static fromConfig(config: { OUTBOUND_ALLOWLIST: readonly string[] }, options?: OutboundPolicyOptions): OutboundPolicy {
    return new OutboundPolicy(config.OUTBOUND_ALLOWLIST, options);
  }

  hostAllowlisted(host: string): boolean {
    const h = normalizeHost(host);
    return this.list.hosts.has(h) || this.list.suffixes.some((s) => h.endsWith(s));
  }

  addressAllowlisted(address: string): boolean {
    const ip = parseIp(address);
    if (!ip) return false;
    const candidates = [ip, unmapIp(ip)];
    return this.list.cidrs.some((c) => candidates.some((candidate) => inCidr(candidate, c)));
  }

  evaluateAddress(address: string, host?: string): AddressVerdict {
    const addressClass = classifyIp(address);
    const allowed = addressClass === 'public' || this.addressAllowlisted(address) || (host !== undefined && this.hostAllowlisted(host));
    return { allowed, addressClass };
  }

  /** Throws OutboundRefusedError unless the address may be reached (as `host`, when a name led to it). */
  assertAddress(address: string, host: string = address): void {
    const verdict = this.evaluateAddress(address, host);
    if (!verdict.allowed) throw new OutboundRefusedError(normalizeHost(host), normalizeHost(address), verdict.addressClass);
  }

  /** Checks a URL or connect host before any DNS: literal IPs by class, metadata names by name. */
  assertHost(host: string): void {
    const h = normalizeHost(host);
    if (net.isIP(h)) this.assertAddress(h, h);
    else if (isMetadataHostname(h) && !this.hostAllowlisted(h)) throw new OutboundRefusedError(h, undefined, 'cloud-metadata');
  }

  /**
   * A drop-in for dns.lookup, given to net/tls connect: it resolves, drops addresses the policy
   * refuses and fails when none is left, so the check and the connection use the same answer
   * (no DNS-rebinding window).
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const host = normalizeHost(hostname);
    const fail = (err: NodeJS.ErrnoException) => (options.all ? (callback as LookupAll)(err, []) : (callback as LookupOne)(err, '', 0));
    try {
      this.assertHost(host);
    } catch (err) {
      fail(err as NodeJS.ErrnoException);
      return;
    }
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    this.resolve(host, family).then(
      (addresses) => {
        let refused: OutboundRefusedError | undefined;
        const allowed = addresses.filter((a) => {
          const verdict = this.evaluateAddress(a.address, host);
          if (!verdict.allowed) refused ??= new OutboundRefusedError(host, a.address, verdict.addressClass);
          return verdict.allowed;
        });
        if (allowed.length === 0) {
          fail(refused ?? Object.assign(new Error(`${host} resolved to no address`), { code: 'ENOTFOUND' }));
        } else if (options.all) {
          (callback as LookupAll)(null, allowed);
        } else {
          (callback as LookupOne)(null, allowed[0].address, allowed[0].family);
        }
      },
      (err: NodeJS.ErrnoException) => fail(err),
    );
  };
}
