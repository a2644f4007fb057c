/** Regression: GET /providers said the marketplace was not configured while the fleet's marketplace-mcp ran. */
import type { RunningServer } from '@mcp-fleet/kit';
import { serve, tempDir } from '@mcp-fleet/testing';
import { readConfig } from '../src/core/config';
import { Providers } from '../src/downstream/providers';

describe('/providers: the marketplace', () => {
  const tmp = tempDir('providers-');
  let market: RunningServer;
  beforeAll(async () => {
    // stands in for marketplace-mcp on the port the launcher gives it (MARKETPLACE_MCP_PORT)
    market = await serve((_req, res) => res.end('{}'));
  });
  afterAll(async () => {
    await market.stop();
    tmp.cleanup();
  });

  const marketplace = async (env: Record<string, string>) => {
    const config = readConfig({ DATA_DIR: tmp.dir, STDIO_SERVERS: 'false', PROVIDER_PROBE_TTL_MS: '0', ...env });
    const report = await new Providers(config).report();
    return report.providers.find((p) => p.id === 'marketplace')!;
  };

  it("is the fleet's marketplace-mcp, configured and reachable, when MARKETPLACE_URL is unset", async () => {
    expect(await marketplace({ MARKETPLACE_MCP_PORT: String(market.port) })).toMatchObject({
      configured: true,
      reachable: true,
      url: `http://127.0.0.1:${market.port}`,
    });
    // MARKETPLACE_MCP_URL moves it as it moves the gateway's downstream
    expect(await marketplace({ MARKETPLACE_MCP_URL: market.url })).toMatchObject({ configured: true, reachable: true, url: market.url });
  });

  it('is configured but unreachable when marketplace-mcp is not running, and MARKETPLACE_URL wins', async () => {
    const closed = await serve((_req, res) => res.end());
    await closed.stop();
    expect(await marketplace({ MARKETPLACE_MCP_PORT: String(closed.port) })).toMatchObject({ configured: true, reachable: false });
    expect(await marketplace({ MARKETPLACE_MCP_PORT: String(closed.port), MARKETPLACE_URL: market.url })).toMatchObject({
      configured: true,
      reachable: true,
      url: market.url,
    });
  });

  it('is not configured when the gateway does not poll marketplace-mcp (FLEET_SERVICES without it) and no URL is set', async () => {
    expect(await marketplace({ FLEET_SERVICES: 'system-mcp' })).toMatchObject({ configured: false, reachable: null });
  });
});
