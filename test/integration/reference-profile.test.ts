/** `fleet up --profile reference`: the earlier reference's ports for old clients, with its direct interfaces. */
import path from 'node:path';
import { REFERENCE_PORTS } from '@mcp-fleet/inventory';
import { tempDir } from '@mcp-fleet/testing';
import { getJson, postJson, startFleet, waitFor, type FleetHandle } from '../support/fleet-process';

const tmp = tempDir('reference-profile-');
let fleet: FleetHandle;
const at = (id: string) => `http://127.0.0.1:${REFERENCE_PORTS[id] + fleet.offset}`;

beforeAll(async () => {
  fleet = await startFleet({
    dataDir: path.join(tmp.dir, 'data'),
    workspace: path.join(tmp.dir, 'ws'),
    only: ['memory-mcp', 'advanced-memory-mcp', 'vector-mcp-wrapper'],
    args: ['--profile', 'reference'],
  });
}, 120_000);

afterAll(async () => {
  await fleet?.stop();
  tmp.cleanup();
});

describe('the reference profile', () => {
  it('serves memory on 8005, advanced memory on 8006 and the vector database on 8007 (plus the offset)', async () => {
    const ports = Object.fromEntries(fleet.state().services.map((s) => [s.id, s.port]));
    expect(ports['memory-mcp']).toBe(8005 + fleet.offset);
    expect(ports['advanced-memory-mcp']).toBe(8006 + fleet.offset);
    expect(ports['vector-mcp-wrapper']).toBe(8007 + fleet.offset);
    expect(ports['mega-orchestrator']).toBe(7000 + fleet.offset);
    for (const id of ['memory-mcp', 'advanced-memory-mcp', 'vector-mcp-wrapper'])
      expect((await getJson(`${at(id)}/health`)).status).toBe(200);
  });

  it("answers the reference's direct interfaces on its ports", async () => {
    const stored = await postJson(`${at('advanced-memory-mcp')}/memories`, {
      content: 'old clients still reach the memory service',
      metadata: { via: 'reference' },
    });
    expect(stored.status).toBe(200);
    const found = await postJson(`${at('advanced-memory-mcp')}/search`, { query: 'old clients memory service', limit: 3, threshold: 0.1 });
    expect(found.body.result.memories[0].id).toBe(stored.body.result.id);
    const created = await postJson(`${at('vector-mcp-wrapper')}/tools/collection`, { action: 'create', name: 'legacy', size: 2 });
    expect(created.status).toBe(200);
    const info = await getJson(`${at('vector-mcp-wrapper')}/collections/legacy`);
    expect(info.body).toMatchObject({ status: 'ok', result: { points_count: 0, config: { params: { vectors: { size: 2 } } } } });
    const search = await postJson(`${at('vector-mcp-wrapper')}/collections/legacy/points/search`, { vector: [1, 0], limit: 1 });
    expect(search.body).toMatchObject({ status: 'ok', result: [] });
  });

  it('keeps the gateway routing to the moved services', async () => {
    const res = await waitFor(
      'store_memory through the gateway',
      async () => {
        const r = await postJson(`${fleet.gateway}/mcp`, { tool: 'store_memory', arguments: { content: 'routed through the gateway' } });
        return r.status === 200 ? r : undefined;
      },
      20_000,
    );
    expect(res.body).toMatchObject({ success: true, service: 'memory-mcp' });
  });
});
