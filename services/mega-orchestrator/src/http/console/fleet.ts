/**
 * The fleet as the console shows it: GET /services (every inventory service with its status, the
 * reason one is missing, breaker and latency), plus what the launcher knows (its restarts of each
 * service and their state, from DATA_DIR/fleet.json when the fleet was started by `./fleet up`) and,
 * for MCP servers behind the gateway, their transport, protocol era and starts.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { McpDownstream } from '../../downstream/mcp';
import type { GatewayContext } from '../../core/context';
import { servicesView } from '../../core/views';
import { openRegular } from './files';
import { SERVICE_ID, VERSION } from '../../core/config';

const STATE_MAX_BYTES = 1024 * 1024;

interface LauncherService {
  id: string;
  state?: string;
  restarts?: number;
  error?: string;
}

/** The launcher's state file, when there is one the gateway can read (else nothing is claimed). */
async function launcherState(dataDir: string): Promise<Map<string, LauncherService>> {
  const out = new Map<string, LauncherService>();
  const handle = await openRegular(path.join(dataDir, 'fleet.json')).catch(() => undefined);
  if (!handle) return out;
  try {
    const { size } = await handle.stat();
    if (size > STATE_MAX_BYTES) return out;
    const doc = JSON.parse(await handle.readFile('utf8')) as { services?: unknown };
    if (!Array.isArray(doc.services)) return out;
    for (const s of doc.services as LauncherService[]) {
      if (s && typeof s.id === 'string')
        out.set(s.id, {
          id: s.id,
          ...(typeof s.state === 'string' ? { state: s.state } : {}),
          ...(typeof s.restarts === 'number' ? { restarts: s.restarts } : {}),
          ...(typeof s.error === 'string' ? { error: s.error.slice(0, 500) } : {}),
        });
    }
  } catch {
    // a state file being rewritten, or not the launcher's: nothing to add
  } finally {
    await handle.close();
  }
  return out;
}

export async function fleetView(ctx: GatewayContext): Promise<Record<string, unknown>> {
  const view = servicesView(ctx) as { services: Record<string, unknown>[]; byStatus: Record<string, number> };
  const launched = await launcherState(ctx.config.DATA_DIR);
  const services = view.services.map((s) => {
    const id = String(s.id);
    const upstream = ctx.registry.get(id)?.upstream;
    const launcher = launched.get(id);
    return {
      ...s,
      ...(upstream instanceof McpDownstream
        ? { era: upstream.protocolEra, restarts: Math.max(0, upstream.starts - 1), restartsBy: 'gateway' }
        : launcher?.restarts !== undefined
          ? { restarts: launcher.restarts, restartsBy: 'launcher' }
          : {}),
      ...(launcher ? { launcher: { state: launcher.state, ...(launcher.error ? { error: launcher.error } : {}) } } : {}),
    };
  });
  const stat = await fs.stat(path.join(ctx.config.DATA_DIR, 'fleet.json')).catch(() => undefined);
  return {
    gateway: {
      service: SERVICE_ID,
      version: VERSION,
      uptimeSeconds: Math.round((Date.now() - ctx.stats.startedAt) / 1000),
      authorization: ctx.auth ? 'on' : 'off',
      tools: ctx.registry.catalog.entries.length,
      mcpSessions: ctx.mcpSessionCount(),
      launcherState: stat ? new Date(stat.mtimeMs).toISOString() : null,
    },
    services,
    count: services.length,
    byStatus: view.byStatus,
  };
}
