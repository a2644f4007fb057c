import request from 'supertest';
import type { ServiceApp } from '@mcp-fleet/kit';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';
import { reverseName, startDnsServer } from './support/dns-server';

const tmp = tempDir();
let dnsServer: Awaited<ReturnType<typeof startDnsServer>>;
let service: ServiceApp;

beforeAll(async () => {
  dnsServer = await startDnsServer({
    'fleet.test': {
      A: ['192.0.2.10', '192.0.2.11'],
      AAAA: ['2001:db8::10'],
      MX: [
        { priority: 20, exchange: 'mx2.fleet.test' },
        { priority: 10, exchange: 'mx1.fleet.test' },
      ],
      TXT: [['v=spf1 -all'], ['part one ', 'part two']],
      NS: ['ns1.fleet.test', 'ns2.fleet.test'],
    },
    'www.fleet.test': { CNAME: 'fleet.test' },
    '_http._tcp.fleet.test': { SRV: [{ priority: 10, weight: 5, port: 8080, name: 'web.fleet.test' }] },
    [reverseName('192.0.2.10')]: { PTR: ['host10.fleet.test'] },
    'empty.fleet.test': {},
  });
  const config = configSchema.parse({ ...testConfig, DATA_DIR: tmp.dir, DNS_SERVERS: dnsServer.address, DNS_TIMEOUT_MS: '2000' });
  service = await createApp({ config, logger: testLogger(), defaultMetrics: false });
});

afterAll(async () => {
  await service.close();
  await dnsServer.close();
  tmp.cleanup();
});

const lookup = (args: Record<string, unknown>) => request(service.app).post('/tools/dns_lookup').send(args);

describe('dns_lookup', () => {
  it('resolves localhost through the system resolver (hosts file)', async () => {
    const res = await lookup({ name: 'localhost' }).expect(200);
    expect(res.body.result).toMatchObject({ name: 'localhost', type: 'A', source: 'system', rcode: 'NOERROR' });
    expect(res.body.result.records).toContainEqual({ address: '127.0.0.1' });
    const v6 = await lookup({ name: 'localhost', type: 'AAAA' }).expect(200);
    for (const r of v6.body.result.records) expect(r.address).toContain(':');
  });

  it('queries the configured DNS server for every record type', async () => {
    const a = await lookup({ name: 'fleet.test', type: 'A', resolver: 'dns' }).expect(200);
    expect(a.body.result).toMatchObject({
      source: 'dns',
      records: [
        { address: '192.0.2.10', ttl: 300 },
        { address: '192.0.2.11', ttl: 300 },
      ],
    });
    const aaaa = await lookup({ name: 'fleet.test', type: 'AAAA', resolver: 'dns' }).expect(200);
    expect(aaaa.body.result.records).toEqual([{ address: '2001:db8::10', ttl: 300 }]);
    const mx = await lookup({ name: 'fleet.test', type: 'MX' }).expect(200);
    expect(mx.body.result.records).toEqual([
      { priority: 10, exchange: 'mx1.fleet.test' },
      { priority: 20, exchange: 'mx2.fleet.test' },
    ]);
    const txt = await lookup({ name: 'fleet.test', type: 'TXT' }).expect(200);
    expect(txt.body.result.records).toEqual(
      expect.arrayContaining([
        { value: 'v=spf1 -all', chunks: ['v=spf1 -all'] },
        { value: 'part one part two', chunks: ['part one ', 'part two'] },
      ]),
    );
    const ns = await lookup({ name: 'fleet.test', type: 'NS' }).expect(200);
    expect(ns.body.result.records.map((r: { value: string }) => r.value).sort()).toEqual(['ns1.fleet.test', 'ns2.fleet.test']);
    const cname = await lookup({ name: 'www.fleet.test', type: 'CNAME' }).expect(200);
    expect(cname.body.result.records).toEqual([{ value: 'fleet.test' }]);
    const srv = await lookup({ name: '_http._tcp.fleet.test', type: 'SRV' }).expect(200);
    expect(srv.body.result.records).toEqual([{ priority: 10, weight: 5, port: 8080, name: 'web.fleet.test' }]);
    const ptr = await lookup({ name: '192.0.2.10', type: 'PTR' }).expect(200);
    expect(ptr.body.result.records).toEqual([{ value: 'host10.fleet.test' }]);
  });

  it('answers a missing name or type as a result, not an error', async () => {
    const nx = await lookup({ name: 'nope.fleet.test', type: 'MX' }).expect(200);
    expect(nx.body.result).toMatchObject({ rcode: 'NXDOMAIN', records: [] });
    const nodata = await lookup({ name: 'empty.fleet.test', type: 'TXT' }).expect(200);
    expect(nodata.body.result).toMatchObject({ rcode: 'NODATA', records: [] });
  });

  it('refuses bad input with VALIDATION_ERROR', async () => {
    for (const args of [
      { name: 'fleet.test', type: 'PTR' },
      { name: 'bad name!', type: 'A' },
      { name: '10.0.0.1', type: 'A' },
      { name: 'fleet.test', type: 'MX', resolver: 'system' },
      { name: 'fleet.test', type: 'SOA' },
      { name: '' },
      { name: 'fleet.test', extra: true },
      { name: 'a'.repeat(300) },
    ]) {
      const res = await lookup(args).expect(400);
      expect(res.body).toMatchObject({ success: false, code: 'VALIDATION_ERROR' });
    }
  });

  it('reports an unreachable DNS server without a 500', async () => {
    const silent = await startDnsServer({});
    await silent.close();
    const config = configSchema.parse({ ...testConfig, DATA_DIR: tmp.dir, DNS_SERVERS: silent.address, DNS_TIMEOUT_MS: '200' });
    const other = await createApp({ config, logger: testLogger(), defaultMetrics: false });
    try {
      const res = await request(other.app).post('/tools/dns_lookup').send({ name: 'fleet.test', type: 'TXT' });
      expect([503, 504]).toContain(res.status);
      expect(['TIMEOUT', 'UPSTREAM_UNAVAILABLE']).toContain(res.body.code);
    } finally {
      await other.close();
    }
  });
});
