/**
 * The console's API key store over API_KEYS_FILE (src/console/keys.ts): the file's shape is kept,
 * writes are atomic and mode 600, changes made at the same time all land, the Authorizer honours a
 * change at once, and what cannot be done says what to do instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir, testLogger } from '@mcp-fleet/testing';
import { Authorizer, newApiKey } from '../src/auth/auth';
import { KeyStore } from '../src/http/console/keys';

describe('console key store', () => {
  const tmp = tempDir('mcp-fleet-console-keys-');
  afterAll(() => tmp.cleanup());

  function setup(doc: (entries: unknown[]) => unknown) {
    const file = path.join(tmp.dir, `keys-${Math.random().toString(36).slice(2)}.json`);
    const ops = newApiKey('ops', ['admin']);
    fs.writeFileSync(file, JSON.stringify(doc([ops.entry])), { mode: 0o600 });
    const auth = new Authorizer({ resource: 'http://127.0.0.1:7000/mcp', apiKeysFile: file, logger: testLogger('auth') });
    return { file, ops, auth, store: new KeyStore(file, auth) };
  }

  it('keeps the {"keys": [...]} shape, writes mode 600, and the new key works at once', async () => {
    const { file, auth, store } = setup((keys) => ({ keys }));
    const made = await store.create('ci', ['tools:read', 'tools:read']);
    expect(made.scopes).toEqual(['tools:read']);
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(Object.keys(doc)).toEqual(['keys']);
    expect(doc.keys.map((k: { name: string }) => k.name)).toEqual(['ops', 'ci']);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    await expect(auth.authenticate(`Bearer ${made.key}`)).resolves.toMatchObject({ subject: 'ci' });
    await store.revoke('ci');
    await expect(auth.authenticate(`Bearer ${made.key}`)).rejects.toThrow('not known');
  });

  it('lands every one of several changes made at once', async () => {
    const { file, store } = setup((keys) => keys);
    await Promise.all(Array.from({ length: 8 }, (_, i) => store.create(`k${i}`, ['tools:read'])));
    const names = (JSON.parse(fs.readFileSync(file, 'utf8')) as { name: string }[]).map((k) => k.name).sort();
    expect(names).toEqual(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'ops']);
  });

  it('refuses a duplicate name, an unknown key and the last admin key, saying what to do', async () => {
    const { store } = setup((keys) => keys);
    await expect(store.create('ops', ['tools:read'])).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(store.revoke('nobody')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(store.revoke('ops')).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('create another admin key'),
    });
    await store.create('ops2', ['admin']);
    await expect(store.revoke('ops')).resolves.toMatchObject({ name: 'ops' });
    expect((await store.list()).map((k) => k.name)).toEqual(['ops2']);
  });

  it('is off without API_KEYS_FILE', async () => {
    const store = new KeyStore(undefined, undefined);
    expect(store.configured).toBe(false);
    await expect(store.list()).rejects.toMatchObject({ code: 'NOT_CONFIGURED' });
  });
});
