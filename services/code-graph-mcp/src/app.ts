import path from 'node:path';
import { createServiceApp, secretFilesFrom, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { SERVICE_ID, type Config } from './config';
import { GraphStore } from './store';
import { createTools } from './tools';

export interface CodeGraphDeps {
  config: Config;
  logger: Logger;
  defaultMetrics?: boolean;
}

export async function createApp({ config, logger, defaultMetrics = true }: CodeGraphDeps): Promise<ServiceApp> {
  const ws = await Workspace.open(config.WORKSPACE_ROOTS, secretFilesFrom(config, logger));
  const store = await GraphStore.open(path.join(config.DATA_DIR, 'code-graph', 'graphs.sqlite'));
  logger.info('code graph store open', { file: store.db.file, roots: ws.roots });
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ ws, store, limits: { maxFiles: config.CODE_GRAPH_MAX_FILES, maxFileBytes: config.CODE_GRAPH_MAX_FILE_BYTES } }),
    defaultMetrics,
    healthChecks: [{ name: 'sqlite', check: async () => ({ projects: (await store.projects()).length }) }],
    onClose: () => store.close(),
  });
}
