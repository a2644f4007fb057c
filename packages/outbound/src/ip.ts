import net from 'node:net';

/** Why an address is not an ordinary public one ("public" when it is). */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cloud-metadata'
  | 'unspecified'
  | 'shared-cgnat'
  | 'multicast'
  | 'benchmarking'
  | 'documentation'
  | 'reserved';

export interface ParsedIp {
  version: 4 | 6;
  /** 4 bytes for IPv4, 16 for IPv6. */
  bytes: Uint8Array;
}

export interface Cidr extends ParsedIp {
  prefix: number;
}

/** "[::1]" -> "::1", "fe80::1%eth0" -> "fe80::1", "Example.COM." -> "example.com". */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  const zone = h.indexOf('%');
  if (zone !== -1 && net.isIPv6(h.slice(0, zone))) h = h.slice(0, zone);
  if (h.endsWith('.') && !net.isIP(h)) h = h.slice(0, -1);
  return h;
}

function parseV4(s: string): Uint8Array {
  return Uint8Array.from(s.split('.').map(Number));
}

function parseV6(s: string): Uint8Array {
  let text = s;
  const tail: number[] = [];
  if (text.includes('.')) {
    // Embedded dotted IPv4 tail, as in ::ffff:127.0.0.1
    const idx = text.lastIndexOf(':');
    const v4 = parseV4(text.slice(idx + 1));
    tail.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
    text = text.slice(0, idx + 1);
    if (!text.endsWith('::')) text = text.slice(0, -1);
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const toGroups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const headGroups = toGroups(head);
  const restGroups = rest === undefined ? [] : toGroups(rest);
  const zeros = rest === undefined ? 0 : 8 - headGroups.length - restGroups.length - tail.length;
  const groups = [...headGroups, ...new Array<number>(zeros).fill(0), ...restGroups, ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[i * 2] = (g >> 8) & 0xff;
    bytes[i * 2 + 1] = g & 0xff;
  });
  return bytes;
}

/** Parses a literal IPv4 or IPv6 address (brackets and zone ids allowed); null when it is not one. */
export function parseIp(input: string): ParsedIp | null {
  const s = normalizeHost(input);
  const version = net.isIP(s);
  if (version === 4) return { version: 4, bytes: parseV4(s) };
  if (version === 6) return { version: 6, bytes: parseV6(s) };
  return null;
}

/** Parses "10.0.0.0/8", "fc00::/7" or a bare address (a /32 or /128). */
export function parseCidr(input: string): Cidr | null {
  const [addr, bits, extra] = input.trim().split('/');
  if (extra !== undefined) return null;
  const ip = parseIp(addr);
  if (!ip) return null;
  const max = ip.version === 4 ? 32 : 128;
  if (bits === undefined) return { ...ip, prefix: max };
  if (!/^\d{1,3}$/.test(bits)) return null;
  const prefix = Number(bits);
  if (prefix > max) return null;
  return { ...ip, prefix };
}

function inCidr(ip: ParsedIp, cidr: Cidr): boolean {
  if (ip.version !== cidr.version) return false;
  let remaining = cidr.prefix;
  for (let i = 0; remaining > 0; i++, remaining -= 8) {
    const mask = remaining >= 8 ? 0xff : (0xff << (8 - remaining)) & 0xff;
    if ((ip.bytes[i] & mask) !== (cidr.bytes[i] & mask)) return false;
  }
  return true;
}

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address it carries, for every check. */
export function unmapIp(ip: ParsedIp): ParsedIp {
  if (ip.version === 6 && ip.bytes.slice(0, 10).every((b) => b === 0) && ip.bytes[10] === 0xff && ip.bytes[11] === 0xff) {
    return { version: 4, bytes: ip.bytes.slice(12) };
  }
  return ip;
}

function table(rows: [string, AddressClass][]): { cidr: Cidr; cls: AddressClass }[] {
  return rows.map(([text, cls]) => ({ cidr: parseCidr(text)!, cls }));
}

// Most specific first: the first matching row wins.
const V4_TABLE = table([
  ['169.254.169.254/32', 'cloud-metadata'], // AWS, GCP, Azure, OpenStack, Oracle
  ['100.100.100.200/32', 'cloud-metadata'], // Alibaba Cloud
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared-cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'], // includes 255.255.255.255
]);

const V6_TABLE = table([
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['fd00:ec2::254/128', 'cloud-metadata'], // AWS IMDS over IPv6
  ['::/96', 'reserved'], // deprecated IPv4-compatible addresses
  ['64:ff9b:1::/48', 'private'], // local-use NAT64
  ['100::/64', 'reserved'], // discard prefix
  ['2001::/32', 'reserved'], // Teredo (embedded client address is obfuscated)
  ['2001:db8::/32', 'documentation'],
  ['fc00::/7', 'private'], // unique local
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'], // deprecated site-local
  ['ff00::/8', 'multicast'],
]);

const NAT64 = parseCidr('64:ff9b::/96')!;
const SIX_TO_FOUR = parseCidr('2002::/16')!;

/** The class of a literal address; IPv6 forms that embed IPv4 (mapped, NAT64, 6to4) are judged by the IPv4 inside. */
export function classifyIp(input: string | ParsedIp): AddressClass {
  const parsed = typeof input === 'string' ? parseIp(input) : input;
  if (!parsed) throw new Error(`not an IP address: ${String(input)}`);
  const ip = unmapIp(parsed);
  if (ip.version === 4) return V4_TABLE.find((row) => inCidr(ip, row.cidr))?.cls ?? 'public';
  if (inCidr(ip, NAT64)) return classifyIp({ version: 4, bytes: ip.bytes.slice(12) });
  if (inCidr(ip, SIX_TO_FOUR)) return classifyIp({ version: 4, bytes: ip.bytes.slice(2, 6) });
  return V6_TABLE.find((row) => inCidr(ip, row.cidr))?.cls ?? 'public';
}

/** Host names that reach instance metadata services without an IP in sight. */
export const METADATA_HOSTNAMES: readonly string[] = [
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.com',
  'metadata.tencentyun.com',
];

export function isMetadataHostname(host: string): boolean {
  return METADATA_HOSTNAMES.includes(normalizeHost(host));
}

export { inCidr };
