import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from '@mcp-fleet/kit';
import { tokenFileOf, type Config } from '../config';
import { FileSecretStore } from './file-store';
import type { SecretStore } from './types';
import { VaultSecretStore } from './vault-store';

export type { SecretRecord, SecretStore } from './types';
export { FileSecretStore } from './file-store';
export { VaultSecretStore } from './vault-store';

/**
 * Vault when VAULT_ADDR is set, else the encrypted file store. With the file store and no token
 * file configured, the first start creates DATA_DIR/secrets-ui/store-token (random, mode 600);
 * a configured token file is never created here: its absence is reported by /health.
 */
export function openStore(config: Config, logger: Logger): SecretStore {
  const tokenFile = tokenFileOf(config);
  if (config.VAULT_ADDR) {
    return new VaultSecretStore({
      addr: config.VAULT_ADDR,
      tokenFile,
      mount: config.VAULT_KV_MOUNT,
      prefix: config.VAULT_PATH_PREFIX,
      timeoutMs: config.VAULT_TIMEOUT_MS,
    });
  }
  if (!config.VAULT_TOKEN_FILE && !fs.existsSync(tokenFile)) {
    fs.mkdirSync(path.dirname(tokenFile), { recursive: true, mode: 0o700 });
    fs.writeFileSync(tokenFile, randomBytes(32).toString('base64url') + '\n', { mode: 0o600, flag: 'wx' });
    logger.info('created the file store token (keep it: the store does not open without it)', { file: tokenFile });
  }
  return new FileSecretStore(path.join(config.DATA_DIR, 'secrets-ui', 'store'), tokenFile);
}
