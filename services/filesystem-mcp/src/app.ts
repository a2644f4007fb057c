import fs from 'node:fs/promises';
import { constants } from 'node:fs';
import { createServiceApp, secretFilesFrom, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { bodyLimitBytes, SERVICE_ID, type Config } from './config';
import type { FsLimits } from './lib/context';
import { createTools } from './tools';

export interface FilesystemDeps {
  config: Config;
  logger: Logger;
  /** Process-level default metrics (tests that build several apps turn them off). */
  defaultMetrics?: boolean;
}

export function limitsFrom(config: Config): FsLimits {
  return {
    maxReadBytes: config.FILE_MAX_READ_BYTES,
    maxWriteBytes: Math.min(config.FILE_MAX_WRITE_BYTES, bodyLimitBytes(config.BODY_LIMIT)),
    listMaxEntries: config.FILE_LIST_MAX_ENTRIES,
    searchMaxFiles: config.FILE_SEARCH_MAX_FILES,
    searchMaxFileBytes: config.FILE_SEARCH_MAX_FILE_BYTES,
    // Walks stop themselves (truncated: true) before the kit's per-call TIMEOUT would cut them off.
    searchTimeoutMs: Math.min(config.FILE_SEARCH_TIMEOUT_MS, Math.max(100, config.TOOL_TIMEOUT_MS - 1000)),
    analyzeMaxEntries: config.FILE_ANALYZE_MAX_ENTRIES,
    analyzeMaxBytes: config.FILE_ANALYZE_MAX_BYTES,
  };
}

export async function createApp({ config, logger, defaultMetrics = true }: FilesystemDeps): Promise<ServiceApp> {
  const ws = await Workspace.open(config.WORKSPACE_ROOTS, secretFilesFrom(config, logger));
  const limits = limitsFrom(config);
  if (limits.maxWriteBytes < config.FILE_MAX_WRITE_BYTES) {
    logger.warn('FILE_MAX_WRITE_BYTES is above BODY_LIMIT; writes are capped at the body limit', {
      FILE_MAX_WRITE_BYTES: config.FILE_MAX_WRITE_BYTES,
      BODY_LIMIT: config.BODY_LIMIT,
    });
  }
  logger.info('workspace roots', { roots: ws.roots });
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ ws, limits }),
    defaultMetrics,
    healthChecks: [
      {
        name: 'workspace',
        check: async () => {
          for (const root of ws.roots) await fs.access(root, constants.R_OK | constants.X_OK);
          return { roots: ws.roots.length };
        },
      },
    ],
    routes: (r) => {
      // "/files", "/files/" and "/files/<path>": the bare forms list the first root.
      r.tool('get', '/files{/*path}', 'file_list');
      r.tool('get', '/file/*path', 'file_read');
      r.tool('post', '/file/write', 'file_write');
      r.tool('get', '/search/files', 'file_search');
      r.tool('get', '/analyze{/*path}', 'file_analyze');
    },
  });
}
