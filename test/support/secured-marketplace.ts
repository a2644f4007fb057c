/**
 * security-mcp and marketplace-mcp built in-process on one JWT secret, as a JWT-on deployment runs
 * them: tokens from security-mcp's jwt_token are what the marketplace accepts.
 */
import path from 'node:path';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
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
