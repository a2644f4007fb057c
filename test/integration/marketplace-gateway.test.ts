/**
 * The gateway in front of a marketplace with JWT on: security-mcp's jwt_token mints the token, the
 * gateway sends it (MARKETPLACE_JWT_TOKEN) when it polls and calls the marketplace, and without it
 * the marketplace's tools stay out of the catalog.
 */
import path from 'node:path';
import request from 'supertest';
import { getService } from '@mcp-fleet/inventory';
import { serve } from '@mcp-fleet/testing';
import { defaultDownstreams } from '../../services/mega-orchestrator/src/core/config';
import { startGateway, type RunningGateway } from '../../services/mega-orchestrator/test/helpers';
import { securedMarketplace } from '../support/secured-marketplace';

const JWT_SECRET = 'gateway-marketplace-secret-0123456789abcdef';
const ADMIN = 'security-admin-credential-01';
const { tmp, security, market } = securedMarketplace('market-gateway-', JWT_SECRET, ADMIN);
let marketServer: Awaited<ReturnType<typeof serve>>;
const gateways: RunningGateway[] = [];

async function mint(scope: string): Promise<string> {
  const res = await request(security.app)
    .post('/tools/jwt_token')
    .set('authorization', `Bearer ${ADMIN}`)
    .send({ subject: 'gateway', scope })
    .expect(200);
  return res.body.result.token;
}

async function gatewayWith(env: Record<string, string>) {
  const specs = defaultDownstreams({ MARKETPLACE_MCP_URL: marketServer.url, ...env }, [getService('marketplace-mcp')!]);
  const g = await startGateway(specs, path.join(tmp.dir, `gw-${gateways.length}`));
  gateways.push(g);
  return g;
}

beforeAll(async () => {
  await market.ready;
  marketServer = await serve(market.app);
});
afterAll(async () => {
  for (const g of gateways) await g.stop();
  await marketServer.stop();
  await market.close();
  tmp.cleanup();
});

describe('gateway -> marketplace with JWT on', () => {
  it('sends MARKETPLACE_JWT_TOKEN: the marketplace tools are listed and callable through the gateway', async () => {
    const token = await mint('market:read');
    const g = await gatewayWith({ MARKETPLACE_JWT_TOKEN: token });
    const tools = await request(g.url).get('/tools/list').expect(200);
    expect(tools.body.tools.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['skills_list', 'skills_resolve', 'registry_search', 'registry_get_server', 'catalog_validate']),
    );
    const res = await request(g.url)
      .post('/mcp')
      .send({ tool: 'skills_resolve', arguments: { name: 'sql-review' } })
      .expect(200);
    expect(res.body).toMatchObject({ success: true, service: 'marketplace-mcp', result: { name: 'sql-review', version: '0.3.0' } });
  });

  it('without the token the marketplace answers 401 and its tools stay out of the catalog', async () => {
    const direct = await request(marketServer.url).get('/tools/list').expect(401);
    expect(direct.headers['www-authenticate']).toContain('Bearer');
    const g = await gatewayWith({});
    const tools = await request(g.url).get('/tools/list').expect(200);
    expect(tools.body.tools.map((t: { name: string }) => t.name)).not.toContain('skills_list');
  });

  it('a token without market:read is refused by the marketplace (403), so the gateway lists nothing from it', async () => {
    const g = await gatewayWith({ MARKETPLACE_JWT_TOKEN: await mint('other:scope') });
    const tools = await request(g.url).get('/tools/list').expect(200);
    expect(tools.body.tools.map((t: { name: string }) => t.name)).not.toContain('skills_list');
  });
});
