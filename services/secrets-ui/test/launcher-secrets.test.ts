import { tempDir } from '@mcp-fleet/testing';
import { planFleet } from '../../../scripts/fleet/plan';
import { writeExportFile } from '../src/secrets';

describe('the launcher and the export files', () => {
  const tmp = tempDir('secrets-launcher-');
  afterAll(() => tmp.cleanup());

  it('starts a service with the runtime secrets secrets-ui exported for it, and no other', async () => {
    const deps = { exportDir: `${tmp.dir}/secrets-ui/env` } as Parameters<typeof writeExportFile>[0];
    await writeExportFile(deps, 'security-mcp', { values: { JWT_SECRET: "a 'quoted' $value" }, version: 3 });
    const { specs } = planFleet({ env: { FLEET_DATA_DIR: tmp.dir, JWT_SECRET: 'inherited' } });
    const env = (id: string) => specs.find((s) => s.entry.id === id)!.env;
    expect(env('security-mcp').JWT_SECRET).toBe("a 'quoted' $value");
    // a service that does not declare JWT_SECRET is not given the inherited one (least privilege)
    expect(env('memory-mcp').JWT_SECRET).toBeUndefined();
    expect(env('marketplace-mcp').JWT_SECRET).toBe('inherited');
    expect(specs.map((s) => s.entry.id)).toContain('secrets-ui');
  });
});
