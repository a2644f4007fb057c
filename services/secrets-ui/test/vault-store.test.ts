import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { VaultSecretStore } from '../src/store';
import { describeSecretStoreBehaviour } from './store-behaviour';

/**
 * The shared behaviour suite against a real HashiCorp Vault (KV v2 mounted at `secret`, e.g.
 * `vault server -dev`). No Vault can be installed on this machine or in CI (no Debian package, no
 * npm-shipped binary, no network), so REQUIRE_BACKENDS does not cover it: the suite runs only when
 * TEST_VAULT_URL (and TEST_VAULT_TOKEN) name a server, and REQUIRE_VAULT=1 makes its absence fail.
 */
const url = process.env.TEST_VAULT_URL;
const tmp = tempDir('secrets-vault-');
afterAll(() => tmp.cleanup());

function tokenFile(token: string): string {
  const file = path.join(tmp.dir, `token-${Math.random().toString(36).slice(2)}`);
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return file;
}

const options = (addr: string, token: string) => ({
  addr,
  tokenFile: tokenFile(token),
  mount: 'secret',
  prefix: 'mcp-fleet-test',
  timeoutMs: 5000,
});

if (url) {
  describeSecretStoreBehaviour(
    `VaultSecretStore [${url}]`,
    () => new VaultSecretStore(options(url, process.env.TEST_VAULT_TOKEN ?? 'root')),
  );
} else if (process.env.REQUIRE_VAULT === '1') {
  describe('VaultSecretStore', () => {
    it('needs TEST_VAULT_URL (REQUIRE_VAULT=1)', () => {
      throw new Error(
        'Set TEST_VAULT_URL (and TEST_VAULT_TOKEN) to a Vault server, e.g. `vault server -dev`, to run the Vault behaviour suite.',
      );
    });
  });
} else {
  describe.skip('VaultSecretStore [skipped: set TEST_VAULT_URL to run the behaviour suite against a real Vault]', () => {
    it('runs the shared behaviour suite', () => undefined);
  });
}

describe('VaultSecretStore without a Vault', () => {
  it('says where it would keep each service', () => {
    const store = new VaultSecretStore(options('http://127.0.0.1:1', 't'));
    expect(store.location('security-mcp')).toBe('secret/data/mcp-fleet-test/security-mcp');
  });

  it('answers UPSTREAM_UNAVAILABLE naming the address when nothing listens there', async () => {
    // A port that was free a moment ago: connection refused, not a mock.
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const store = new VaultSecretStore(options(`http://127.0.0.1:${port}`, 'some-token'));
    await expect(store.ping()).rejects.toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      message: expect.stringContaining(`127.0.0.1:${port}`),
    });
    await expect(store.read('x')).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  });

  it('answers NOT_CONFIGURED before sending anything when the token file is empty', async () => {
    const store = new VaultSecretStore({ ...options('http://127.0.0.1:1', 'x'), tokenFile: tokenFile('') });
    await expect(store.read('x')).rejects.toMatchObject({ code: 'NOT_CONFIGURED' });
  });
});
