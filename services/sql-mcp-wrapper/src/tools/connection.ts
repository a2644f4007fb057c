import { defineTool } from '@mcp-fleet/kit';
import { z } from 'zod';
import type { SqlToolDeps } from './shared';

export function createConnectionTool({ config, connection }: SqlToolDeps) {
  const { name, engine, target } = connection.info;
  return defineTool({
    name: 'connection',
    title: 'Connection status',
    description:
      'action "status": engine, target (password redacted), read-only flag, reachability and server version. "stats": query and ' +
      'error counters plus PostgreSQL pool totals (total, idle, waiting, max) or the SQLite file size. "test": runs SELECT 1 ' +
      'and reports its latency. Read-only; each check is bounded by the statement timeout.',
    input: z
      .object({
        action: z.enum(['status', 'stats', 'test']).default('status').describe('What to report.'),
      })
      .strict(),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const base = { name, engine, target, readOnly: true };
      if (args.action === 'stats') {
        return { ...base, stats: connection.stats(), schemaCacheMs: config.SQL_SCHEMA_CACHE_MS };
      }
      if (args.action === 'test') {
        const started = performance.now();
        const result = await connection.query('SELECT 1 AS ok', [], { maxRows: 1 });
        return { ...base, ok: result.rows.length === 1, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
      }
      try {
        const ping = await connection.ping();
        return { ...base, connected: true, version: ping.version, latencyMs: ping.latencyMs };
      } catch (err) {
        return { ...base, connected: false, error: (err as Error).message };
      }
    },
  });
}
