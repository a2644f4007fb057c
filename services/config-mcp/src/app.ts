import fs from 'node:fs/promises';
import { createServiceApp, type Env, type Logger, type ServiceApp } from '@mcp-fleet/kit';
import { backupDir, type Config, processEnvironment, SERVICE_ID } from './config';
import { BackupStore } from './lib/backups';
import { createContext } from './lib/context';
import { createTools } from './tools';

export interface ConfigDeps {
  config: Config;
  logger: Logger;
  /** The environment env_vars inspects; the process environment by default. */
  environment?: Env;
}

export function createApp({ config, logger, environment }: ConfigDeps): ServiceApp {
  const ctx = createContext(config, logger, environment ?? processEnvironment());
  const backups = new BackupStore(backupDir(config));
  return createServiceApp({
    service: SERVICE_ID,
    config,
    logger,
    tools: createTools({ ctx, backups }),
    healthChecks: [
      { name: 'workspace', required: false, check: async () => ({ roots: (await ctx.workspace()).roots.length }) },
      {
        name: 'backups',
        required: false,
        check: async () => {
          await fs.mkdir(backups.root, { recursive: true, mode: 0o700 });
          await fs.access(backups.root, fs.constants.W_OK);
        },
      },
    ],
    onClose: () => ctx.validator.close(),
  });
}
