import { classifyIp, isMetadataHostname, normalizeHost, parseCidr, parseIp, type AddressClass } from '../src/ip';

describe('classifyIp', () => {
  const cases: [string, AddressClass][] = [
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.15.255.255', 'public'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.0', 'public'],
    ['192.168.1.1', 'private'],
    ['100.63.255.255', 'public'],
    ['100.64.0.1', 'shared-cgnat'],
    ['100.127.255.255', 'shared-cgnat'],
    ['100.100.100.200', 'cloud-metadata'],
    ['169.254.169.254', 'cloud-metadata'],
    ['169.254.0.1', 'link-local'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['198.20.0.0', 'public'],
    ['192.0.2.10', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'cloud-metadata'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:8.8.8.8', 'public'],
    ['::127.0.0.1', 'reserved'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::808:808', 'public'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:0808:0808::1', 'public'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'cloud-metadata'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
  ];
  it.each(cases)('%s is %s', (ip, expected) => {
    expect(classifyIp(ip)).toBe(expected);
  });

  it('throws on something that is not an IP', () => {
    expect(() => classifyIp('example.com')).toThrow(/not an IP/);
  });
});

describe('parsing', () => {
  it('parses IPv6 with compression and an IPv4 tail to 16 bytes', () => {
    expect(Array.from(parseIp('::ffff:1.2.3.4')!.bytes)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4]);
    expect(Array.from(parseIp('1:2::8')!.bytes)).toEqual([0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8]);
    expect(parseIp('1.2.3')).toBeNull();
    expect(parseIp('localhost')).toBeNull();
  });

  it('parses CIDRs and refuses bad ones', () => {
    expect(parseCidr('10.0.0.0/8')).toMatchObject({ version: 4, prefix: 8 });
    expect(parseCidr('fc00::/7')).toMatchObject({ version: 6, prefix: 7 });
    expect(parseCidr('127.0.0.1')).toMatchObject({ prefix: 32 });
    expect(parseCidr('10.0.0.0/33')).toBeNull();
    expect(parseCidr('10.0.0.0/x')).toBeNull();
    expect(parseCidr('10.0.0.0/8/9')).toBeNull();
  });

  it('normalizes host names and recognises metadata names', () => {
    expect(normalizeHost(' Example.COM. ')).toBe('example.com');
    expect(normalizeHost('[::1]')).toBe('::1');
    expect(isMetadataHostname('METADATA.google.internal.')).toBe(true);
    expect(isMetadataHostname('example.com')).toBe(false);
  });
});
