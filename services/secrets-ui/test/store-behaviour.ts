import { randomBytes } from 'node:crypto';
import type { SecretStore } from '../src/store';

/**
 * The behaviour every secrets store shares: the encrypted file store always runs it, the Vault
 * adapter runs it when TEST_VAULT_URL names a real Vault (vault-store.test.ts).
 */
export function describeSecretStoreBehaviour(title: string, makeStore: () => SecretStore): void {
  describe(title, () => {
    let store: SecretStore;
    // A fresh service name per test, so a shared real Vault never carries state between runs.
    const svc = () => `behaviour-${randomBytes(4).toString('hex')}`;

    beforeAll(() => {
      store = makeStore();
    });

    afterAll(async () => {
      await store.close();
    });

    it('answers version 0 and no values for a service never written', async () => {
      await expect(store.read(svc())).resolves.toMatchObject({ values: {}, version: 0 });
    });

    it('keeps what it was given, byte for byte, and counts a version per write', async () => {
      const id = svc();
      const tricky = { A: 'it\'s $HOME `id` "q" \\ \n# next', B: 'ünïcødé ✓', C: '' };
      const first = await store.write(id, tricky);
      expect(first.version).toBe(1);
      await expect(store.read(id)).resolves.toMatchObject({ values: tricky, version: 1 });
      const second = await store.write(id, { A: 'changed' });
      expect(second.version).toBe(2);
      const now = await store.read(id);
      expect(now.values).toEqual({ A: 'changed' });
      expect(now.version).toBe(2);
      expect(typeof now.updatedAt).toBe('string');
    });

    it('makes a version of every one of several concurrent writes', async () => {
      const id = svc();
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => store.write(id, { N: String(i) })));
      expect(results.map((r) => r.version).sort()).toEqual([1, 2, 3, 4, 5]);
      const last = results.find((r) => r.version === 5)!;
      await expect(store.read(id)).resolves.toMatchObject({ version: 5, values: last.values });
    });

    it('writes with an expected version only while it is still the stored one', async () => {
      const id = svc();
      await expect(store.write(id, { A: 'first' }, 0)).resolves.toMatchObject({ version: 1 });
      // A second writer that read version 0 too must not overwrite the first one's change.
      const stale = store.write(id, { B: 'second' }, 0);
      await expect(stale).rejects.toMatchObject({ code: 'CONFLICT', details: { expectedVersion: 0, version: 1 } });
      await expect(store.read(id)).resolves.toMatchObject({ version: 1, values: { A: 'first' } });
      await expect(store.write(id, { A: 'first', B: 'second' }, 1)).resolves.toMatchObject({ version: 2 });
    });

    it('keeps services apart', async () => {
      const a = svc();
      const b = svc();
      await store.write(a, { K: 'for-a' });
      await store.write(b, { K: 'for-b' });
      expect((await store.read(a)).values.K).toBe('for-a');
      expect((await store.read(b)).values.K).toBe('for-b');
      expect(store.location(a)).not.toBe(store.location(b));
      expect(store.location(a)).toContain(a);
    });

    it('answers ping while it is usable', async () => {
      await expect(store.ping()).resolves.toMatchObject({ kind: store.kind });
    });
  });
}
