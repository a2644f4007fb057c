/**
 * Adding a service is declaring it: every built service's app lists exactly the tools its inventory
 * entry declares (both ways), its docs page names every tool, and every package's entry points exist.
 * Builds each app in-process with embedded defaults; no running fleet, no network.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SERVICES } from '@mcp-fleet/inventory';
import { tempDir, testLogger } from '@mcp-fleet/testing';

const ROOT = path.resolve(__dirname, '../..');
const built = SERVICES.filter((s) => s.status === 'available' && s.pattern !== 'gateway');

interface ServiceModule {
  createApp: (deps: { config: unknown; logger: ReturnType<typeof testLogger> }) => unknown;
}
interface ConfigModule {
  readConfig: (env?: Record<string, string>) => unknown;
}

describe('service shape', () => {
  const tmp = tempDir('mcp-fleet-shape-');
  afterAll(() => tmp.cleanup());

  it.each(built.filter((s) => s.http).map((s) => [s.id, s] as const))(
    '%s lists exactly the tools of its inventory entry',
    async (id, entry) => {
      const dir = path.join(ROOT, 'services', id, 'src');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { createApp } = require(path.join(dir, 'app.ts')) as ServiceModule;
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { readConfig } = require(path.join(dir, 'config.ts')) as ConfigModule;
      const data = path.join(tmp.dir, id);
      fs.mkdirSync(data, { recursive: true });
      const config = readConfig({ DATA_DIR: data, WORKSPACE_ROOTS: data, LOG_LEVEL: 'error', HOST: '127.0.0.1' });
      const svc = (await createApp({ config, logger: testLogger(id) })) as { tools: ReadonlyMap<string, unknown>; close(): Promise<void> };
      try {
        expect([...svc.tools.keys()].sort()).toEqual([...entry.tools].sort());
      } finally {
        await svc.close();
      }
    },
    30_000,
  );

  it.each(built.map((s) => [s.id] as const))('%s builds its tools in one shape: createTools(deps): ToolDefinition[]', (id) => {
    const file = path.join(ROOT, 'services', id, 'src', 'tools', 'index.ts');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(file) as { createTools?: unknown };
    expect(typeof mod.createTools).toBe('function');
    // one dependencies object (or none), never positional arguments
    expect((mod.createTools as (...args: unknown[]) => unknown).length).toBeLessThanOrEqual(1);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toMatch(/export function createTools\([^)]*\): ToolDefinition\[\]/);
    expect(text).not.toMatch(/as ToolDefinition/);
  });

  it.each(built.map((s) => [s.id, s] as const))('%s has docs/services/<id>.md naming every tool', (id, entry) => {
    const file = path.join(ROOT, 'docs', 'services', `${id}.md`);
    expect(fs.existsSync(file)).toBe(true);
    const text = fs.readFileSync(file, 'utf8');
    expect(entry.tools.filter((t) => !new RegExp(`\\b${t}\\b`).test(text))).toEqual([]);
  });

  it('has every workspace package point its main and exports at files that exist', () => {
    const missing: string[] = [];
    for (const group of ['packages', 'services']) {
      for (const name of fs.readdirSync(path.join(ROOT, group))) {
        const dir = path.join(ROOT, group, name);
        const pkgFile = path.join(dir, 'package.json');
        if (!fs.existsSync(pkgFile)) continue;
        const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { main?: string; exports?: Record<string, unknown> };
        const targets = [
          pkg.main,
          ...Object.values(pkg.exports ?? {}).flatMap((v) => (typeof v === 'string' ? [v] : Object.values(v as object))),
        ];
        for (const t of targets) if (typeof t === 'string' && !fs.existsSync(path.join(dir, t))) missing.push(`${group}/${name}: ${t}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
