/**
 * Console sessions with several gateway instances sharing SESSION_DATABASE_URL (the real PostgreSQL
 * on 5432): a person logs in through one instance in Chromium and is logged in on the other (the
 * load balancer may send any request to either); logging out on one ends the session on both; a key
 * revoked on one ends its sessions on the other. The shared row holds no usable credential: the key
 * is sealed under the session id, which only the browser's cookie has. Without a shared store each
 * instance keeps its own sessions (the memory store), as docs/gateway.md says.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describeWithBackend, pgScratchSchema, tempDir, type PgScratchSchema } from '@mcp-fleet/testing';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'];
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

describeWithBackend('postgres', 'console sessions across gateway instances', () => {
  const tmp = tempDir('mcp-fleet-console-instances-');
  const keysFile = path.join(tmp.dir, 'keys.json');
  const admin = newApiKey('ops', ['admin', 'tools:all']);
  const temp = newApiKey('temp', ['admin']);
  let pg: PgScratchSchema;
  let a: RunningGateway;
  let b: RunningGateway;
  let browser: Browser;

  beforeAll(async () => {
    fs.writeFileSync(keysFile, JSON.stringify([admin.entry, temp.entry]), { mode: 0o600 });
    pg = await pgScratchSchema('console_sessions');
    const shared = { API_KEYS_FILE: keysFile, SESSION_DATABASE_URL: pg.url, HEALTH_POLL_MS: '600000' };
    a = await startGateway([], path.join(tmp.dir, 'a'), shared);
    b = await startGateway([], path.join(tmp.dir, 'b'), shared);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await a?.stop();
    await b?.stop();
    await pg?.drop();
    tmp.cleanup();
  });

  async function logIn(page: Page, url: string, key: string): Promise<void> {
    await page.goto(`${url}/console/`);
    await page.getByLabel('API key or access token').fill(key);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
  }

  const sessionOf = (page: Page) => page.evaluate(async () => (await fetch('/console/api/session')).json() as Promise<any>);

  it('keeps a person logged in on every instance, and a logout ends it on all', async () => {
    // cookies are per host, not per port: the browser sends instance A's cookie to B as it would behind one address
    const context = await browser.newContext();
    const page = await context.newPage();
    await logIn(page, a.url, admin.key);
    await page.goto(`${b.url}/console/#/access`);
    await page.getByRole('heading', { level: 1, name: 'Access' }).waitFor();
    await page.locator('#who', { hasText: 'Key ops (admin)' }).waitFor();
    await page.evaluate(AXE);
    const serious = await page.evaluate(async () => {
      const r = await (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] });
      return r.violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical').map((v: any) => v.id);
    });
    expect(serious).toEqual([]);
    // a write through B with the session's CSRF token (the token is the session's, whichever instance answers)
    const created = await page.evaluate(async () => {
      const s = (await (await fetch('/console/api/session')).json()) as { csrf: string };
      const res = await fetch('/console/api/keys', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-console-csrf': s.csrf },
        body: JSON.stringify({ name: 'made-on-b', scopes: ['tools:read'] }),
      });
      return res.status;
    });
    expect(created).toBe(201);

    // the shared row: no key in it, nothing an instance could use without the cookie
    const rows = (await pg.admin.query('SELECT * FROM console_sessions')).rows as Record<string, string>[];
    expect(rows).toHaveLength(1);
    const text = JSON.stringify(rows);
    expect(text).not.toContain(admin.key);
    expect(text).not.toContain(admin.key.slice(5, 30));
    const cookie = (await context.cookies()).find((c) => c.name === 'mcpf_console')!;
    expect(text).not.toContain(cookie.value);

    // logging out on B ends it on A
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('API key or access token').waitFor();
    await page.goto(`${a.url}/console/`);
    await page.getByLabel('API key or access token').waitFor();
    expect((await sessionOf(page)).loggedIn).toBe(false);
    expect((await pg.admin.query('SELECT COUNT(*)::int AS n FROM console_sessions')).rows[0].n).toBe(0);
    await context.close();
  }, 60_000);

  it('ends, on every instance, the sessions of a key revoked on one', async () => {
    const opsContext = await browser.newContext();
    const ops = await opsContext.newPage();
    await logIn(ops, a.url, admin.key);
    const tempContext = await browser.newContext();
    const person = await tempContext.newPage();
    await logIn(person, b.url, temp.key);
    expect((await sessionOf(person)).loggedIn).toBe(true);
    // revoked through A's console
    await ops.goto(`${a.url}/console/#/access`);
    await ops.getByRole('button', { name: 'Revoke temp' }).click();
    await ops.getByRole('button', { name: 'Yes, revoke temp' }).click();
    await ops.locator('#status', { hasText: 'Key temp revoked; 1 console session(s) ended' }).waitFor();
    // B's session of it is gone (B reads the keys file again on its next check)
    expect((await sessionOf(person)).loggedIn).toBe(false);
    await opsContext.close();
    await tempContext.close();
  }, 60_000);

  it('answers 503, not 500 nor a logout, while the shared store is out of reach', async () => {
    const login = await fetch(`${a.url}/console/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ credential: admin.key }),
    });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    await pg.admin.query('ALTER TABLE console_sessions RENAME TO console_sessions_away');
    try {
      const res = await fetch(`${b.url}/console/api/session`, { headers: { cookie } });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { code: string }).code).toBe('UPSTREAM_UNAVAILABLE');
    } finally {
      await pg.admin.query('ALTER TABLE console_sessions_away RENAME TO console_sessions');
    }
    // back: the session was kept
    const again = (await (await fetch(`${b.url}/console/api/session`, { headers: { cookie } })).json()) as { loggedIn: boolean };
    expect(again.loggedIn).toBe(true);
  }, 30_000);

  it('keeps sessions per instance without a shared store', async () => {
    const keysOnly = { API_KEYS_FILE: keysFile, HEALTH_POLL_MS: '600000' };
    const one = await startGateway([], path.join(tmp.dir, 'one'), keysOnly);
    const two = await startGateway([], path.join(tmp.dir, 'two'), keysOnly);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await logIn(page, one.url, admin.key);
      await page.goto(`${two.url}/console/`);
      await page.getByLabel('API key or access token').waitFor();
      expect((await sessionOf(page)).loggedIn).toBe(false);
    } finally {
      await context.close();
      await one.stop();
      await two.stop();
    }
  }, 60_000);
});
