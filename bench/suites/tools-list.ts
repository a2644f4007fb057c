/**
 * tools/list must stay flat as the catalog grows: the gateway in front of 10 synthetic downstreams
 * offering 50, 500 and 5,000 tools in all (half of the names offered twice, so the collision rule
 * and qualified names are exercised). Measured in one run: MCP tools/list (first page, 2026-07-28
 * stateless; a client pages on) and REST GET /tools/list?limit=50, at concurrency 1 and 8. The
 * gateway, the downstreams and the load generator share this process, so absolute figures include
 * the generator; the ratio between catalog sizes is the result.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { z } from 'zod';
import { createServiceApp, defineTool, type ToolDefinition } from '@mcp-fleet/kit';
import type { RunningServer } from '@mcp-fleet/kit';
import { serve, testLogger } from '@mcp-fleet/testing';
import { createApp } from '../../services/mega-orchestrator/src/http/app';
import { configSchema } from '../../services/mega-orchestrator/src/core/config';
import { markdownTable, summarize, type LoadResult } from '../lib';

const SIZES = [50, 500, 5000];
const SERVICES = 10;

function syntheticTools(service: number, count: number): ToolDefinition[] {
  return Array.from({ length: count }, (_, i) =>
    defineTool({
      // the first half of each service's names repeat on the next service: collisions on purpose
      name: i < count / 2 ? `shared_${(service % 2) * count + i}` : `s${service}_tool_${i}`,
      description: `Synthetic tool ${i} of service ${service}, with a description of ordinary length for a listing.`,
      input: z.object({ text: z.string().max(100).describe('Some text.'), n: z.number().int().optional().describe('A number.') }).strict(),
      annotations: { readOnlyHint: true },
      handler: () => ({ ok: true }),
    }),
  );
}

async function load(
  origin: string,
  req: { method: 'GET' | 'POST'; path: string; body?: string; headers?: Record<string, string> },
  concurrency: number,
  durationMs: number,
) {
  const pool = new Pool(origin, { connections: concurrency });
  const once = async () => {
    const res = await pool.request({
      method: req.method,
      path: req.path,
      body: req.body,
      headers: { 'content-type': 'application/json', ...req.headers },
    });
    const text = await res.body.text();
    return res.statusCode === 200 && text.includes('"tools"');
  };
  const latencies: number[] = [];
  let errors = 0;
  const run = async (until: number, record: boolean) => {
    while (performance.now() < until) {
      const t0 = performance.now();
      const ok = await once().catch(() => false);
      if (!record) continue;
      if (ok) latencies.push(performance.now() - t0);
      else errors++;
    }
  };
  const warm = performance.now() + 300;
  await Promise.all(Array.from({ length: concurrency }, () => run(warm, false)));
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => run(start + durationMs, true)));
  const seconds = (performance.now() - start) / 1000;
  await pool.close();
  return summarize(latencies, seconds, concurrency, errors);
}

export async function run(options: { durationMs: number }): Promise<{ json: unknown; markdown: string }> {
  const durationMs = Math.max(1000, Math.min(options.durationMs, 3000));
  const rows: { tools: number; listed: number; path: string; concurrency: number; result: LoadResult }[] = [];
  for (const size of SIZES) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-tools-list-'));
    const downstreams: RunningServer[] = [];
    const closers: (() => Promise<void>)[] = [];
    for (let s = 0; s < SERVICES; s++) {
      const svc = createServiceApp({
        service: `synthetic-${s}`,
        config: { LOG_LEVEL: 'error', BODY_LIMIT: '1mb', TOOL_TIMEOUT_MS: 10_000 } as never,
        logger: testLogger(`synthetic-${s}`),
        tools: syntheticTools(s, size / SERVICES),
      });
      downstreams.push(await serve(svc.app));
      closers.push(() => svc.close());
    }
    const gw = createApp({
      config: configSchema.parse({
        DATA_DIR: dataDir,
        LOG_LEVEL: 'error',
        HEALTH_POLL_MS: '600000',
        STDIO_SERVERS: 'false',
        MCP_PAGE_SIZE: '100',
      }),
      logger: testLogger('gateway'),
      services: downstreams.map((d, s) => ({ id: `synthetic-${s}`, url: d.url })),
      autoStart: false,
    });
    await gw.refresh();
    const listed = gw.registry.catalog.entries.length;
    const server = await serve(gw.app);
    const mcp = {
      method: 'POST' as const,
      path: '/mcp',
      headers: { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
      }),
    };
    try {
      for (const concurrency of [1, 8]) {
        rows.push({
          tools: size,
          listed,
          path: 'MCP tools/list (first page)',
          concurrency,
          result: await load(server.url, mcp, concurrency, durationMs),
        });
        rows.push({
          tools: size,
          listed,
          path: 'GET /tools/list?limit=50',
          concurrency,
          result: await load(server.url, { method: 'GET', path: '/tools/list?limit=50' }, concurrency, durationMs),
        });
      }
    } finally {
      server.server.closeAllConnections();
      await server.stop();
      await gw.close();
      for (const d of downstreams) {
        d.server.closeAllConnections();
        await d.stop();
      }
      for (const c of closers) await c();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const base = (r: (typeof rows)[number]) =>
    rows.find((b) => b.tools === SIZES[0] && b.path === r.path && b.concurrency === r.concurrency)!;
  const markdown = [
    '# tools/list as the catalog grows',
    '',
    `Gateway in front of ${SERVICES} synthetic downstreams, ${durationMs} ms per row; "vs 50" is p50 over the 50-tool p50 of the same path and concurrency (flat = about 1). An MCP first page holds up to MCP_PAGE_SIZE entries (set to 100 here; the default 0 lists the whole catalog in one page): the whole 56-entry catalog at 50 tools, 100 entries from 500 tools on, so the MCP rows step once from 50 to 500 (a page almost twice the size) and should then stay level from 500 to 5,000.`,
    '',
    markdownTable(
      ['tools offered', 'catalog entries', 'path', 'conc.', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'p50 vs 50'],
      rows.map((r) => [
        r.tools,
        r.listed,
        r.path,
        r.concurrency,
        r.result.throughput,
        r.result.p50Ms,
        r.result.p99Ms,
        r.result.errors,
        Math.round((r.result.p50Ms / base(r).result.p50Ms) * 100) / 100,
      ]),
    ),
  ].join('\n');
  return { json: { rows }, markdown };
}
