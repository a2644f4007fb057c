import fs from 'node:fs';
import path from 'node:path';
import { type Env } from '@mcp-fleet/kit';
import { tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../src/app';
import { configSchema } from '../src/config';

/** A config-mcp app over a fresh workspace and data directory. */
export function makeApp(options: { env?: Env; environment?: Env } = {}) {
  const tmp = tempDir('config-mcp-');
  const workspace = path.join(tmp.dir, 'ws');
  const dataDir = path.join(tmp.dir, 'data');
  fs.mkdirSync(workspace);
  const config = configSchema.parse({
    ...testConfig,
    DATA_DIR: dataDir,
    WORKSPACE_ROOTS: workspace,
    VALIDATE_TIMEOUT_MS: '1500',
    ...options.env,
  });
  const service = createApp({ config, logger: testLogger(), environment: options.environment ?? {} });
  const write = (rel: string, text: string) => {
    const file = path.join(workspace, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return file;
  };
  return {
    app: service.app,
    workspace,
    dataDir,
    tmp: tmp.dir,
    write,
    read: (rel: string) => fs.readFileSync(path.join(workspace, rel), 'utf8'),
    close: async () => {
      await service.close();
      tmp.cleanup();
    },
  };
}
