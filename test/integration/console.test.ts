/**
 * The gateway's console (/console/), as a person uses it, in a real Chromium (Debian's, driven by
 * playwright-core) under the console's strict CSP: log in with an API key, see the fleet, find a
 * tool, run it with a bad input (stopped here by the schema, then refused by the service) and a good
 * one, see images and audio, get a prompt and read a resource, find the calls in the history with
 * their secrets redacted, create a key and revoke it (and see it refused after), read the audit log,
 * create, edit and remove a virtual server (its errors at the field), follow a service's log live; a
 * key without the admin scope sees no access page. A call opened in the history shows its result. Every page passes
 * axe-core with no serious or critical violation, at desktop and phone width. Screenshots go to
 * artifacts/console/ (git-ignored).
 *
 * Behind the gateway (in this process, with authorization on: API_KEYS_FILE): a kit service with a
 * schema of every shape the form renders, writing its JSON log where the launcher puts logs, and a
 * real MCP server over stdio (official SDK) answering an image, audio, a prompt and a resource.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { z } from 'zod';
import { createLogger, createServiceApp, defineTool, type Logger, type RunningServer } from '@mcp-fleet/kit';
import { describeWithProgram, serve, tempDir, testConfig } from '@mcp-fleet/testing';
import { newApiKey } from '../../services/mega-orchestrator/src/auth/auth';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';
import type { DownstreamSpec } from '../../services/mega-orchestrator/src/core/types';

const REPO = path.resolve(__dirname, '..', '..');
const ARTIFACTS = path.join(REPO, 'artifacts', 'console');
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The kit service behind the gateway: one tool whose schema has every shape the console's form renders. */
function demoTools(calls: { plan: number }) {
  return [
    defineTool({
      name: 'plan_trip',
      description:
        'Plans a trip (pretends to). Every kind of argument: text, whole numbers, a choice, a list, a group, a switch, a secret.',
      input: z
        .object({
          city: z.string().min(1).max(60).describe('Where to.'),
          days: z.number().int().min(1).max(14).describe('How many days.'),
          travel: z.enum(['train', 'bus', 'bike']).optional().describe('How to get there.'),
          stops: z.array(z.string().min(1).max(40)).max(3).optional().describe('Places on the way.'),
          budget: z
            .object({ amount: z.number().min(0).describe('How much.'), currency: z.enum(['EUR', 'USD']).describe('In what.') })
            .optional()
            .describe('What it may cost.'),
          accessible: z.boolean().optional().describe('Step-free only.'),
          password: z.string().max(100).optional().describe('A booking password (never shown in the history).'),
        })
        .strict(),
      annotations: { readOnlyHint: true },
      handler: (args) => {
        calls.plan += 1;
        return { itinerary: `${args.days} days in ${args.city}${args.travel ? ` by ${args.travel}` : ''}`, stops: args.stops ?? [] };
      },
    }),
  ];
}

describeWithProgram('chromium', 'chromium', 'the gateway console in a browser', () => {
  const tmp = tempDir('mcp-fleet-console-');
  const dataDir = path.join(tmp.dir, 'data');
  const keysFile = path.join(tmp.dir, 'keys.json');
  const admin = newApiKey('ops', ['admin', 'tools:all']);
  const reader = newApiKey('reader', ['tools:read']);
  const calls = { plan: 0 };
  let demoLog: Logger;
  let demo: RunningServer;
  let gateway: RunningGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const cspViolations: string[] = [];
  let createdKey = '';
  /** The trace id the console showed for the good plan_trip call. */
  let traceId = '';

  /**
   * The element's text once it shows `expected` (or after 20 s, whatever it shows then): the console
   * fills what it shows after its requests answer, which on a loaded machine is not at once.
   */
  async function textWith(locator: Locator, expected: string): Promise<string> {
    await locator
      .filter({ hasText: expected })
      .first()
      .waitFor({ timeout: 20_000 })
      .catch(() => undefined);
    return (await locator.first().textContent()) ?? '';
  }

  /** axe-core in the page (evaluated through the DevTools protocol: the page's CSP stays as it is). */
  async function axeCheck(p: Page, where: string): Promise<void> {
    await p.evaluate(AXE);
    const violations = await p.evaluate(async () => {
      const g = globalThis as any;
      const result = await g.axe.run(g.document, { resultTypes: ['violations'] });
      return result.violations.map((v: any) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')),
      }));
    });
    const serious = violations.filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical');
    expect({ where, serious }).toEqual({ where, serious: [] });
  }

  /** Any page of the context that logs a CSP refusal fails the last test. */
  const watchCsp = (c: BrowserContext) =>
    c.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) cspViolations.push(m.text());
    });

  const shot = (p: Page, name: string) => p.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.mkdirSync(path.join(dataDir, 'logs'), { recursive: true });
    fs.writeFileSync(keysFile, JSON.stringify([admin.entry, reader.entry]), { mode: 0o600 });
    // The launcher's state, as `./fleet up` writes it beside the logs: demo-mcp was restarted twice.
    fs.writeFileSync(
      path.join(dataDir, 'fleet.json'),
      JSON.stringify({ pid: process.pid, services: [{ id: 'demo-mcp', state: 'healthy', restarts: 2 }] }),
    );
    demoLog = createLogger({ service: 'demo-mcp', level: 'info', file: path.join(dataDir, 'logs', 'demo-mcp.log') });
    // the file only (the launcher's layout), not the test's output
    for (const t of demoLog.transports.filter((t) => t.constructor.name === 'Console')) demoLog.remove(t);
    demoLog.info('demo-mcp listening');
    demo = await serve(createServiceApp({ service: 'demo-mcp', config: testConfig, logger: demoLog, tools: demoTools(calls) }).app);
    const services: DownstreamSpec[] = [
      { id: 'demo-mcp', url: demo.url, tools: ['plan_trip'] },
      {
        id: 'studio-mcp',
        url: 'stdio:studio-mcp',
        mcp: {
          transport: 'stdio',
          command: process.execPath,
          args: ['--import', 'tsx', path.join(__dirname, 'fixtures', 'console-media-server.ts')],
          cwd: REPO,
          env: {},
        },
      },
    ];
    gateway = await startGateway(services, dataDir, { API_KEYS_FILE: keysFile, HEALTH_POLL_MS: '1000', HEALTH_TIMEOUT_MS: '5000' });
    const end = Date.now() + 30_000;
    while (!gateway.gw.registry.catalog.byName.has('draw_stripes')) {
      if (Date.now() > end) throw new Error('studio-mcp did not join the catalog within 30 s');
      await gateway.gw.refresh();
      await new Promise((r) => setTimeout(r, 100));
    }
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    watchCsp(context);
    page = await context.newPage();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await demo?.stop();
    demoLog?.close();
    tmp.cleanup();
  });

  it('serves the console under a strict CSP and asks for a key; a wrong key is refused', async () => {
    const response = await page.goto(`${gateway.url}/console/`);
    expect(response!.status()).toBe(200);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toContain("script-src 'self'");
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(headers['content-security-policy']).not.toContain('unsafe-inline');
    await page.getByLabel('API key or access token').waitFor();
    await axeCheck(page, 'login');
    await shot(page, 'login');
    await page.getByLabel('API key or access token').fill('mcpf_not-a-key');
    await page.getByRole('button', { name: 'Log in' }).click();
    expect(await textWith(page.locator('#login-error'), 'not known')).toContain('not known');
    await page.getByLabel('API key or access token').fill(admin.key);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
    // the key is with the gateway; the browser holds an HttpOnly cookie only
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'mcpf_console', httpOnly: true, sameSite: 'Strict', path: '/console/api' });
    expect(await page.evaluate(() => (globalThis as any).document.cookie)).toBe('');
    expect(await page.content()).not.toContain(admin.key);
  }, 60_000);

  it('shows the fleet: health, why a service is missing, breaker, restarts, MCP servers and their era', async () => {
    await page.locator('#services tr[data-service="demo-mcp"]').waitFor();
    const row = (id: string) => page.locator(`#services tr[data-service="${id}"]`);
    await expect(row('demo-mcp').getAttribute('data-status')).resolves.toBe('healthy');
    expect(await textWith(row('demo-mcp'), '2 (launcher)')).toContain('2 (launcher)');
    expect(await textWith(row('demo-mcp'), 'closed')).toContain('closed');
    await expect(row('studio-mcp').getAttribute('data-status')).resolves.toBe('healthy');
    // an inventory service this gateway does not poll says why
    expect(await textWith(row('alpha-mcp'), 'not in this gateway')).toContain('not in this gateway');
    expect(await textWith(row('memory-mcp'), 'not built yet')).toContain('not built yet');
    const server = page.locator('#mcp-servers tr[data-server="studio-mcp"]');
    expect(await textWith(server, 'stdio')).toContain('stdio');
    expect(await textWith(server, '2025 (initialize, sessions)')).toContain('2025 (initialize, sessions)');
    await axeCheck(page, 'fleet');
    await shot(page, 'fleet');
  }, 60_000);

  it('finds a tool, stops a bad input at the form, shows the service refusing it, and runs a good one', async () => {
    await page.getByRole('link', { name: 'Catalog' }).click();
    await page.getByLabel('Search tools, prompts and resources').fill('plan');
    await page.locator('#catalog-count', { hasText: '1 tools, 0 prompts, 0 resources match “plan”' }).waitFor();
    await expect(page.locator('#tool-list li').evaluateAll((lis) => lis.map((li: any) => li.dataset.tool))).resolves.toEqual(['plan_trip']);
    await axeCheck(page, 'catalog');
    await page.getByRole('link', { name: 'plan_trip' }).click();
    await page.getByRole('heading', { level: 1, name: 'plan_trip' }).waitFor();
    await axeCheck(page, 'tool form');

    // bad: no city, 30 days, an empty stop; the form says so at each field and nothing is sent
    await page.getByLabel(/^days/).fill('30');
    await page.getByRole('button', { name: 'Add stops item' }).click();
    await page.getByRole('button', { name: 'Run' }).click();
    await page.locator('#error-summary').waitFor();
    expect(await textWith(page.locator('[data-path="city"] .field-error'), 'is required')).toContain('is required');
    expect(await textWith(page.locator('[data-path="days"] .field-error'), 'at most 14')).toContain('at most 14');
    expect(await textWith(page.locator('[data-path="stops[0]"] .field-error'), 'is empty')).toContain('is empty');
    await expect(page.getByLabel(/^days/).getAttribute('aria-invalid')).resolves.toBe('true');
    expect(calls.plan).toBe(0);
    await axeCheck(page, 'tool form with errors');
    await shot(page, 'tool-bad-input');

    // the same bad days sent anyway: the service's own check refuses it, shown as the result
    await page.getByRole('button', { name: 'Remove stops item 1' }).click();
    await page.getByLabel(/^city/).fill('Lisbon');
    await page.getByLabel('Check the arguments against the schema before sending').uncheck();
    await page.getByRole('button', { name: 'Run' }).click();
    await page.locator('#result .result[data-outcome="VALIDATION_ERROR"]').waitFor();
    expect(await textWith(page.locator('#result'), 'HTTP 400')).toContain('HTTP 400');
    expect(calls.plan).toBe(0);

    // good: every kind of field, a secret among them
    await page.getByLabel('Check the arguments against the schema before sending').check();
    await page.getByLabel(/^days/).fill('5');
    await page.getByLabel(/^travel/).selectOption({ label: 'train' });
    await page.getByRole('button', { name: 'Add stops item' }).click();
    await page.getByLabel('stops item 1').fill('Porto');
    await page.getByLabel(/^amount/).fill('800');
    await page.getByLabel(/^currency/).selectOption({ label: 'EUR' });
    await page.getByLabel(/^accessible/).selectOption({ label: 'true' });
    await page.getByLabel(/^password/).fill('hunter2');
    // a secret's field hides what is typed
    await expect(page.getByLabel(/^password/).getAttribute('type')).resolves.toBe('password');
    await page.getByLabel('Context id optional').fill('holiday');
    await page.getByRole('button', { name: 'Run' }).click();
    const ok = page.locator('#result .result[data-outcome="ok"]');
    await ok.waitFor();
    expect(calls.plan).toBe(1);
    const text = (await ok.textContent())!;
    expect(text).toContain('5 days in Lisbon by train');
    expect(text).toContain('demo-mcp');
    traceId = /Trace id([0-9a-f]{32})/.exec(text)![1];
    expect(text).toMatch(/ms at the gateway/);
    await axeCheck(page, 'tool result');
    await shot(page, 'tool-result');
  }, 90_000);

  it('shows images and audio from an MCP server, gets a prompt and reads a resource', async () => {
    await page.goto(`${gateway.url}/console/#/catalog/tool/draw_stripes`);
    await page.getByLabel(/^width/).fill('96');
    await page.getByLabel(/^height/).fill('48');
    await page.getByRole('button', { name: 'Run' }).click();
    const img = page.locator('#result img');
    await img.waitFor();
    await expect(img.evaluate((el: any) => [el.naturalWidth, el.naturalHeight])).resolves.toEqual([96, 48]);
    await expect(img.getAttribute('alt')).resolves.toContain('image/png');
    await axeCheck(page, 'image result');
    await shot(page, 'image-result');

    await page.goto(`${gateway.url}/console/#/catalog/tool/play_tone`);
    await page.getByLabel(/^hz/).fill('440');
    await page.getByRole('button', { name: 'Run' }).click();
    const audio = page.locator('#result audio');
    await audio.waitFor();
    await expect(
      audio.evaluate(
        (el: any) =>
          new Promise((resolve) => (el.readyState >= 1 ? resolve(el.duration) : (el.onloadedmetadata = () => resolve(el.duration)))),
      ),
    ).resolves.toBeCloseTo(0.3, 1);

    await page.goto(`${gateway.url}/console/#/catalog/prompt/greet`);
    await page.getByLabel(/^name/).fill('Ada');
    await page.getByRole('button', { name: 'Get prompt' }).click();
    await page.locator('#result', { hasText: 'Say hello to Ada.' }).waitFor();
    await axeCheck(page, 'prompt');

    await page.goto(`${gateway.url}/console/#/catalog/resource/${encodeURIComponent('note://welcome')}`);
    await page.getByRole('button', { name: 'Read' }).click();
    await page.locator('#result', { hasText: 'Welcome to the fleet.' }).waitFor();
    await axeCheck(page, 'resource');
  }, 60_000);

  it('finds the calls in the history, by session and context, with the secret redacted', async () => {
    await page.getByRole('link', { name: 'History' }).click();
    const row = page.locator('#sessions tr[data-session="console"]');
    await row.waitFor();
    await axeCheck(page, 'history sessions');
    await row.getByRole('link', { name: 'console' }).click();
    await page.getByRole('heading', { level: 1, name: 'Session console' }).waitFor();
    const plan = page.locator('#calls li[data-tool="plan_trip"]');
    await plan.nth(1).waitFor();
    await expect(plan.count()).resolves.toBe(2);
    await page.getByLabel('Outcome').selectOption('error');
    await expect(page.locator('#calls li').evaluateAll((lis) => lis.map((li: any) => li.dataset.outcome))).resolves.toEqual([
      'VALIDATION_ERROR',
    ]);
    await page.getByLabel('Outcome').selectOption('');
    // the context set for plan_trip stayed set for the calls after it (the catalog keeps it until changed)
    await page.getByLabel('Context').selectOption('holiday');
    await expect(page.locator('#calls li').evaluateAll((lis) => lis.map((li: any) => li.dataset.tool))).resolves.toEqual([
      'play_tone',
      'draw_stripes',
      'plan_trip',
    ]);
    const call = page.locator('#calls li[data-tool="plan_trip"][data-outcome="ok"]');
    await call.locator('summary').click();
    const args = (await call.getByLabel('Arguments of plan_trip').textContent())!;
    expect(args).toContain('"city": "Lisbon"');
    expect(args).toContain('"password": "[redacted]"');
    expect(args).not.toContain('hunter2');
    // the call's result, as the history recorded it
    const result = (await call.getByLabel('Result of plan_trip').textContent())!;
    expect(result).toContain('"itinerary": "5 days in Lisbon by train"');
    expect(result).toContain('"Porto"');
    // the refused call keeps the service's refusal
    await page.getByLabel('Context').selectOption('*');
    const refused = page.locator('#calls li[data-tool="plan_trip"][data-outcome="VALIDATION_ERROR"]');
    await refused.locator('summary').click();
    await expect(refused.locator('.error-text').textContent()).resolves.toMatch(/^VALIDATION_ERROR: .*days/);
    // a small image is kept whole and shown again (a large one is kept as a note of its size: console-history.test.ts)
    const image = page.locator('#calls li[data-tool="draw_stripes"]');
    await image.locator('summary').click();
    await expect(image.locator('img').evaluate((el: any) => [el.naturalWidth, el.naturalHeight])).resolves.toEqual([96, 48]);
    await axeCheck(page, 'history session');
    await shot(page, 'history');
  }, 60_000);

  it('creates a key with scopes, shows it once, revokes it, and the gateway refuses it after', async () => {
    await page.getByRole('link', { name: 'Access' }).click();
    await page.locator('#key-table tr[data-key="reader"]').waitFor();
    expect(await textWith(page.locator('#vs-title'), 'Virtual servers')).toBe('Virtual servers');
    await page.locator('#audit-table tr[data-tool="plan_trip"]').first().waitFor();
    await axeCheck(page, 'access');
    await page.getByLabel('Name required').fill('ci-bot');
    await page.getByLabel(/tools:read/).check();
    await page.getByLabel('Service scopes optional').fill('service:demo-mcp:read');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#key-table tr[data-key="ci-bot"]').waitFor();
    createdKey = await page.getByLabel('The new key').inputValue();
    expect(createdKey).toMatch(/^mcpf_/);
    expect(await textWith(page.locator('#key-table tr[data-key="ci-bot"]'), 'tools:read, service:demo-mcp:read')).toContain(
      'tools:read, service:demo-mcp:read',
    );
    await axeCheck(page, 'access with a new key');
    await shot(page, 'access');
    // the new key works at once, on the gateway's own routes
    const listed = await fetch(`${gateway.url}/tools/list`, { headers: { authorization: `Bearer ${createdKey}` } });
    expect(listed.status).toBe(200);
    const stored = JSON.parse(fs.readFileSync(keysFile, 'utf8')) as { name: string; hash: string }[];
    expect(stored.map((k) => k.name)).toEqual(['ops', 'reader', 'ci-bot']);
    expect(JSON.stringify(stored)).not.toContain(createdKey);
    expect(fs.statSync(keysFile).mode & 0o777).toBe(0o600);

    await page.getByRole('button', { name: 'Revoke ci-bot' }).click();
    await page.getByRole('button', { name: 'Yes, revoke ci-bot' }).click();
    await page.locator('#key-table tr[data-key="ci-bot"]').waitFor({ state: 'detached' });
    await page.locator('#status', { hasText: 'Key ci-bot revoked' }).waitFor();
    const refused = await fetch(`${gateway.url}/tools/list`, { headers: { authorization: `Bearer ${createdKey}` } });
    expect(refused.status).toBe(401);
    // the last admin key stays
    await page.getByRole('button', { name: 'Revoke ops' }).click();
    await page.getByRole('button', { name: 'Yes, revoke ops' }).click();
    await page.locator('#status', { hasText: 'last key with the admin scope' }).waitFor();
    expect(JSON.parse(fs.readFileSync(keysFile, 'utf8')).map((k: { name: string }) => k.name)).toEqual(['ops', 'reader']);
  }, 60_000);

  it('creates a virtual server from the catalog, edits it, shows the errors at their fields, and removes it', async () => {
    const adminGet = (name: string) => fetch(`${gateway.url}/admin/servers/${name}`, { headers: { authorization: `Bearer ${admin.key}` } });
    await page.getByRole('link', { name: 'Fleet', exact: true }).click();
    await page.getByRole('link', { name: 'Access' }).click();
    await page.getByRole('button', { name: 'New virtual server' }).click();
    await page.getByLabel('Server name required').fill('Trips!');
    await page.getByLabel('Filter tools').fill('plan');
    await page.getByLabel('plan_trip').check();
    await page.getByRole('button', { name: 'Create server' }).click();
    // the admin API's refusal, at the field it is about
    await page.locator('#server-name-error', { hasText: 'is not a server name' }).waitFor();
    await expect(page.getByLabel('Server name required').getAttribute('aria-invalid')).resolves.toBe('true');
    await axeCheck(page, 'virtual server form with an error');
    await shot(page, 'access-server-error');

    await page.getByLabel('Server name required').fill('trips');
    await page.getByLabel('Description optional').fill('What the trip planner may use.');
    await page.getByRole('button', { name: 'Create server' }).click();
    const row = page.locator('#server-table tr[data-server="trips"]');
    await row.waitFor();
    expect(await textWith(row, '/servers/trips/mcp')).toContain('/servers/trips/mcp');
    await page.locator('#status', { hasText: 'Virtual server trips created' }).waitFor();
    let def = (await (await adminGet('trips')).json()) as { definition: Record<string, unknown>; tools: string[] };
    expect(def.definition).toEqual({ description: 'What the trip planner may use.', discovery: 'full', tools: [{ tool: 'plan_trip' }] });
    expect(def.tools).toEqual(['plan_trip']);
    expect(fs.readFileSync(path.join(dataDir, 'gateway', 'virtual-servers.yaml'), 'utf8')).toContain('trips');

    // edit: another tool, meta discovery; a description over the admin API's limit is refused at its field
    await page.getByRole('button', { name: 'Edit trips' }).click();
    await expect(page.getByLabel('Server name required').getAttribute('readonly')).resolves.toBe('');
    await expect(page.getByLabel('plan_trip').isChecked()).resolves.toBe(true);
    await page.getByLabel('draw_stripes').check();
    await page.getByLabel('Discovery').selectOption('meta');
    await page.getByLabel('Description optional').fill('x'.repeat(2001));
    await page.getByRole('button', { name: 'Save server' }).click();
    await page.locator('#server-description-error', { hasText: 'description' }).waitFor();
    await expect(page.getByLabel('Description optional').getAttribute('aria-invalid')).resolves.toBe('true');
    await page.getByLabel('Description optional').fill('Plans and draws.');
    await page.getByRole('button', { name: 'Save server' }).click();
    await page.locator('#status', { hasText: 'Virtual server trips saved' }).waitFor();
    expect(await textWith(row, 'meta')).toContain('meta');
    def = (await (await adminGet('trips')).json()) as typeof def;
    expect(def.definition).toEqual({
      description: 'Plans and draws.',
      discovery: 'meta',
      tools: [{ tool: 'draw_stripes' }, { tool: 'plan_trip' }],
    });
    await axeCheck(page, 'access with a virtual server');
    await shot(page, 'access-servers');

    // a write without the console's CSRF token is refused, the same write with it is not
    const forged = await page.evaluate(async () => (await fetch('/console/api/servers/trips', { method: 'DELETE' })).status);
    expect(forged).toBe(403);
    await page.getByRole('button', { name: 'Remove trips' }).click();
    await page.getByRole('button', { name: 'Yes, remove trips' }).click();
    await row.waitFor({ state: 'detached' });
    await page.locator('#status', { hasText: 'Virtual server trips removed' }).waitFor();
    expect((await adminGet('trips')).status).toBe(404);
  }, 60_000);

  it("follows a service's log live", async () => {
    await page.goto(`${gateway.url}/console/#/logs/demo-mcp`);
    await page.locator('#log-lines li').first().waitFor();
    expect(await textWith(page.locator('#log-lines'), 'demo-mcp listening')).toContain('demo-mcp listening');
    // the trace id the console showed for the call is the one the service logged it under
    await page.locator('#log-lines li', { hasText: traceId }).first().waitFor();
    await axeCheck(page, 'logs');
    demoLog.warn('disk almost full', { freeBytes: 1234 });
    await page.locator('#log-lines li[data-level="warn"]', { hasText: 'disk almost full' }).waitFor({ timeout: 5000 });
    await page.getByLabel('Level').selectOption('warn');
    await expect(page.locator('#log-lines li').evaluateAll((lis) => lis.map((li: any) => li.dataset.level))).resolves.toEqual(['warn']);
    await shot(page, 'logs');
  }, 60_000);

  it('works at phone width with the keyboard alone', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(`${gateway.url}/console/#/catalog/tool/plan_trip`);
    await phone.getByRole('heading', { level: 1, name: 'plan_trip' }).waitFor();
    const overflow = await phone.evaluate(() => {
      const d = (globalThis as any).document.documentElement;
      return d.scrollWidth - d.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
    await axeCheck(phone, 'tool form at phone width');
    // keyboard only: type, Tab to the next field, Enter submits
    await phone.getByLabel(/^city/).focus();
    await phone.keyboard.type('Faro');
    await phone.keyboard.press('Tab');
    await phone.keyboard.type('2');
    await phone.keyboard.press('Enter');
    await phone.locator('#result .result[data-outcome="ok"]').waitFor();
    await shot(phone, 'phone-tool-result');
    await phone.goto(`${gateway.url}/console/#/fleet`);
    await phone.locator('#services').waitFor();
    await axeCheck(phone, 'fleet at phone width');
    await shot(phone, 'phone-fleet');
    await phone.close();
  }, 60_000);

  it('shows a key without the admin scope no access or logs, and its own history only', async () => {
    const other = await browser.newContext();
    watchCsp(other);
    const p = await other.newPage();
    await p.goto(`${gateway.url}/console/`);
    await p.getByLabel('API key or access token').fill(reader.key);
    await p.getByRole('button', { name: 'Log in' }).click();
    await p.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
    await expect(p.getByRole('link', { name: 'Access' }).count()).resolves.toBe(0);
    await expect(p.getByRole('link', { name: 'Logs' }).count()).resolves.toBe(0);
    await p.goto(`${gateway.url}/console/#/history`);
    await p.locator('main', { hasText: 'No calls recorded for you yet' }).waitFor();
    const keys = await p.evaluate(async () => (await fetch('/console/api/keys')).status);
    expect(keys).toBe(403);
    await p.getByRole('button', { name: 'Log out' }).click();
    await p.getByLabel('API key or access token').waitFor();
    await other.close();
  }, 60_000);

  it('opens without a login when authorization is off, as every route on loopback, with no admin pages', async () => {
    const open = await startGateway([{ id: 'demo-mcp', url: demo.url, tools: ['plan_trip'] }], path.join(tmp.dir, 'open-data'));
    try {
      const p = await context.newPage();
      await p.goto(`${open.url}/console/`);
      await p.getByRole('heading', { level: 1, name: 'Fleet' }).waitFor();
      await p.locator('#who', { hasText: 'Authorization off' }).waitFor();
      await expect(p.getByRole('link', { name: 'Access' }).count()).resolves.toBe(0);
      await p.goto(`${open.url}/console/#/catalog/tool/plan_trip`);
      await p.getByLabel(/^city/).fill('Braga');
      await p.getByLabel(/^days/).fill('1');
      await p.getByRole('button', { name: 'Run' }).click();
      await p.locator('#result .result[data-outcome="ok"]').waitFor();
      await axeCheck(p, 'authorization off');
      await p.close();
    } finally {
      await open.stop();
    }
    expect(cspViolations).toEqual([]);
  }, 60_000);
});
