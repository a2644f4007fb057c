import type { IncomingMessage } from 'node:http';
import { baseEnvSchema, ConfigError, hostNameOf, hostOriginRule, isLoopbackInterface, isLoopbackName, loadConfig } from '../src';

/** A request as the rule sees it: only its headers. */
const req = (headers: Record<string, string | undefined>) => ({ headers }) as unknown as IncomingMessage;

/** The refusal's code and message, or 'ok'. */
function verdict(rule: ReturnType<typeof hostOriginRule>, host: string | undefined, origin?: string): string {
  const err = rule(req({ host, origin }));
  return err ? `${err.code}: ${err.message}` : 'ok';
}

describe('hostNameOf', () => {
  it('reads the name of name, name:port, [v6] and [v6]:port, lower-cased', () => {
    expect(hostNameOf('LocalHost:7003')).toBe('localhost');
    expect(hostNameOf('127.0.0.1')).toBe('127.0.0.1');
    expect(hostNameOf('[::1]:80')).toBe('[::1]');
    expect(hostNameOf('[::1]')).toBe('[::1]');
  });

  it('gives undefined for anything else: empty name, bad port, stray brackets, extra colons', () => {
    for (const bad of [':80', 'localhost:', 'localhost:7003:1', 'localhost:80x', 'localhost:123456', '[::1', '[::1]x', '[::1]:', 'a:b'])
      expect([bad, hostNameOf(bad)]).toEqual([bad, undefined]);
  });
});

describe('isLoopbackName and isLoopbackInterface', () => {
  it('knows the loopback names and .localhost subdomains, nothing that merely contains them', () => {
    for (const name of ['localhost', '127.0.0.1', '[::1]', 'app.localhost', 'a-b.c.localhost'])
      expect([name, isLoopbackName(name)]).toEqual([name, true]);
    for (const name of [
      'localhost.',
      'localhost.evil.example',
      '127.0.0.1.nip.io',
      'evil.localhost.example',
      '.localhost',
      'evil#.localhost',
      'evil_.localhost',
      '-a.localhost',
      '127.1',
      '2130706433',
      '[::ffff:127.0.0.1]',
      '0.0.0.0',
    ])
      expect([name, isLoopbackName(name)]).toEqual([name, false]);
  });

  it('treats 127.x, ::1 and localhost as loopback listeners, the rest as exposed', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost', 'LOCALHOST'])
      expect([host, isLoopbackInterface(host)]).toEqual([host, true]);
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'terminal-mcp', '127.0.0.1.nip.io'])
      expect([host, isLoopbackInterface(host)]).toEqual([host, false]);
  });
});

describe('hostOriginRule on a loopback listener', () => {
  const rule = hostOriginRule({
    listenHost: '127.0.0.1',
    allowedHosts: ['fleet.example.com'],
    allowedOrigins: ['https://console.example/'],
  });

  it('answers the loopback names at any port, in any case, a listed name, and a request without Host', () => {
    for (const host of [
      'localhost',
      'localhost:7003',
      'LOCALHOST:7003',
      '127.0.0.1:1',
      '[::1]:7003',
      'app.localhost:8080',
      'Fleet.Example.com:443',
      undefined,
      '',
    ])
      expect([host, verdict(rule, host)]).toEqual([host, 'ok']);
  });

  it('refuses every other Host with FORBIDDEN naming ALLOWED_HOSTS, also when asked twice', () => {
    for (const host of [
      'evil.example',
      'evil.example:7003',
      '127.0.0.1.nip.io:7003',
      'localhost.evil.example',
      'localhost.:7003',
      'localhost:7003:80',
      'localhost:7003@evil.example',
      'evil.example#.localhost',
      '127.1:7003',
      '0.0.0.0:7003',
      'fleet.example.com.evil.example',
    ])
      for (let i = 0; i < 2; i++) {
        const v = verdict(rule, host);
        expect([host, v.startsWith('FORBIDDEN: ')]).toEqual([host, true]);
        expect(v).toContain('ALLOWED_HOSTS');
      }
  });

  it('lets in requests without Origin, from local pages, from listed origins and from the page of the accepted Host', () => {
    for (const origin of [
      undefined,
      'http://localhost:5173',
      'http://127.0.0.1:8080',
      'https://[::1]:3000',
      'http://app.localhost',
      'https://console.example',
      'HTTPS://CONSOLE.EXAMPLE',
    ])
      expect([origin, verdict(rule, 'localhost:7003', origin)]).toEqual([origin, 'ok']);
    expect(verdict(rule, 'fleet.example.com', 'https://fleet.example.com')).toBe('ok');
  });

  it('refuses every other Origin with FORBIDDEN naming ALLOWED_ORIGINS', () => {
    for (const origin of [
      'http://evil.example',
      'null',
      'http://localhost.evil.example',
      'http://localhost.:7003',
      'http://127.0.0.1.nip.io',
      'http://localhost@evil.example',
      'http://evil.example/#@localhost',
      'file://',
      'chrome-extension://abcdef',
      'ftp://localhost',
      'http://localhost:7003/path',
      'https://console.example.evil.test',
      'http://fleet.example.com:7003',
    ]) {
      const v = verdict(rule, 'localhost:7003', origin);
      expect([origin, v.startsWith('FORBIDDEN: ')]).toEqual([origin, true]);
      expect(v).toContain('ALLOWED_ORIGINS');
    }
  });
});

describe('hostOriginRule on an exposed listener (compose: HOST=0.0.0.0)', () => {
  const rule = hostOriginRule({ listenHost: '0.0.0.0', allowedHosts: ['terminal-mcp'] });

  it('answers the names in ALLOWED_HOSTS and the loopback names, and wants a Host', () => {
    for (const host of ['terminal-mcp:7003', 'TERMINAL-MCP', 'localhost:7003', '127.0.0.1:7003'])
      expect([host, verdict(rule, host)]).toEqual([host, 'ok']);
    expect(verdict(rule, undefined)).toMatch(/^FORBIDDEN: A request without a Host header .*ALLOWED_HOSTS/);
    expect(verdict(rule, 'evil.example:7003')).toMatch(/^FORBIDDEN: .*ALLOWED_HOSTS \(it listens on 0\.0\.0\.0\)/);
    expect(verdict(rule, '0.0.0.0:7003')).toMatch(/^FORBIDDEN/);
  });

  it('answers the address it listens on when that is one address', () => {
    const lan = hostOriginRule({ listenHost: '192.168.1.5' });
    expect(verdict(lan, '192.168.1.5:7003')).toBe('ok');
    expect(verdict(lan, '192.168.1.6:7003')).toMatch(/^FORBIDDEN/);
    expect(verdict(lan, undefined)).toMatch(/^FORBIDDEN/);
    const v6 = hostOriginRule({ listenHost: 'fd00::5' });
    expect(verdict(v6, '[fd00::5]:7003')).toBe('ok');
  });
});

describe('the base variables', () => {
  it('read ALLOWED_HOSTS and ALLOWED_ORIGINS as lists and REQUEST_TIMEOUT_MS within 1 s to 1 h (30 s unset)', () => {
    const c = loadConfig('t', baseEnvSchema, {
      ALLOWED_HOSTS: 'terminal-mcp, fleet.example.com',
      ALLOWED_ORIGINS: '',
      REQUEST_TIMEOUT_MS: '',
    });
    expect(c).toMatchObject({ ALLOWED_HOSTS: ['terminal-mcp', 'fleet.example.com'], ALLOWED_ORIGINS: [], REQUEST_TIMEOUT_MS: 30_000 });
    for (const bad of ['10', '0', 'soon', '3600001'])
      expect(() => loadConfig('t', baseEnvSchema, { REQUEST_TIMEOUT_MS: bad })).toThrow(ConfigError);
  });
});
