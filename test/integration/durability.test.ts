/**
 * Nothing acknowledged is lost: each embedded store is written to by concurrent callers, its
 * process is killed with SIGKILL in the middle of the writes, the launcher restarts it, and every
 * write that was answered with success must be there afterwards.
 */
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

interface Store {
  id: string;
  port: number;
  setup?: (url: string) => Promise<void>;
  /** One write; resolves with the key it made when the service answered success. */
  write: (url: string, i: number) => Promise<string | undefined>;
  /** Every key present after the restart. */
  read: (url: string) => Promise<Set<string>>;
}

const call = async (url: string, tool: string, args: unknown) => {
  try {
    const res = await postJson(`${url}/tools/${tool}`, args);
    return res.status === 200 && res.body?.success === true ? res.body.result : undefined;
  } catch {
    return undefined; // connection refused or reset: not acknowledged
  }
};

async function pages<T>(url: string, tool: string, args: Record<string, unknown>, pick: (r: any) => T[]): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const r = await call(url, tool, { ...args, limit: 500, ...(cursor ? { cursor } : {}) });
    if (!r) throw new Error(`${tool} failed after the restart`);
    out.push(...pick(r));
    cursor = r.nextCursor;
  } while (cursor);
  return out;
}

const STORES: Store[] = [
  {
    id: 'memory-mcp',
    port: 7005,
    write: async (url, i) => ((await call(url, 'store_memory', { key: `k-${i}`, content: `durable memory ${i}` })) ? `k-${i}` : undefined),
    read: async (url) => new Set(await pages(url, 'list_memories', {}, (r) => r.memories.map((m: { key: string }) => m.key))),
  },
  {
    id: 'vector-mcp-wrapper',
    port: 7026,
    setup: async (url) => {
      if (!(await call(url, 'collection', { action: 'create', name: 'durable', size: 4, distance: 'Cosine' })))
        throw new Error('create failed');
    },
    write: async (url, i) =>
      (await call(url, 'vector', {
        action: 'upsert',
        collection: 'durable',
        points: [{ id: i + 1, vector: [1, i % 7, 2, 3], payload: { i } }],
      }))
        ? String(i + 1)
        : undefined,
    read: async (url) =>
      new Set(
        await pages(url, 'vector', { action: 'scroll', collection: 'durable' }, (r) => r.points.map((p: { id: number }) => String(p.id))),
      ),
  },
  {
    id: 'network-mcp',
    port: 7006,
    write: async (url, i) => {
      const r = await call(url, 'webhook_create', { targetUrl: 'https://hooks.example.com/fleet', description: `d-${i}` });
      return r ? String(r.webhook?.id ?? r.id) : undefined;
    },
    read: async (url) => new Set(await pages(url, 'webhook_list', {}, (r) => r.webhooks.map((w: { id: string }) => String(w.id)))),
  },
  {
    id: 'mqtt-mcp',
    port: 7019,
    write: async (url, i) => ((await call(url, 'subscribe_topic', { filter: `durable/${i}/#`, qos: 1 })) ? `durable/${i}/#` : undefined),
    read: async (url) => {
      const status = await call(url, 'get_mqtt_status', {});
      if (!status) throw new Error('get_mqtt_status failed after the restart');
      return new Set(status.subscriptions.map((s: { filter: string }) => s.filter));
    },
  },
];

describe('embedded stores killed mid-write', () => {
  const tmp = tempDir('mcp-fleet-durability-');
  let fleet: FleetHandle;

  beforeAll(async () => {
    fleet = await startFleet({
      dataDir: path.join(tmp.dir, 'data'),
      workspace: tmp.dir,
      only: STORES.map((s) => s.id),
      env: { FLEET_RESTART_BACKOFF_MS: '200' },
    });
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    tmp.cleanup();
  });

  it.each(STORES.map((s) => [s.id, s] as const))(
    '%s keeps every acknowledged write across a SIGKILL',
    async (_id, store) => {
      const url = fleet.serviceUrl(store.id, store.port);
      await store.setup?.(url);
      const pid = fleet.state().services.find((s) => s.id === store.id)!.pid;
      const acknowledged: string[] = [];
      let next = 0;
      let killed = false;
      // 8 concurrent writers until the process is gone and a few more writes have failed.
      const writer = async () => {
        let failuresAfterKill = 0;
        while (failuresAfterKill < 3 && next < 5000) {
          const key = await store.write(url, next++);
          if (key !== undefined) acknowledged.push(key);
          else if (killed) failuresAfterKill++;
        }
      };
      const writers = Array.from({ length: 8 }, writer);
      await waitFor('some writes to land', async () => acknowledged.length >= 40, 20_000);
      process.kill(pid, 'SIGKILL');
      killed = true;
      await Promise.all(writers);
      expect(acknowledged.length).toBeGreaterThanOrEqual(40);

      // The launcher restarts it; then every acknowledged key must be there.
      await waitFor(
        `${store.id} restarted`,
        async () => {
          const s = fleet.state().services.find((x) => x.id === store.id);
          return s && s.pid !== pid && s.state === 'healthy';
        },
        30_000,
      );
      const present = await store.read(url);
      const lost = acknowledged.filter((k) => !present.has(k));
      expect({ service: store.id, acknowledged: acknowledged.length, lost }).toEqual({
        service: store.id,
        acknowledged: acknowledged.length,
        lost: [],
      });
    },
    90_000,
  );
});
