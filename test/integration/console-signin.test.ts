/**
 * Signing in to the console at a real authorization server (oidc-provider in a child process, its own
 * login and consent pages), in a real Chromium: the login page → the server's login and consent →
 * back in the console, signed in with the token the gateway's own verifier accepted. Refused, each
 * with a message on the login page and no session: a tampered state, a state from another browser,
 * a code used a second time, and a token the server made for another audience. Every console page
 * passes axe-core with no serious or critical violation; screenshots go to artifacts/console/.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { describeWithProgram, tempDir } from '@mcp-fleet/testing';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';

const REPO = path.resolve(__dirname, '..', '..');
const ARTIFACTS = path.join(REPO, 'artifacts', 'console');
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'];

/** A port free now (the gateway's resource URL must be known before the authorization server starts). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describeWithProgram('chromium', 'chromium', 'signing in to the console at an authorization server', () => {
  const tmp = tempDir('mcp-fleet-console-signin-');
  let as: ChildProcess;
  let issuer = '';
  let gateway: RunningGateway;
  let other: RunningGateway;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const cspViolations: string[] = [];
  /** The callback URL (code and state) of the sign-in that worked. */
  let usedCallback = '';

  async function axeCheck(p: Page, where: string): Promise<void> {
    await p.evaluate(AXE);
    const violations = await p.evaluate(async () => {
      const g = globalThis as any;
      const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
      return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, help: v.help }));
    });
    const serious = violations.filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical');
    expect({ where, serious }).toEqual({ where, serious: [] });
  }

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    contexts.push(context);
    // the authorization server's pages ask for a web font; there is no network here
    await context.route(/^https?:\/\/(?!127\.0\.0\.1)/, (route) => route.abort());
    context.on('console', (m) => {
      // the console's own pages only (the authorization server's are not ours)
      if (m.page()?.url().startsWith(gateway.url) && /Content Security Policy|Refused to/i.test(m.text())) cspViolations.push(m.text());
    });
    return { context, page: await context.newPage() };
  }

  /**
   * Starts a sign-in for this browser and stops at the authorization server's door (a redirect the
   * browser would follow): the state the console sent there; the browser gets the attempt's cookie.
   */
  async function stateOfNewAttempt(context: BrowserContext, base: string): Promise<string> {
    const res = await fetch(`${base}/console/api/oauth/start`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get('location')!);
    expect(to.origin).toBe(issuer);
    expect(to.searchParams.get('code_challenge_method')).toBe('S256');
    expect(to.searchParams.get('resource')).toBe(`${base}/mcp`);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly; SameSite=Lax; Max-Age=600/);
    const value = /^mcpf_console_oauth=([^;]+)/.exec(cookie)![1];
    await context.addCookies([
      { name: 'mcpf_console_oauth', value, domain: '127.0.0.1', path: '/console/api/oauth', httpOnly: true, sameSite: 'Lax' },
    ]);
    return to.searchParams.get('state')!;
  }

  async function loginError(page: Page): Promise<string> {
    await page.getByRole('heading', { level: 1, name: 'Log in to the console' }).waitFor();
    const text = (await page.locator('#login-error').textContent()) ?? '';
    // no session came of it
    const session = await page.evaluate(async () => (await fetch('/console/api/session')).json() as Promise<any>);
    expect(session.loggedIn).toBe(false);
    // the message is shown, and the address no longer carries it
    expect(page.url()).not.toContain('login_error');
    return text;
  }

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const [port, otherPort] = [await freePort(), await freePort()];
    const base = `http://127.0.0.1:${port}`;
    const otherBase = `http://127.0.0.1:${otherPort}`;
    as = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'console-oidc-provider.mjs')], {
      env: {
        ...process.env,
        RESOURCES: `${base}/mcp ${otherBase}/mcp`,
        REDIRECTS: `${base}/console/api/oauth/callback ${otherBase}/console/api/oauth/callback`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    issuer = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      as.stdout!.on('data', (c) => {
        out += c;
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { issuer: string }).issuer);
      });
      as.stderr!.on('data', (c) => (err += c));
      as.on('exit', (code) => reject(new Error(`oidc-provider exited (${code}): ${err}`)));
    });
    gateway = await startGateway([], path.join(tmp.dir, 'data'), {
      PORT: String(port),
      AUTH_ISSUER: issuer,
      AUTH_RESOURCE: `${base}/mcp`,
      CONSOLE_OAUTH_CLIENT_ID: 'fleet-console',
      CONSOLE_OAUTH_SCOPES: 'tools:read admin',
      HEALTH_POLL_MS: '600000',
    });
    // the same server, but the client whose tokens name another audience (and a client secret)
    other = await startGateway([], path.join(tmp.dir, 'other'), {
      PORT: String(otherPort),
      AUTH_ISSUER: issuer,
      AUTH_RESOURCE: `${otherBase}/mcp`,
      CONSOLE_OAUTH_CLIENT_ID: 'other-console',
      CONSOLE_OAUTH_CLIENT_SECRET: 'a-long-client-secret-for-the-console-test',
      HEALTH_POLL_MS: '600000',
    });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  }, 90_000);

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await gateway?.stop();
    await other?.stop();
    as?.kill('SIGTERM');
    tmp.cleanup();
  });

  it('signs a person in: login page → the server’s login and consent → the console, signed in', async () => {
    const { context, page } = await newPage();
    page.on('request', (r) => {
      if (r.url().startsWith(`${gateway.url}/console/api/oauth/callback`)) usedCallback = r.url();
    });
    await page.goto(`${gateway.url}/console/`);
    const link = page.getByRole('link', { name: 'Sign in with your account' });
    await link.waitFor();
    await expect(page.locator('.sign-in').textContent()).resolves.toContain(issuer);
    await axeCheck(page, 'login with sign-in');
    await page.screenshot({ path: path.join(ARTIFACTS, 'signin-login.png'), fullPage: true });
    await link.click();
    // the authorization server's own pages
    await page.locator('input[name="login"]').waitFor();
    expect(page.url().startsWith(issuer)).toBe(true);
    await page.locator('input[name="login"]').fill('ada');
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    // back in the console, signed in as the token's subject
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
    expect(page.url()).toBe(`${gateway.url}/console/#/fleet`);
    await page.locator('#who', { hasText: 'Token ada (admin)' }).waitFor();
    const session = await page.evaluate(async () => (await fetch('/console/api/session')).json() as Promise<any>);
    expect(session).toMatchObject({ loggedIn: true, via: 'cookie', principal: { kind: 'oauth', subject: 'ada' } });
    expect(session.principal.scopes).toEqual(['admin', 'tools:read']);
    // the token stays with the gateway: the browser holds the HttpOnly session cookie only
    const cookies = await context.cookies();
    const names = cookies.map((c) => c.name).filter((n) => n.startsWith('mcpf_'));
    expect(names).toEqual(['mcpf_console']);
    expect(cookies.find((c) => c.name === 'mcpf_console')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(usedCallback).toContain('code=');
    await page.getByRole('link', { name: 'Access' }).click();
    await page.getByRole('heading', { level: 1, name: 'Access' }).waitFor();
    await axeCheck(page, 'signed in by OAuth');
    await page.screenshot({ path: path.join(ARTIFACTS, 'signin-done.png'), fullPage: true });
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('link', { name: 'Sign in with your account' }).waitFor();
  }, 90_000);

  it('refuses a tampered state, and a state started in another browser', async () => {
    const { context, page } = await newPage();
    const state = await stateOfNewAttempt(context, gateway.url);
    await page.goto(`${gateway.url}/console/api/oauth/callback?code=anything&state=${encodeURIComponent(`${state}x`)}`);
    expect(await loginError(page)).toContain('does not match one the console started');
    await axeCheck(page, 'sign-in refused');
    await page.screenshot({ path: path.join(ARTIFACTS, 'signin-refused.png'), fullPage: true });

    // a real state, but this browser did not start it (a login forced on someone else)
    const elsewhere = await stateOfNewAttempt(context, gateway.url);
    const { page: victim } = await newPage();
    await victim.goto(`${gateway.url}/console/api/oauth/callback?code=anything&state=${encodeURIComponent(elsewhere)}`);
    expect(await loginError(victim)).toContain('started in another browser');
    // the message travels in the address: whatever it says is shown as text, never as markup
    const bait = '<img src=x id=injected onerror="document.title=1">';
    await page.goto(`${gateway.url}/console/?login_error=${encodeURIComponent(bait)}`);
    expect(await loginError(page)).toBe(`Sign-in failed: ${bait}`);
    expect(await page.locator('#injected').count()).toBe(0);
    // and that state is used up: it does not work in its own browser after
    await page.goto(`${gateway.url}/console/api/oauth/callback?code=anything&state=${encodeURIComponent(elsewhere)}`);
    expect(await loginError(page)).toContain('does not match one the console started');
  }, 60_000);

  it('refuses a code used a second time', async () => {
    expect(usedCallback).not.toBe('');
    const code = new URL(usedCallback).searchParams.get('code')!;
    const { context, page } = await newPage();
    // a fresh attempt of this browser, with the code already exchanged
    const state = await stateOfNewAttempt(context, gateway.url);
    await page.goto(`${gateway.url}/console/api/oauth/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(state)}`);
    const text = await loginError(page);
    expect(text).toContain('refused the code (invalid_grant');
    expect(text).toContain('a code works once only');
    expect(text).not.toContain(code);
  }, 60_000);

  it('refuses a token the server made for another audience', async () => {
    const { page } = await newPage();
    await page.goto(`${other.url}/console/`);
    await page.getByRole('link', { name: 'Sign in with your account' }).click();
    await page.locator('input[name="login"]').fill('ada');
    await page.locator('input[name="password"]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    const text = await loginError(page);
    expect(text).toContain('the gateway refused its token');
    expect(text).toContain('does not match this resource');
    await axeCheck(page, 'token for another audience refused');
    expect(cspViolations).toEqual([]);
  }, 60_000);

  it('says so when sign-in is not set up', async () => {
    const open = await fetch(`${other.url}/console/api/session`).then((r) => r.json() as Promise<any>);
    expect(open.signIn).toEqual({ issuer });
    const keysOnly = await startGateway([], path.join(tmp.dir, 'keys-only'), { HEALTH_POLL_MS: '600000' });
    try {
      const res = await fetch(`${keysOnly.url}/console/api/oauth/start`, { redirect: 'manual' });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: string }).error).toContain('CONSOLE_OAUTH_CLIENT_ID');
      expect((await fetch(`${keysOnly.url}/console/api/session`).then((r) => r.json() as Promise<any>)).signIn).toBeUndefined();
    } finally {
      await keysOnly.stop();
    }
  }, 30_000);
});
