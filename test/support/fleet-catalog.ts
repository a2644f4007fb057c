/**
 * The fleet's real tool catalog, for tests and benchmarks of what clients see: every built service's tools as its own code defines
 * them (built as test/static/tool-schemas.test.ts builds them), each service's tools served by a
 * kit app on 127.0.0.1:0 under its service id, so a gateway in front of them lists exactly what it
 * lists in front of the fleet.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { polledByGateway, SERVICES } from '@mcp-fleet/inventory';
import { createServiceApp, type RunningServer, type ToolDefinition } from '@mcp-fleet/kit';
import { Workspace } from '@mcp-fleet/kit/workspace';
import { serve, testLogger } from '@mcp-fleet/testing';

const ROOT = path.resolve(__dirname, '../..');

export interface FleetCatalog {
  downstreams: { id: string; url: string; tools: string[]; primaryFor?: string[] }[];
  /** A service's DATA_DIR, also its only workspace root. */
  homeOf(id: string): string;
  close(): Promise<void>;
}

type ServiceModule = { createApp: (deps: { config: unknown; logger: ReturnType<typeof testLogger> }) => Promise<unknown> };
type ConfigModule = { readConfig: (env?: Record<string, string>) => unknown };
type ToolsModule = { createTools: (deps: unknown) => ToolDefinition[] };

/** Every service the gateway polls, plus the stdio toolkit server, each with its real tool definitions. */
export async function startFleetCatalog(): Promise<FleetCatalog> {
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-catalog-'));
  const closers: (() => Promise<unknown>)[] = [];
  const downstreams: FleetCatalog['downstreams'] = [];
  const built = SERVICES.filter((s) => s.status === 'available' && (polledByGateway(s) || s.id === 'toolkit-mcp-server'));
  for (const entry of built) {
    const dir = path.join(ROOT, 'services', entry.id, 'src');
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { readConfig } = require(path.join(dir, 'config.ts')) as ConfigModule;
    const home = path.join(data, entry.id);
    fs.mkdirSync(home, { recursive: true });
    const config = readConfig({ DATA_DIR: home, WORKSPACE_ROOTS: home, LOG_LEVEL: 'error', HOST: '127.0.0.1' });
    let tools: ToolDefinition[];
    if (entry.http) {
      const { createApp } = require(path.join(dir, 'app.ts')) as ServiceModule;
      const svc = (await createApp({ config, logger: testLogger(entry.id) })) as {
        tools: ReadonlyMap<string, ToolDefinition>;
        close(): Promise<void>;
      };
      tools = [...svc.tools.values()];
      closers.push(() => svc.close());
    } else {
      const { createTools } = require(path.join(dir, 'tools', 'index.ts')) as ToolsModule;
      tools = createTools({ config, ws: await Workspace.open([home]), logger: testLogger(entry.id) });
    }
    /* eslint-enable @typescript-eslint/no-require-imports */
    const app = createServiceApp({
      service: entry.id,
      config: { BODY_LIMIT: '1mb', TOOL_TIMEOUT_MS: 10_000 },
      logger: testLogger(entry.id),
      tools,
      defaultMetrics: false,
    });
    const server: RunningServer = await serve(app.app);
    closers.push(
      () => server.stop(),
      () => app.close(),
    );
    downstreams.push({
      id: entry.id,
      url: server.url,
      tools: [...entry.tools],
      ...(entry.primaryFor ? { primaryFor: [...entry.primaryFor] } : {}),
    });
  }
  return {
    downstreams,
    homeOf: (id) => path.join(data, id),
    close: async () => {
      for (const close of closers.reverse()) await close().catch(() => undefined);
      fs.rmSync(data, { recursive: true, force: true });
    },
  };
}
