import { createServiceApp, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { openConnection, SchemaCache } from '@mcp-fleet/sql';
import { SERVICE_ID, type Config } from './config';
import { createTools } from './tools';

export interface SqlWrapperDeps {
  config: Config;
  logger: Logger;
}

/** Opens the one read-only connection (PostgreSQL, or the SQLite sandbox, created empty when missing) and builds the app. */
export async function createApp({ config, logger }: SqlWrapperDeps): Promise<ServiceApp> {
  const connection = await openConnection(config.connection, {
    logger,
    applicationName: SERVICE_ID,
    createIfMissing: true,
    allowPrivilegedRole: config.SQL_READONLY_ALLOW_PRIVILEGED_ROLE,
    optOutVariable: 'SQL_READONLY_ALLOW_PRIVILEGED_ROLE',
    limits: {
      maxRows: 500,
      maxRowsCeiling: 500,
      statementTimeoutMs: config.SQL_STATEMENT_TIMEOUT_MS,
      statementTimeoutCeilingMs: config.SQL_STATEMENT_TIMEOUT_MS,
      maxBytes: config.SQL_MAX_RESULT_BYTES,
    },
  });
  logger.info('sql connection', { ...connection.info });
  const schemaCache = new SchemaCache(connection, config.SQL_SCHEMA_CACHE_MS);
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ config, connection, schemaCache }),
    healthChecks: [
      {
        name: `database:${connection.info.name}`,
        required: true,
        timeoutMs: 3000,
        check: async () => ({ engine: connection.info.engine, target: connection.info.target, ...(await connection.ping()) }),
      },
    ],
    onClose: () => connection.close(),
  });
}
