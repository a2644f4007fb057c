/**
 * scripts/marketplace/install_skill_from_market.sh and client_configure_market.sh driven through bash
 * against a live marketplace (JWT on) with a token minted by get_market_token.sh through the real
 * security-mcp. A proxy in front of the marketplace plays a compromised mirror: it flips a byte of the
 * archive (tampered) or serves a hostile archive with a matching digest (path escape, link).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { describeWithProgram, serve } from '@mcp-fleet/testing';
import { rawArchive, type RawEntry } from '../../services/marketplace-mcp/test/shared';
import { runScript } from '../support/run-script';
import { securedMarketplace } from '../support/secured-marketplace';

const INSTALL = 'scripts/marketplace/install_skill_from_market.sh';
const CONFIGURE = 'scripts/marketplace/client_configure_market.sh';
const JWT_SECRET = 'scripts-marketplace-secret-0123456789abcdef';
const ADMIN = 'security-admin-credential-02';
const { tmp, security, market } = securedMarketplace('market-scripts-', JWT_SECRET, ADMIN);
type Servers = Awaited<ReturnType<typeof serve>>;
let securityServer: Servers;
let marketServer: Servers;
let proxyServer: Servers;
let token: string;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** What the proxy does to the archive it relays. */
let proxyMode: 'pass' | 'tamper' | RawEntry[] = 'pass';

const proxy: http.RequestListener = async (req, res) => {
  const upstream = await fetch(`${marketServer.url}${req.url}`, { headers: { authorization: req.headers.authorization ?? '' } });
  let body: Buffer = Buffer.from(await upstream.arrayBuffer());
  let digest = upstream.headers.get('x-checksum-sha256');
  if (proxyMode !== 'pass' && /\/download$/.test(req.url ?? '')) {
    if (proxyMode === 'tamper') body = Buffer.concat([body.subarray(0, 40), Buffer.from([body[40] ^ 0xff]), body.subarray(41)]);
    else body = await rawArchive(proxyMode);
    if (proxyMode !== 'tamper') digest = sha(body);
  } else if (Array.isArray(proxyMode) && upstream.status === 200 && /\/packages\/[^/]+\/[^/]+$/.test(req.url?.split('?')[0] ?? '')) {
    // A hostile mirror also rewrites the metadata so the digest matches its archive.
    const meta = JSON.parse(body.toString('utf8'));
    meta.result.dist.sha256 = sha(await rawArchive(proxyMode));
    body = Buffer.from(JSON.stringify(meta));
  }
  res.writeHead(upstream.status, {
    'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream',
    ...(digest ? { 'x-checksum-sha256': digest } : {}),
  });
  res.end(body);
};

beforeAll(async () => {
  await market.ready;
  securityServer = await serve(security.app);
  marketServer = await serve(market.app);
  proxyServer = await serve(proxy);
}, 30_000);
afterAll(async () => {
  await proxyServer?.stop();
  await marketServer?.stop();
  await securityServer?.stop();
  await market.close();
  tmp.cleanup();
});

const leftovers = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.startsWith('.install-')) : []);

describeWithProgram('tar', 'tar', 'scripts/marketplace against a live marketplace', () => {
  let dest: string;
  const install = (args: string[], env: Record<string, string> = {}) =>
    runScript(INSTALL, ['--dest', dest, ...args], { MARKETPLACE_URL: marketServer.url, MARKETPLACE_JWT_TOKEN: token, ...env });

  beforeAll(async () => {
    const minted = await runScript('scripts/marketplace/get_market_token.sh', ['--subject', 'script-test'], {
      SECURITY_MCP_URL: securityServer.url,
      SECURITY_ADMIN_TOKEN: ADMIN,
    });
    expect(minted.stderr).toBe('');
    token = minted.stdout.trim();
    dest = path.join(tmp.dir, 'client', '.claude', 'skills');
  });

  it('installs a skill: digest checked, files and modes as published; re-running is a no-op', async () => {
    const out = await install(['--skill', 'fleet-health-check']);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const meta = market.catalog.get('fleet-health-check', 'latest');
    expect(out.stdout).toBe(`installed fleet-health-check@1.0.0 in ${dest}/fleet-health-check (sha256 ${meta.sha256})\n`);
    const target = path.join(dest, 'fleet-health-check');
    for (const f of meta.files) expect(sha(fs.readFileSync(path.join(target, f.path)))).toBe(f.sha256);
    expect(fs.statSync(path.join(target, 'scripts', 'check.sh')).mode & 0o111).not.toBe(0);
    const before = fs.statSync(path.join(target, 'SKILL.md')).mtimeMs;
    const again = await install(['--skill', 'fleet-health-check', '--version', '^1']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already installed');
    expect(fs.statSync(path.join(target, 'SKILL.md')).mtimeMs).toBe(before);
    expect(leftovers(dest)).toEqual([]);
  });

  it('resolves ranges and replaces an installed version with another', async () => {
    expect((await install(['--skill', 'commit-message', '--version', '^1.0'])).stdout).toContain('commit-message@1.1.0');
    expect(fs.readFileSync(path.join(dest, 'commit-message', 'SKILL.md'), 'utf8')).toContain('version: 1.1.0');
    const down = await install(['--skill', 'commit-message', '--version', '1.0.0']);
    expect(down.code).toBe(0);
    expect(fs.readFileSync(path.join(dest, 'commit-message', 'SKILL.md'), 'utf8')).toContain('version: 1.0.0');
    expect(leftovers(dest)).toEqual([]);
  });

  it('fails clearly without a token, for an unknown skill or range, and on bad usage', async () => {
    const noToken = await install(['--skill', 'sql-review'], { MARKETPLACE_JWT_TOKEN: '' });
    expect({ code: noToken.code, stderr: noToken.stderr }).toEqual({ code: 65, stderr: expect.stringContaining('HTTP 401') });
    const unknown = await install(['--skill', 'ghost-skill']);
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({
      code: 65,
      stderr: expect.stringMatching(/HTTP 404 for ghost-skill@latest: No skill named "ghost-skill"/),
    });
    expect((await install(['--skill', 'sql-review', '--version', '>=9'])).stderr).toContain('HTTP 404');
    const down = await install(['--skill', 'sql-review'], { MARKETPLACE_URL: 'http://127.0.0.1:1' });
    expect({ code: down.code, stderr: down.stderr }).toEqual({
      code: 69,
      stderr: expect.stringContaining('could not reach the marketplace'),
    });
    for (const [args, message] of [
      [[], /--skill is required/],
      [['--skill', '../etc'], /--skill must be/],
      [['--skill', 'x', '--version', '$(id)'], /--version must be/],
      [['--skill', 'x', '--bogus'], /unknown option: --bogus/],
    ] as const) {
      const out = await install([...args]);
      expect({ args, code: out.code, stderr: out.stderr }).toEqual({ args, code: 64, stderr: expect.stringMatching(message) });
    }
    expect(fs.existsSync(path.join(dest, 'sql-review'))).toBe(false);
    expect(leftovers(dest)).toEqual([]);
  });

  it('refuses a tampered archive and leaves nothing behind', async () => {
    proxyMode = 'tamper';
    try {
      const out = await install(['--skill', 'sql-review'], { MARKETPLACE_URL: proxyServer.url });
      expect(out.code).toBe(65);
      expect(out.stderr).toMatch(
        /sha256 mismatch for sql-review@0\.3\.0: downloaded [a-f0-9]{64}, the marketplace publishes [a-f0-9]{64}; nothing was installed/,
      );
      expect(fs.existsSync(path.join(dest, 'sql-review'))).toBe(false);
      expect(leftovers(dest)).toEqual([]);
    } finally {
      proxyMode = 'pass';
    }
  });

  it.each([
    [
      'a ".." path escape',
      [
        { name: 'SKILL.md', data: '---\nname: sql-review\n---\n' },
        { name: '../../escaped.txt', data: 'owned' },
      ],
      /escapes the skill folder/,
    ],
    [
      'an absolute path',
      [
        { name: 'SKILL.md', data: 'x' },
        { name: '/tmp/absolute-escape.txt', data: 'owned' },
      ],
      /escapes the skill folder/,
    ],
    [
      'a symbolic link',
      [
        { name: 'SKILL.md', data: 'x' },
        { name: 'passwd', type: 'symlink', linkname: '/etc/passwd' },
      ],
      /link, device or other special entry/,
    ],
    [
      'a hard link',
      [
        { name: 'SKILL.md', data: 'x' },
        { name: 'hard', type: 'link', linkname: 'SKILL.md' },
      ],
      /link, device or other special entry/,
    ],
    [
      'a device',
      [
        { name: 'SKILL.md', data: 'x' },
        { name: 'null', type: 'character-device' },
      ],
      /link, device or other special entry/,
    ],
  ] as [string, RawEntry[], RegExp][])(
    'refuses a hostile archive with %s (digest matching) and writes nothing',
    async (_title, entries, message) => {
      proxyMode = entries;
      try {
        const out = await install(['--skill', 'sql-review'], { MARKETPLACE_URL: proxyServer.url });
        expect({ code: out.code, stderr: out.stderr }).toEqual({ code: 65, stderr: expect.stringMatching(message) });
        expect(fs.existsSync(path.join(dest, 'sql-review'))).toBe(false);
        expect(fs.existsSync(path.join(dest, '..', 'escaped.txt'))).toBe(false);
        expect(fs.existsSync(path.join(dest, '..', '..', 'escaped.txt'))).toBe(false);
        expect(leftovers(dest)).toEqual([]);
      } finally {
        proxyMode = 'pass';
      }
    },
  );
});

describe(CONFIGURE, () => {
  const envFile = () => path.join(tmp.dir, 'client-env', 'agent.env');
  const configure = (args: string[], env: Record<string, string> = {}) =>
    runScript(CONFIGURE, ['--env-file', envFile(), ...args], { MARKETPLACE_URL: marketServer.url, ...env });

  beforeAll(async () => {
    if (!token) {
      const minted = await runScript('scripts/marketplace/get_market_token.sh', [], {
        SECURITY_MCP_URL: securityServer.url,
        SECURITY_ADMIN_TOKEN: ADMIN,
      });
      token = minted.stdout.trim();
    }
  });

  it('writes the URL and token with mode 600, keeping the other lines and replacing its own', async () => {
    fs.mkdirSync(path.dirname(envFile()), { recursive: true });
    fs.writeFileSync(
      envFile(),
      'OTHER=1\nexport MARKETPLACE_URL=http://old:1\n# a comment\nMARKETPLACE_JWT_TOKEN=old.token.value\nLAST=without-newline',
      { mode: 0o644 },
    );
    const out = await configure(['--check'], { MARKETPLACE_JWT_TOKEN: token });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).not.toContain(token);
    expect(fs.statSync(envFile()).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(envFile(), 'utf8')).toBe(
      `OTHER=1\n# a comment\nLAST=without-newline\nMARKETPLACE_URL=${marketServer.url}\nMARKETPLACE_JWT_TOKEN=${token}\n`,
    );
    // The written file is what the install script needs.
    const tokenFile = path.join(tmp.dir, 'token');
    fs.writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const again = await configure(['--token-file', tokenFile]);
    expect(again.code).toBe(0);
    expect(fs.readFileSync(envFile(), 'utf8').match(/MARKETPLACE_/g)).toHaveLength(2);
  });

  it('refuses a token the marketplace rejects (--check), a bad token, a symlinked file and bad usage, writing nothing', async () => {
    const before = fs.readFileSync(envFile(), 'utf8');
    const rejected = await configure(['--check'], { MARKETPLACE_JWT_TOKEN: 'a.b.c' });
    expect({ code: rejected.code, stderr: rejected.stderr }).toEqual({ code: 65, stderr: expect.stringContaining('HTTP 401') });
    const bad = await configure([], { MARKETPLACE_JWT_TOKEN: 'has"quote' });
    expect(bad.code).toBe(64);
    const link = path.join(tmp.dir, 'client-env', 'link.env');
    fs.symlinkSync(envFile(), link);
    const linked = await runScript(CONFIGURE, ['--env-file', link], { MARKETPLACE_JWT_TOKEN: token });
    expect({ code: linked.code, stderr: linked.stderr }).toEqual({ code: 73, stderr: expect.stringContaining('symbolic link') });
    expect((await configure(['--url', 'ftp://x'])).code).toBe(64);
    expect((await configure(['--nope'])).stderr).toContain('unknown option: --nope');
    expect(fs.readFileSync(envFile(), 'utf8')).toBe(before);
    expect(fs.readdirSync(path.dirname(envFile())).filter((n) => n.startsWith('.market-env'))).toEqual([]);
  });
});
