/**
 * Nothing acknowledged is lost: each embedded store is written to by concurrent callers, its
 * process is killed with SIGKILL in the middle of the writes, the launcher restarts it, and every
 * write that was answered with success must be there afterwards. Covered: memory-mcp (SQLite),
 * vector-mcp-wrapper (the embedded vector store advanced-memory-mcp uses too), network-mcp's
 * webhooks, mqtt-mcp's subscriptions, code-graph-mcp's index, media-mcp's jobs, config-mcp's
 * backups, marketplace-mcp's published skills and secrets-ui's encrypted file store. The gateway's
 * call history is written behind (docs/gateway.md: at most SESSION_FLUSH_MS of records).
 */
import path from 'node:path';
import fs from 'node:fs';
import { getService } from '@mcp-fleet/inventory';
import { tempDir } from '@mcp-fleet/testing';
import { rawArchive, skillMd } from '../../services/marketplace-mcp/test/shared';
import { postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

interface Store {
  id: string;
  /** Files it needs in the workspace, then anything to do before the writes. */
  setup?: (url: string, workspace: string) => Promise<void>;
  /** Writes to attempt at most (default 5000). */
  max?: number;
  /** One write; resolves with the key it made when the service answered success. */
  write: (url: string, i: number) => Promise<string | undefined>;
  /** The acknowledged keys that are gone after the restart. */
  lost: (url: string, acknowledged: string[]) => Promise<string[]>;
}

const call = async (url: string, tool: string, args: unknown) => {
  try {
    const res = await postJson(`${url}/tools/${tool}`, args);
    return res.status === 200 && res.body?.success === true ? res.body.result : undefined;
  } catch {
    return undefined; // connection refused or reset: not acknowledged
  }
};

/** A request with a body, answered success (2xx and success: true), else undefined. */
async function send(url: string, method: string, body: Buffer | string, headers: Record<string, string>) {
  try {
    const res = await fetch(url, { method, body, headers, signal: AbortSignal.timeout(10_000) });
    const json = (await res.json().catch(() => undefined)) as { success?: boolean; result?: any } | undefined;
    return res.ok && json?.success === true ? json.result : undefined;
  } catch {
    return undefined;
  }
}

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

/** The acknowledged keys not in what the store lists after the restart. */
const missingFrom = (present: Iterable<string>, acknowledged: string[]) => {
  const set = new Set(present);
  return acknowledged.filter((k) => !set.has(k));
};

/** The acknowledged keys for which `exists` answers false, asked a few at a time. */
async function missingEach(acknowledged: string[], exists: (key: string) => Promise<boolean>): Promise<string[]> {
  const lost: string[] = [];
  for (let i = 0; i < acknowledged.length; i += 16) {
    const batch = acknowledged.slice(i, i + 16);
    const found = await Promise.all(batch.map(exists));
    batch.forEach((k, j) => found[j] || lost.push(k));
  }
  return lost;
}

const ADMIN_TOKEN = 'durability-admin-credential-0123';
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
/** secrets-ui: the variables of one service that the writes rotate over. */
const SECRET_SERVICE = 'mega-orchestrator';
const SECRET_VARS = ['LLM_API_KEY', 'EMBEDDINGS_API_KEY', 'MARKETPLACE_JWT_TOKEN'];

const STORES: Store[] = [
  {
    id: 'memory-mcp',
    write: async (url, i) => ((await call(url, 'store_memory', { key: `k-${i}`, content: `durable memory ${i}` })) ? `k-${i}` : undefined),
    lost: async (url, acked) =>
      missingFrom(await pages(url, 'list_memories', {}, (r) => r.memories.map((m: { key: string }) => m.key)), acked),
  },
  {
    id: 'vector-mcp-wrapper',
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
    lost: async (url, acked) =>
      missingFrom(
        await pages(url, 'vector', { action: 'scroll', collection: 'durable' }, (r) => r.points.map((p: { id: number }) => String(p.id))),
        acked,
      ),
  },
  {
    id: 'network-mcp',
    write: async (url, i) => {
      const r = await call(url, 'webhook_create', { targetUrl: 'https://hooks.example.com/fleet', description: `d-${i}` });
      return r ? String(r.webhook?.id ?? r.id) : undefined;
    },
    lost: async (url, acked) =>
      missingFrom(await pages(url, 'webhook_list', {}, (r) => r.webhooks.map((w: { id: string }) => String(w.id))), acked),
  },
  {
    id: 'mqtt-mcp',
    write: async (url, i) => ((await call(url, 'subscribe_topic', { filter: `durable/${i}/#`, qos: 1 })) ? `durable/${i}/#` : undefined),
    lost: async (url, acked) => {
      const status = await call(url, 'get_mqtt_status', {});
      if (!status) throw new Error('get_mqtt_status failed after the restart');
      return missingFrom(
        status.subscriptions.map((s: { filter: string }) => s.filter),
        acked,
      );
    },
  },
  {
    // The code graph's SQLite index: every project whose indexing was answered is still indexed.
    id: 'code-graph-mcp',
    max: 400,
    setup: async (_url, workspace) => {
      for (let i = 0; i < 400; i++) {
        const dir = path.join(workspace, 'graphs', `p${i}`);
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(path.join(dir, 'mod.py'), `import os\n\nclass C${i}:\n    def run(self):\n        return os.getcwd()\n`);
      }
    },
    write: async (url, i) => ((await call(url, 'index_python_project', { root: `graphs/p${i}` })) ? `graphs/p${i}` : undefined),
    lost: async (url, acked) =>
      missingEach(acked, async (root) => {
        const r = await call(url, 'query_code_graph', { project: root, kinds: ['class'] });
        return r?.nodes?.length === 1;
      }),
  },
  {
    // media-mcp's job table: every job it answered is still known (interrupted or done), never forgotten.
    id: 'media-mcp',
    max: 1500,
    setup: async (_url, workspace) => fs.writeFileSync(path.join(workspace, 'dot.png'), Buffer.from(PNG_1X1, 'base64')),
    write: async (url, i) => {
      const r = await call(url, 'media_process', {
        path: 'dot.png',
        operation: 'image',
        format: 'webp',
        async: true,
        output: `durable-${i}`,
      });
      return r?.job?.id;
    },
    lost: async (url, acked) =>
      missingEach(acked, async (jobId) => {
        // Known, and not left queued or running by the killed process (those become interrupted).
        const job = await call(url, 'media_query', { action: 'get', jobId });
        return job?.id === jobId && !['queued', 'running'].includes(job.state);
      }),
  },
  {
    // config-mcp's backups: every backup it answered is listed (keep is above the number of writes).
    id: 'config-mcp',
    max: 900,
    setup: async (_url, workspace) => fs.writeFileSync(path.join(workspace, 'app.json'), '{"durable": true}\n'),
    write: async (url) => (await call(url, 'backup', { action: 'create', path: 'app.json', keep: 1000 }))?.backup?.id,
    lost: async (url, acked) =>
      missingFrom(
        await pages(url, 'backup', { action: 'list', path: 'app.json' }, (r) => r.backups.map((b: { id: string }) => b.id)),
        acked,
      ),
  },
  {
    // marketplace-mcp's published skills: every version answered 201 can be downloaded.
    id: 'marketplace-mcp',
    max: 600,
    write: async (url, i) => {
      const version = `1.0.${i}`;
      const archive = await rawArchive([{ name: 'SKILL.md', data: skillMd('durable-skill', version) }]);
      const r = await send(`${url}/skills/v1/packages/durable-skill/${version}`, 'PUT', archive, {
        'content-type': 'application/gzip',
        'x-admin-token': ADMIN_TOKEN,
      });
      return r?.created ? version : undefined;
    },
    lost: async (url, acked) =>
      missingEach(acked, async (version) => {
        const res = await fetch(`${url}/skills/v1/packages/durable-skill/${version}/download`);
        await res.arrayBuffer();
        return res.status === 200;
      }),
  },
  {
    // secrets-ui's encrypted file store: concurrent writers set different variables of one service;
    // the last acknowledged value of each variable (or a later write's) must be what the store holds.
    id: 'secrets-ui',
    write: async (url, i) => {
      const name = SECRET_VARS[i % SECRET_VARS.length];
      const r = await send(`${url}/api/secrets/${SECRET_SERVICE}`, 'PUT', JSON.stringify({ values: { [name]: `v-${i}` } }), {
        'content-type': 'application/json',
        authorization: `Bearer ${ADMIN_TOKEN}`,
      });
      return r ? `${r.version}:${name}:v-${i}` : undefined;
    },
    lost: async (url, acked) => {
      const values: Record<string, string> = {};
      let version = 0;
      for (const name of SECRET_VARS) {
        const r = await send(`${url}/api/secrets/${SECRET_SERVICE}/reveal`, 'POST', JSON.stringify({ key: name }), {
          'content-type': 'application/json',
          authorization: `Bearer ${ADMIN_TOKEN}`,
        });
        if (r?.value !== undefined) values[name] = r.value;
        version = Math.max(version, r?.version ?? 0);
      }
      const writes = acked.map((k) => {
        const [v, name, value] = k.split(':');
        return { key: k, version: Number(v), name, value };
      });
      const ackedValues = new Set(writes.map((w) => w.value));
      const lost: string[] = [];
      for (const name of SECRET_VARS) {
        const last = writes.filter((w) => w.name === name).sort((a, b) => b.version - a.version)[0];
        if (!last) continue;
        // Held: the last acknowledged value, or one from a write that landed unanswered after it.
        const held = values[name];
        if (held !== last.value && (held === undefined || ackedValues.has(held))) lost.push(last.key);
      }
      const newest = Math.max(...writes.map((w) => w.version));
      if (version < newest) lost.push(`version ${version} < acknowledged ${newest}`);
      return lost;
    },
  },
];

describe('embedded stores killed mid-write', () => {
  const tmp = tempDir('mcp-fleet-durability-');
  let fleet: FleetHandle;

  beforeAll(async () => {
    fleet = await startFleet({
      dataDir: path.join(tmp.dir, 'data'),
      workspace: path.join(tmp.dir, 'ws'),
      only: STORES.map((s) => s.id),
      env: { FLEET_RESTART_BACKOFF_MS: '200', MARKETPLACE_ADMIN_TOKEN: ADMIN_TOKEN, SECRETS_UI_ADMIN_TOKEN: ADMIN_TOKEN },
    });
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
    tmp.cleanup();
  });

  it.each(STORES.map((s) => [s.id, s] as const))(
    '%s keeps every acknowledged write across a SIGKILL',
    async (_id, store) => {
      const url = fleet.serviceUrl(store.id, getService(store.id)!.port);
      await store.setup?.(url, path.join(tmp.dir, 'ws'));
      const pid = fleet.state().services.find((s) => s.id === store.id)!.pid;
      const acknowledged: string[] = [];
      let next = 0;
      let killed = false;
      // 8 concurrent writers until the process is gone and a few more writes have failed.
      const writer = async () => {
        let failuresAfterKill = 0;
        while (failuresAfterKill < 3 && next < (store.max ?? 5000)) {
          const key = await store.write(url, next++);
          if (key !== undefined) acknowledged.push(key);
          else if (killed) failuresAfterKill++;
        }
      };
      const writers = Array.from({ length: 8 }, writer);
      await waitFor('some writes to land', async () => acknowledged.length >= 40, 20_000);
      process.kill(pid, 'SIGKILL');
      killed = true;
      const attemptedBeforeKill = next;
      await Promise.all(writers);
      expect(acknowledged.length).toBeGreaterThanOrEqual(40);
      // Killed in the middle of the writes, not after the last one.
      expect(attemptedBeforeKill).toBeLessThan(store.max ?? 5000);

      // The launcher restarts it; then every acknowledged key must be there.
      await waitFor(
        `${store.id} restarted`,
        async () => {
          const s = fleet.state().services.find((x) => x.id === store.id);
          return s && s.pid !== pid && s.state === 'healthy';
        },
        30_000,
      );
      const lost = await store.lost(url, acknowledged);
      expect({ service: store.id, acknowledged: acknowledged.length, lost }).toEqual({
        service: store.id,
        acknowledged: acknowledged.length,
        lost: [],
      });
    },
    90_000,
  );
});
