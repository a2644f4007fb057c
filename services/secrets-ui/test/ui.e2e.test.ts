import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { RunningServer } from '@mcp-fleet/kit';
import { parseEnvFile } from '@mcp-fleet/kit';
import { describeWithProgram, serve } from '@mcp-fleet/testing';
import { FileSecretStore } from '../src/store';
import { ADMIN, makeApp } from './support';

/** The UI as a person uses it, in Debian's headless Chromium; screenshots go to artifacts/secrets-ui/. */
const SHOTS = path.resolve(__dirname, '../../../artifacts/secrets-ui');
const NEW_VALUE = 'jwt-secret-from-the-browser-0123456789';

jest.setTimeout(30_000);

describeWithProgram('chromium', 'chromium', 'secrets-ui in a browser', () => {
  const t = makeApp();
  let server: RunningServer;
  let evil: RunningServer;
  let browser: Browser;
  let page: Page;
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    fs.mkdirSync(SHOTS, { recursive: true });
    server = await serve(t.app);
    // Another site on this machine that tries to act with the operator's session.
    evil = await serve((req: http.IncomingMessage, res: http.ServerResponse) => {
      const target = `${server.url}/api/secrets/security-mcp`;
      res.setHeader('Content-Type', 'text/html');
      if (req.url === '/form') {
        // The classic JSON CSRF: a text/plain form whose body looks like JSON.
        res.end(`<form id="f" method="POST" enctype="text/plain" action="${target}/reveal"><input name='{"key":"JWT_SECRET","x":"' value='"}'></form>
<script>document.getElementById('f').submit()</script>`);
      } else {
        res.end(`<script>
fetch(${JSON.stringify(target)}, {method:'PUT', credentials:'include', headers:{'Content-Type':'application/json'}, body:JSON.stringify({values:{JWT_SECRET:'evil'}})})
  .then(r => document.title = 'status ' + r.status, e => document.title = 'blocked');
</script>`);
      }
    });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
    page = await context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await evil?.stop();
    await server?.stop();
    await t.cleanup();
  });

  it('refuses a wrong admin token at the login form', async () => {
    await page.goto(server.url);
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.fill('input[name=actor]', 'carol');
    await page.fill('input[name=token]', 'not-the-admin-token');
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/login') && r.request().method() === 'POST'),
      page.click('button[type=submit]'),
    ]);
    expect(res.status()).toBe(401);
    await expect(page.locator('.error').textContent()).resolves.toContain('Wrong admin token');
    await shot('01-login-failed');
  });

  it('signs in, edits a value, and the store and the export file have it', async () => {
    await page.fill('input[name=actor]', 'carol');
    await page.fill('input[name=token]', ADMIN);
    await page.click('button[type=submit]');
    await page.waitForSelector('#services button[data-service="security-mcp"]');
    await expect(page.locator('#whoami').textContent()).resolves.toContain('carol');
    await page.click('#services button[data-service="security-mcp"]');
    const row = page.locator('tr[data-key="JWT_SECRET"]');
    await row.waitFor();
    await shot('02-service-keys');
    await row.locator('button.edit').click();
    await row.locator('input').fill(NEW_VALUE);
    await row.locator('button.save').click();
    await page.locator('#restart').waitFor({ state: 'visible' });
    await expect(page.locator('#restart-command').textContent()).resolves.toBe('docker compose restart security-mcp');
    await shot('03-saved-restart-hint');

    const store = new FileSecretStore(path.join(t.dir, 'secrets-ui', 'store'), path.join(t.dir, 'secrets-ui', 'store-token'));
    await expect(store.read('security-mcp')).resolves.toMatchObject({ values: { JWT_SECRET: NEW_VALUE }, version: 1 });
    expect(parseEnvFile(fs.readFileSync(t.exportFile('security-mcp'), 'utf8'))).toEqual({ JWT_SECRET: NEW_VALUE });
    expect(t.auditLines().at(-1)).toMatchObject({ actor: 'carol', via: 'ui', action: 'write', keys: ['JWT_SECRET'] });
  });

  it('masks the value until it is revealed', async () => {
    const row = page.locator('tr[data-key="JWT_SECRET"]');
    await expect(row.locator('code.value').textContent()).resolves.toBe('••••••••');
    expect(await page.content()).not.toContain(NEW_VALUE);
    await row.locator('button.reveal').click();
    // (not waitForFunction: the page's Content-Security-Policy forbids evaluating strings, as it should)
    await row.locator('code.value', { hasText: NEW_VALUE }).waitFor();
    await shot('04-revealed');
    expect(t.auditLines().at(-1)).toMatchObject({ actor: 'carol', action: 'reveal', keys: ['JWT_SECRET'] });
    await row.locator('button.reveal').click();
    await expect(row.locator('code.value').textContent()).resolves.toBe('••••••••');
  });

  it('refuses a forged cross-site POST and a cross-site PUT carrying the session', async () => {
    const before = t.auditLines().length;
    // The same browser context: the operator's session cookie is there, as it would be in another tab.
    const forged = await page.context().newPage();
    try {
      const [res] = await Promise.all([
        forged.waitForResponse((r) => r.url().endsWith('/api/secrets/security-mcp/reveal')),
        forged.goto(`${evil.url}/form`),
      ]);
      expect(res.status()).toBe(403);
      expect(await res.text()).not.toContain(NEW_VALUE);
      await forged.screenshot({ path: path.join(SHOTS, '05-forged-post-refused.png') });
      await forged.goto(`${evil.url}/fetch`);
      await forged.waitForFunction(`document.title.startsWith('status') || document.title === 'blocked'`);
    } finally {
      await forged.close();
    }
    expect(t.auditLines().length).toBe(before);
    expect(parseEnvFile(fs.readFileSync(t.exportFile('security-mcp'), 'utf8'))).toEqual({ JWT_SECRET: NEW_VALUE });
  });
});
