/**
 * An MCP client in a browser page (Chromium) calling the gateway across origins: a page of an origin
 * in ALLOWED_ORIGINS runs the MCP handshake and lists the tools with fetch (the preflight granted, the
 * session header readable); a local page that is not listed, which the Host/Origin rule lets in, is
 * still kept from the answers by its browser (no grant). The headers themselves:
 * services/mega-orchestrator/test/cors.test.ts.
 */
import http from 'node:http';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { describeWithProgram, freePort, tempDir } from '@mcp-fleet/testing';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'];

/** What the page's MCP client does: initialize, initialized, tools/list; the outcome as text (a refused fetch throws TypeError). */
async function mcpFromPage(gateway: string): Promise<{ ok: boolean; session?: string; tools?: number; error?: string }> {
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
  try {
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
    });
    const session = init.headers.get('mcp-session-id') ?? undefined;
    await init.json();
    const headers: Record<string, string> = { 'mcp-protocol-version': '2025-11-25', ...(session ? { 'mcp-session-id': session } : {}) };
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    const list = (await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers)).json()) as { result?: { tools: unknown[] } };
    return { ok: true, session, tools: list.result?.tools.length };
  } catch (err) {
    return { ok: false, error: String(err) };
  }
}

describeWithProgram('chromium', 'chromium', 'an MCP client in a browser page of another origin', () => {
  const tmp = tempDir('mcp-fleet-browser-cors-');
  let gateway: RunningGateway;
  let browser: Browser;
  const pages: http.Server[] = [];
  let listed = '';
  let unlisted = '';

  const pageServer = async (): Promise<number> => {
    const port = await freePort();
    const server = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>client</title>'),
    );
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    pages.push(server);
    return port;
  };

  beforeAll(async () => {
    listed = `http://127.0.0.1:${await pageServer()}`;
    unlisted = `http://localhost:${await pageServer()}`;
    gateway = await startGateway([], path.join(tmp.dir, 'gw'), { ALLOWED_ORIGINS: listed, HEALTH_POLL_MS: '600000' });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    for (const s of pages) s.close();
    tmp.cleanup();
  });

  const runFrom = async (origin: string) => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${origin}/`);
      return await page.evaluate(mcpFromPage, gateway.url);
    } finally {
      await context.close();
    }
  };

  it('a page of a listed origin initializes, reads its session header and lists the tools', async () => {
    const out = await runFrom(listed);
    expect(out).toMatchObject({ ok: true, session: expect.stringMatching(/\S/) });
    // the answer to tools/list was read (this gateway has no services: its catalog is empty)
    expect(out.tools).toBe(0);
  }, 30_000);

  it('a local page that is not listed gets nothing: its browser refuses the answer', async () => {
    const out = await runFrom(unlisted);
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/TypeError/);
  }, 30_000);
});
