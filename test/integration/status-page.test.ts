/**
 * The gateway's status page, as a person sees it: headless Chromium (Debian's, driven by
 * playwright-core) loads GET / from a running fleet, sees every service and the catalog, and sees a
 * stopped service turn unhealthy within two health polls. Screenshots go to artifacts/ (git-ignored).
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { describeWithProgram, tempDir } from '@mcp-fleet/testing';
import { REPO_ROOT, getJson, postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

const ARTIFACTS = path.join(REPO_ROOT, 'artifacts', 'status-page');
const POLL_MS = 1000;

describeWithProgram('chromium', 'chromium', 'gateway status page in a browser', () => {
  const tmp = tempDir('mcp-fleet-status-page-');
  let fleet: FleetHandle;
  let browser: Browser;

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const workspace = path.join(tmp.dir, 'ws');
    fs.mkdirSync(workspace);
    fleet = await startFleet({
      dataDir: path.join(tmp.dir, 'data'),
      workspace,
      only: ['system-mcp', 'filesystem-mcp'],
      // No restart, so the stopped service stays stopped for the page to show.
      env: { HEALTH_POLL_MS: String(POLL_MS), FLEET_RESTART: '0' },
    });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await fleet?.stop();
    tmp.cleanup();
  });

  it('shows every service with its state, the catalog with schemas, and call counts, under a strict CSP', async () => {
    // The gateway may not have polled system-mcp yet when the launcher says ready.
    await waitFor(
      'system_info through the gateway',
      async () => (await postJson(`${fleet.gateway}/mcp`, { tool: 'system_info', arguments: {} })).body.success === true,
      20_000,
    );
    await postJson(`${fleet.gateway}/mcp`, { tool: 'no_such_tool', arguments: {} });
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    const response = await page.goto(fleet.gateway + '/');
    expect(response!.status()).toBe(200);
    expect(response!.headers()['content-security-policy']).toContain("script-src 'self'");
    const services = (await getJson(`${fleet.gateway}/services`)).body.services as { id: string }[];
    const rows = await page
      .locator('#services tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-service'), tr.getAttribute('data-status')]));
    expect(rows.map((r) => r[0]).sort()).toEqual(services.map((s) => s.id).sort());
    expect(Object.fromEntries(rows)).toMatchObject({
      'system-mcp': 'healthy',
      'filesystem-mcp': 'healthy',
      'mega-orchestrator': 'healthy',
    });
    const tools = (await getJson(`${fleet.gateway}/tools/list`)).body.tools as { name: string }[];
    expect(await page.locator('#catalog details').count()).toBe(tools.length);
    await page.locator('details[data-tool="file_read"] summary').click();
    await expect(page.locator('details[data-tool="file_read"] pre').textContent()).resolves.toContain('"path"');
    await expect(page.locator('#tool-stats').textContent()).resolves.toContain('system_info');
    await expect(page.locator('#errors').textContent()).resolves.toContain('UNKNOWN_TOOL');
    await page.screenshot({ path: path.join(ARTIFACTS, 'status-page.png'), fullPage: true });
    expect(violations).toEqual([]);
    await page.close();
  }, 60_000);

  it('turns a stopped service unhealthy on the open page within two health polls, without a reload', async () => {
    const page = await browser.newPage();
    await page.goto(fleet.gateway + '/');
    await page.locator('details[data-tool="system_info"] summary').click();
    const pid = fleet.state().services.find((s) => s.id === 'filesystem-mcp')!.pid;
    process.kill(pid, 'SIGKILL');
    const stoppedAt = Date.now();
    // Two polls for the gateway to notice, plus one page refresh (the page refreshes every poll).
    await page.waitForSelector('#services tr[data-service="filesystem-mcp"][data-status="unhealthy"]', { timeout: 3 * POLL_MS + 2000 });
    const seenAfterMs = Date.now() - stoppedAt;
    expect(seenAfterMs).toBeLessThan(3 * POLL_MS + 2000);
    // Other services and what the person opened survive the refresh.
    await expect(page.locator('tr[data-service="system-mcp"]').getAttribute('data-status')).resolves.toBe('healthy');
    expect(await page.locator('details[data-tool="system_info"]').getAttribute('open')).not.toBeNull();
    await page.screenshot({ path: path.join(ARTIFACTS, 'status-page-stopped.png'), fullPage: true });
    await page.close();
  }, 60_000);
});
