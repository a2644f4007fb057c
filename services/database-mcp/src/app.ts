import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { ConnectionRegistry } from '@mcp-fleet/sql';
import { SANDBOX, SERVICE_ID, type Config } from './config';
import { createTools } from './tools';

export interface DatabaseDeps {
  config: Config;
  logger: Logger;
}

/** Opens the named connections (the sandbox file is created under DATA_DIR) and builds the app. */
export async function createApp({ config, logger }: DatabaseDeps): Promise<ServiceApp> {
  const registry = await ConnectionRegistry.open(
    config.connections.map((c) => ({ ...c, poolMax: c.poolMax ?? config.DB_POOL_MAX })),
    {
      logger,
      applicationName: SERVICE_ID,
      allowPrivilegedRole: config.DB_READONLY_ALLOW_PRIVILEGED_ROLE,
      optOutVariable: 'DB_READONLY_ALLOW_PRIVILEGED_ROLE',
      limits: {
        maxRows: config.DB_MAX_ROWS,
        maxRowsCeiling: config.DB_MAX_ROWS,
        statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
        statementTimeoutCeilingMs: config.DB_STATEMENT_TIMEOUT_MS,
        maxBytes: config.DB_MAX_RESULT_BYTES,
      },
    },
  );
  for (const c of registry.all()) logger.info('database connection', { ...c.info });
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ config, registry }),
    // The sandbox is required; an unreachable external database only makes the service "degraded".
    healthChecks: registry.all().map((c) => ({
      name: `database:${c.info.name}`,
      required: c.info.name === SANDBOX,
      timeoutMs: 3000,
      check: async () => ({ engine: c.info.engine, writable: c.info.writable, target: c.info.target, ...(await c.ping()) }),
    })),
    routes: (r) => {
      r.tool('post', '/db/execute', 'db_query');
      r.tool('get', '/db/tables', 'db_tables');
      r.tool('get', '/db/schema', 'db_schema');
      r.tool('get', '/db/schema/:table_name', 'db_schema');
      r.tool('get', '/db/sample/:table_name', 'db_sample');
    },
    onClose: () => registry.close(),
  });
}
