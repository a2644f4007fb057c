/** `pnpm new-service`: what it refuses before writing anything, and the shape of what it writes. */
import fs from 'node:fs';
import path from 'node:path';
import { SERVICES, type ServiceEntry } from '@mcp-fleet/inventory';
import { tempDir } from '@mcp-fleet/testing';
import { planService, ScaffoldError, withEntry, writeService } from '../../scripts/gen/new-service';

const INVENTORY = fs.readFileSync(path.resolve(__dirname, '../../packages/inventory/src/index.ts'), 'utf8');

describe('pnpm new-service', () => {
  const tmp = tempDir('mcp-fleet-new-service-');
  afterAll(() => tmp.cleanup());

  it.each([
    [{ id: 'Weather_MCP', port: 7090 }, /lower-case words/],
    [{ id: 'filesystem-mcp', port: 7090 }, /already exists/],
    [{ id: 'weather-mcp' }, /--port is required.*free ports: \d+/],
    [{ id: 'weather-mcp', port: 7001 }, /port 7001 belongs to filesystem-mcp/],
    [{ id: 'weather-mcp', port: 80 }, /from 1024 to 65535/],
    [{ id: 'weather-mcp', port: 7090, tools: ['Now!'] }, /snake_case/],
    [{ id: 'weather-mcp', port: 7090, tools: ['a_b', 'a_b'] }, /repeat/],
    [{ id: 'weather-mcp', port: 7090, description: "it's" }, /one line without quotes/],
    [{ id: 'weather-mcp', port: 7090, pattern: 'stdio' as const }, /--pattern must be one of/],
  ])('refuses %o', (options, message) => {
    expect(() => planService(options)).toThrow(ScaffoldError);
    expect(() => planService(options)).toThrow(message);
  });

  it('refuses an id the inventory lists as built, even without a folder', () => {
    const services: ServiceEntry[] = [{ ...SERVICES[1], id: 'ghost-mcp', port: 7099 }];
    expect(() => planService({ id: 'ghost-mcp' }, tmp.dir, services)).toThrow(/status "available"/);
  });

  it('keeps the port, tools and description of a planned entry and switches it to available', () => {
    const planned: ServiceEntry = {
      id: 'radio-mcp',
      port: 7095,
      pattern: 'route-oriented',
      description: 'Radio.',
      tools: ['radio_tune'],
      backends: ['http'],
      status: 'planned',
      http: true,
    };
    const plan = planService({ id: 'radio-mcp' }, tmp.dir, [...SERVICES, planned]);
    expect(plan.existing).toBe(true);
    expect(plan.entry).toMatchObject({
      port: 7095,
      tools: ['radio_tune'],
      description: 'Radio.',
      pattern: 'route-oriented',
      status: 'available',
    });
    const source = `export const SERVICES: readonly ServiceEntry[] = [
  {
    id: 'other-mcp',
    status: 'planned',
  },
  {
    id: 'radio-mcp',
    port: 7095,
    status: 'planned',
  },
];`;
    const next = withEntry(source, plan);
    expect(next).toContain("id: 'other-mcp',\n    status: 'planned'");
    expect(next).toContain("id: 'radio-mcp',\n    port: 7095,\n    status: 'available'");
    expect(() => withEntry(source.replace("id: 'radio-mcp'", "id: 'tv-mcp'"), plan)).toThrow(ScaffoldError);
  });

  it('writes a new service in the one shape, and its entry at the end of SERVICES', () => {
    const plan = planService(
      { id: 'weather-mcp', port: 7090, tools: ['weather_now', 'weather_forecast'], description: 'Weather.' },
      tmp.dir,
    );
    expect(plan.existing).toBe(false);
    expect(Object.keys(plan.files).sort()).toEqual(
      [
        'docs/services/weather-mcp.md',
        'services/weather-mcp/package.json',
        'services/weather-mcp/src/app.ts',
        'services/weather-mcp/src/config.ts',
        'services/weather-mcp/src/server.ts',
        'services/weather-mcp/src/tools/context.ts',
        'services/weather-mcp/src/tools/index.ts',
        'services/weather-mcp/src/tools/weather-forecast.ts',
        'services/weather-mcp/src/tools/weather-now.ts',
        'services/weather-mcp/test/tools.test.ts',
      ].sort(),
    );
    expect(plan.files['services/weather-mcp/src/tools/index.ts']).toMatch(
      /export function createTools\(deps: ToolDeps\): ToolDefinition\[\]/,
    );
    expect(plan.files['docs/services/weather-mcp.md']).toMatch(/weather_now[\s\S]*weather_forecast/);
    // the deps type sits in a leaf, so tools and index.ts import it without an import cycle (test/static/import-cycles.test.ts)
    expect(plan.files['services/weather-mcp/src/tools/context.ts']).toMatch(/export interface ToolDeps/);
    for (const tool of ['weather-now', 'weather-forecast', 'index'])
      expect(plan.files[`services/weather-mcp/src/tools/${tool}.ts`]).toMatch(/import type \{ ToolDeps \} from '\.\/context';/);
    const next = withEntry(INVENTORY, plan);
    expect(next).toMatch(
      /id: 'weather-mcp',\n {4}port: 7090,[\s\S]*tools: \['weather_now', 'weather_forecast'\],[\s\S]*status: 'available',\n[\s\S]*\n {2}},\n\];/,
    );

    // write into a scratch tree holding only the inventory; existing files are never overwritten
    fs.mkdirSync(path.join(tmp.dir, 'packages/inventory/src'), { recursive: true });
    fs.writeFileSync(path.join(tmp.dir, 'packages/inventory/src/index.ts'), INVENTORY);
    const written = writeService(plan, tmp.dir);
    expect(written).toContain('services/weather-mcp/src/app.ts');
    expect(fs.readFileSync(path.join(tmp.dir, 'packages/inventory/src/index.ts'), 'utf8')).toContain("id: 'weather-mcp'");
    expect(() => writeService(plan, tmp.dir)).toThrow(/EEXIST/);
    expect(() => planService({ id: 'weather-mcp', port: 7090 }, tmp.dir)).toThrow(/already exists/);
  });
});
