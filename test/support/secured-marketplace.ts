/**
 * security-mcp and marketplace-mcp built in-process on one JWT secret, as a JWT-on deployment runs
 * them: tokens from security-mcp's jwt_token are what the marketplace accepts.
 */
import path from 'node:path';
import request from 'supertest';
import { getService } from '@mcp-fleet/inventory';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { defaultDownstreams } from '../../services/mega-orchestrator/src/core/config';
import type { DownstreamSpec } from '../../services/mega-orchestrator/src/core/types';
import { createApp as createMarketplace } from '../../services/marketplace-mcp/src/app';
import { configSchema as marketplaceConfig } from '../../services/marketplace-mcp/src/config';
import { createApp as createSecurity } from '../../services/security-mcp/src/app';
import { configSchema as securityConfig } from '../../services/security-mcp/src/config';

export function securedMarketplace(prefix: string, jwtSecret: string, adminToken: string) {
  const tmp = tempDir(prefix);
  const security = createSecurity({
    config: securityConfig.parse({ ...testConfig, DATA_DIR: tmp.dir, JWT_SECRET: jwtSecret, SECURITY_ADMIN_TOKEN: adminToken }),
    logger: testLogger(),
    defaultMetrics: false,
  });
  const market = createMarketplace({
    config: marketplaceConfig.parse({ ...testConfig, DATA_DIR: path.join(tmp.dir, 'market'), JWT_SECRET: jwtSecret }),
    logger: testLogger(),
    defaultMetrics: false,
  });
  return { tmp, security, market };
}

/**
 * A market:read token from security-mcp's jwt_token, and the gateway's downstream for the
 * marketplace at `url` as the gateway declares it (sending the token, MARKETPLACE_JWT_TOKEN).
 */
export async function marketplaceDownstream(
  security: ReturnType<typeof securedMarketplace>['security'],
  adminToken: string,
  url: string,
): Promise<{ token: string; specs: DownstreamSpec[] }> {
  const token = (
    await request(security.app)
      .post('/tools/jwt_token')
      .set('authorization', `Bearer ${adminToken}`)
      .send({ subject: 'gateway', scope: 'market:read' })
      .expect(200)
  ).body.result.token as string;
  return { token, specs: defaultDownstreams({ MARKETPLACE_MCP_URL: url, MARKETPLACE_JWT_TOKEN: token }, [getService('marketplace-mcp')!]) };
}
