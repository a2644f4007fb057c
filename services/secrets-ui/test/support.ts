import fs from 'node:fs';
import path from 'node:path';
import { captureLogger, tempDir, testEnv } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { readConfig } from '../src/config';

export const ADMIN = 'admin-token-for-tests-0123456789';

/** A secrets-ui app on a fresh DATA_DIR with the file store, and the lines it logged. */
export function makeApp(env: Record<string, string> = {}) {
  const tmp = tempDir('secrets-ui-');
  const { logger, lines } = captureLogger('secrets-ui');
  const config = readConfig(testEnv({ DATA_DIR: tmp.dir, SECRETS_UI_ADMIN_TOKEN: ADMIN, ...env }));
  const service = createApp({ config, logger, defaultMetrics: false });
  return {
    ...service,
    config,
    dir: tmp.dir,
    lines,
    exportFile: (id: string) => path.join(tmp.dir, 'secrets-ui', 'env', `${id}.env`),
    storeFile: (id: string) => path.join(tmp.dir, 'secrets-ui', 'store', `${id}.enc.json`),
    auditLines: () =>
      fs
        .readFileSync(path.join(tmp.dir, 'secrets-ui', 'audit.log'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    cleanup: async () => {
      await service.close();
      tmp.cleanup();
    },
  };
}
