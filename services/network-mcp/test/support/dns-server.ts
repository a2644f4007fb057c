import dgram from 'node:dgram';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** Records a test zone can hold, by owner name (lower case, no trailing dot). */
export interface ZoneRecords {
  A?: string[];
  AAAA?: string[];
  CNAME?: string;
  NS?: string[];
  PTR?: string[];
  MX?: { priority: number; exchange: string }[];
  TXT?: string[][];
  SRV?: { priority: number; weight: number; port: number; name: string }[];
}

const TYPES: Record<number, keyof ZoneRecords> = { 1: 'A', 28: 'AAAA', 5: 'CNAME', 2: 'NS', 12: 'PTR', 15: 'MX', 16: 'TXT', 33: 'SRV' };

function encodeName(name: string): Buffer {
  const parts = name
    .split('.')
    .filter(Boolean)
    .map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label)]));
  return Buffer.concat([...parts, Buffer.from([0])]);
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...h, ...new Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return Buffer.concat(groups.map((g) => u16(parseInt(g, 16))));
}

function rdata(type: keyof ZoneRecords, value: unknown): Buffer {
  switch (type) {
    case 'A':
      return Buffer.from((value as string).split('.').map(Number));
    case 'AAAA':
      return ipv6Bytes(value as string);
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return encodeName(value as string);
    case 'MX': {
      const mx = value as { priority: number; exchange: string };
      return Buffer.concat([u16(mx.priority), encodeName(mx.exchange)]);
    }
    case 'TXT':
      return Buffer.concat((value as string[]).map((s) => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)])));
    case 'SRV': {
      const srv = value as { priority: number; weight: number; port: number; name: string };
      return Buffer.concat([u16(srv.priority), u16(srv.weight), u16(srv.port), encodeName(srv.name)]);
    }
  }
}

/** A real (tiny) authoritative DNS server over UDP on 127.0.0.1, for dns_lookup tests without the internet. */
export async function startDnsServer(zone: Record<string, ZoneRecords>): Promise<{ address: string; close(): Promise<void> }> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg, rinfo) => {
    let offset = 12;
    const labels: string[] = [];
    while (msg[offset] !== 0) {
      labels.push(msg.subarray(offset + 1, offset + 1 + msg[offset]).toString());
      offset += msg[offset] + 1;
    }
    offset += 1;
    const qtype = msg.readUInt16BE(offset);
    const question = msg.subarray(12, offset + 4);
    const name = labels.join('.').toLowerCase();
    const records = zone[name];
    const type = TYPES[qtype];
    const raw = records && type ? records[type] : undefined;
    const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    const answers = values.map((v) => {
      const data = rdata(type!, v);
      const ttl = Buffer.alloc(4);
      ttl.writeUInt32BE(300);
      return Buffer.concat([u16(0xc00c), u16(qtype), u16(1), ttl, u16(data.length), data]);
    });
    const rcode = records ? 0 : 3;
    const header = Buffer.concat([msg.subarray(0, 2), u16(0x8580 | rcode), u16(1), u16(answers.length), u16(0), u16(0)]);
    socket.send(Buffer.concat([header, question, ...answers]), rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = (socket.address() as AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** "8.8.4.4" -> "4.4.8.8.in-addr.arpa" (IPv4 only; enough for the tests). */
export function reverseName(ip: string): string {
  if (!net.isIPv4(ip)) throw new Error('IPv4 only');
  return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
}
