import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { RunningServer } from '@mcp-fleet/kit';
import { serve, tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

const SCRIPT = path.resolve(__dirname, '../../../scripts/marketplace/get_market_token.sh');
const JWT_SECRET = 'marketplace-shared-secret-0123456789abcdef';
const ADMIN = 'script-admin-credential-0001';
const service = createApp({
  config: configSchema.parse({ ...testConfig, DATA_DIR: '/tmp', JWT_SECRET, SECURITY_ADMIN_TOKEN: ADMIN }),
  logger: testLogger(),
  defaultMetrics: false,
});
const tmp = tempDir();
const BASH = spawnSync('bash', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim();
let server: RunningServer;

beforeAll(async () => {
  server = await serve(service.app);
});

afterAll(async () => {
  await server.stop();
  tmp.cleanup();
});

/** Runs the script asynchronously: the service answering it lives in this process, so the event loop must keep turning. */
function run(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(BASH, [SCRIPT, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SECURITY_MCP_URL: server.url, SECURITY_ADMIN_TOKEN: ADMIN, ...env },
      timeout: 20_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', (err) => resolve({ code: null, stdout, stderr: String(err) }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function verify(token: string, requiredScopes?: string) {
  const res = await request(service.app)
    .post('/tools/jwt_verify')
    .send({ token, ...(requiredScopes ? { requiredScopes } : {}) });
  return res.body.result;
}

describe('scripts/marketplace/get_market_token.sh', () => {
  it('prints only a token with scope market:read that security-mcp verifies', async () => {
    const out = await run([]);
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const result = await verify(out.stdout.trim(), 'market:read');
    expect(result).toMatchObject({ valid: true, subject: 'market-client', scopes: ['market:read'] });
  });

  it('passes subject, scopes, ttl and audience', async () => {
    const out = await run(['--subject', 'ci@runner', '--scope', 'market:read market:install', '--ttl', '600', '--audience', 'marketplace']);
    expect(out.code).toBe(0);
    const result = await verify(out.stdout.trim());
    expect(result).toMatchObject({ valid: true, subject: 'ci@runner', scopes: ['market:read', 'market:install'] });
    expect(result.claims.aud).toBe('marketplace');
    expect(result.claims.exp - result.claims.iat).toBe(600);
  });

  it('reads the credential from SECURITY_ADMIN_TOKEN_FILE', async () => {
    const file = path.join(tmp.dir, 'admin-token');
    fs.writeFileSync(file, `${ADMIN}\n`, { mode: 0o600 });
    const out = await run([], { SECURITY_ADMIN_TOKEN: undefined, SECURITY_ADMIN_TOKEN_FILE: file });
    expect(out.code).toBe(0);
    expect((await verify(out.stdout.trim())).valid).toBe(true);
  });

  it('works without jq, reading JSON with node', async () => {
    const bin = path.join(tmp.dir, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    for (const tool of ['curl', 'node', 'mktemp', 'rm']) {
      const found = spawnSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      if (found && !fs.existsSync(path.join(bin, tool))) fs.symlinkSync(found, path.join(bin, tool));
    }
    const out = await run([], { PATH: bin });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect((await verify(out.stdout.trim())).valid).toBe(true);
    const refused = await run([], { PATH: bin, SECURITY_ADMIN_TOKEN: 'wrong-credential-value' });
    expect(refused.stderr).toContain('HTTP 401');
  });

  it('fails clearly, and without echoing the credential, on a wrong credential', async () => {
    const out = await run([], { SECURITY_ADMIN_TOKEN: 'wrong-credential-value' });
    expect(out.code).not.toBe(0);
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(/HTTP 401: jwt_token needs the admin credential/);
    expect(out.stderr).not.toContain('wrong-credential-value');
  });

  it('refuses bad usage before calling anything', async () => {
    const cases: [string[], Record<string, string | undefined>, RegExp][] = [
      [[], { SECURITY_ADMIN_TOKEN: undefined }, /set SECURITY_ADMIN_TOKEN/],
      [['--subject', 'bad"name'], {}, /--subject may hold/],
      [['--scope', ''], {}, /--scope needs a value/],
      [['--ttl', '1h'], {}, /--ttl must be a number/],
      [['--bogus'], {}, /unknown option: --bogus/],
      [[], { SECURITY_ADMIN_TOKEN: 'has space' }, /cannot be sent in a header/],
      [[], { SECURITY_MCP_URL: 'ftp://x' }, /must be an http\(s\) URL/],
    ];
    for (const [args, env, message] of cases) {
      const out = await run(args, env);
      expect({ args, code: out.code, stderr: out.stderr }).toEqual({ args, code: 64, stderr: expect.stringMatching(message) });
    }
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage:');
  });

  it('says where it tried when security-mcp is unreachable, and reports an HTTP error from a bad ttl', async () => {
    const out = await run([], { SECURITY_MCP_URL: 'http://127.0.0.1:1' });
    expect(out.code).toBe(69);
    expect(out.stderr).toContain('could not reach security-mcp at http://127.0.0.1:1');
    const ttl = await run(['--ttl', '5']);
    expect(ttl.code).toBe(65);
    expect(ttl.stderr).toMatch(/HTTP 400: Invalid arguments for jwt_token/);
  });

  it('passes shellcheck when shellcheck is installed', () => {
    const which = spawnSync('bash', ['-c', 'command -v shellcheck'], { encoding: 'utf8' });
    if (which.status !== 0) return; // not installed here; the check runs where it is
    const res = spawnSync('shellcheck', [SCRIPT], { encoding: 'utf8' });
    expect(res.stdout + res.stderr).toBe('');
  });
});
