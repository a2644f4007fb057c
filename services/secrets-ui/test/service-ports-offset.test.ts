/** Regression: /api/services listed the documented ports while the launcher had moved every service by FLEET_PORT_OFFSET. */
import request from 'supertest';
import { SERVICES } from '@mcp-fleet/inventory';
import { planFleet } from '../../../scripts/fleet/plan';
import { ADMIN, makeApp } from './support';

const auth = { Authorization: `Bearer ${ADMIN}` };

async function listedPorts(env: Record<string, string>): Promise<Record<string, number>> {
  const t = makeApp(env);
  try {
    const res = await request(t.app).get('/api/services').set(auth).expect(200);
    return Object.fromEntries((res.body.result.services as { id: string; port: number }[]).map((s) => [s.id, s.port]));
  } finally {
    await t.cleanup();
  }
}

describe('secrets-ui /api/services ports', () => {
  it("are where the launcher started each service, FLEET_PORT_OFFSET included (secrets-ui's own environment from the plan)", async () => {
    const plan = planFleet({
      env: {
        ...process.env,
        FLEET_PORT_OFFSET: '1300',
        FLEET_DATA_DIR: '/tmp/secrets-ui-ports-plan',
        WORKSPACE_ROOTS: '/tmp/secrets-ui-ports-ws',
      },
    });
    const own = plan.specs.find((s) => s.entry.id === 'secrets-ui')!;
    const portEnv = Object.fromEntries(Object.entries(own.env).filter(([k, v]) => k.endsWith('_PORT') && v !== undefined)) as Record<
      string,
      string
    >;
    const ports = await listedPorts(portEnv);
    for (const spec of plan.specs)
      expect({ id: spec.entry.id, port: ports[spec.entry.id] }).toEqual({ id: spec.entry.id, port: spec.port });
    for (const s of SERVICES) expect({ id: s.id, port: ports[s.id] }).toEqual({ id: s.id, port: s.port + 1300 });
  });

  it('are the documented ports without the launcher, and an <ID>_PORT set by hand wins', async () => {
    const ports = await listedPorts({ GIT_MCP_PORT: '9123' });
    for (const s of SERVICES) expect({ id: s.id, port: ports[s.id] }).toEqual({ id: s.id, port: s.id === 'git-mcp' ? 9123 : s.port });
  });
});
