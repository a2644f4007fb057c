/**
 * Gateway overhead: a cheap read-only tool (system-mcp system_info) called directly on its service
 * and through the gateway (native POST /mcp and JSON-RPC tools/call in an MCP session), at
 * concurrency 1, 8 and 32. Target: the gateway adds < 1 ms at p50 and keeps >= half the direct
 * throughput.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { markdownTable, mcpSession, runLoad, startServiceProcess, stopProcesses, waitForTool, type LoadResult } from '../lib';

export interface GatewayBench {
  tool: string;
  durationMs: number;
  rows: { path: string; result: LoadResult }[];
  overhead: {
    concurrency: number;
    nativeP50AddedMs: number;
    rpcP50AddedMs: number;
    nativeThroughputShare: number;
    rpcThroughputShare: number;
  }[];
}

export async function run(options: { durationMs: number }): Promise<{ json: GatewayBench; markdown: string }> {
  const offset = 30_000 + Math.floor(Math.random() * 100) * 100;
  const sysPort = 7007 + offset;
  const gwPort = 7000 + offset;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-gw-'));
  const env = { DATA_DIR: dataDir, SYSTEM_MCP_PORT: String(sysPort), HEALTH_POLL_MS: '1000' };
  // Only system-mcp runs; the gateway reports the others as down, as it would in a partial fleet.
  const children = [await startServiceProcess('system-mcp', env, sysPort)];
  children.push(await startServiceProcess('mega-orchestrator', env, gwPort));
  try {
    const gw = `http://127.0.0.1:${gwPort}`;
    await waitForTool(gw, 'system_info');
    const rpcHeaders = await mcpSession(gw, '/mcp', '2025-11-25');

    let rpcId = 0;
    const calls = {
      direct: {
        origin: `http://127.0.0.1:${sysPort}`,
        call: { path: '/tools/system_info', body: '{}', check: (b: string, s: number) => s === 200 && b.includes('"success":true') },
      },
      native: {
        origin: gw,
        call: {
          path: '/mcp',
          body: JSON.stringify({ tool: 'system_info', arguments: {} }),
          check: (b: string, s: number) => s === 200 && b.includes('"success":true'),
        },
      },
      jsonrpc: {
        origin: gw,
        call: {
          path: '/mcp',
          headers: rpcHeaders,
          body: () => JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name: 'system_info', arguments: {} } }),
          check: (b: string, s: number) => s === 200 && b.includes('"isError":false'),
        },
      },
    };
    const rows: GatewayBench['rows'] = [];
    for (const concurrency of [1, 8, 32]) {
      for (const [name, c] of Object.entries(calls)) {
        const result = await runLoad(c.origin, c.call, concurrency, options.durationMs);
        rows.push({ path: name, result });
        process.stdout.write(
          `gateway ${name.padEnd(8)} c=${String(concurrency).padEnd(3)} ${result.throughput} req/s p50 ${result.p50Ms} ms p99 ${result.p99Ms} ms errors ${result.errors}\n`,
        );
      }
    }
    const overhead = [1, 8, 32].map((concurrency) => {
      const get = (p: string) => rows.find((r) => r.path === p && r.result.concurrency === concurrency)!.result;
      const d = get('direct');
      const n = get('native');
      const j = get('jsonrpc');
      const r3 = (x: number) => Math.round(x * 1000) / 1000;
      return {
        concurrency,
        nativeP50AddedMs: r3(n.p50Ms - d.p50Ms),
        rpcP50AddedMs: r3(j.p50Ms - d.p50Ms),
        nativeThroughputShare: r3(n.throughput / d.throughput),
        rpcThroughputShare: r3(j.throughput / d.throughput),
      };
    });
    const markdown = [
      `### Gateway overhead (tool \`system_info\`, ${options.durationMs} ms per cell, ${os.cpus().length} cores, load generator in the same machine)`,
      '',
      markdownTable(
        ['path', 'concurrency', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'errors'],
        rows.map((r) => [
          r.path,
          r.result.concurrency,
          r.result.throughput,
          r.result.p50Ms,
          r.result.p90Ms,
          r.result.p99Ms,
          r.result.errors,
        ]),
      ),
      '',
      markdownTable(
        [
          'concurrency',
          'native p50 added (ms)',
          'JSON-RPC p50 added (ms)',
          'native share of direct req/s',
          'JSON-RPC share of direct req/s',
        ],
        overhead.map((o) => [o.concurrency, o.nativeP50AddedMs, o.rpcP50AddedMs, o.nativeThroughputShare, o.rpcThroughputShare]),
      ),
    ].join('\n');
    return { json: { tool: 'system_info', durationMs: options.durationMs, rows, overhead }, markdown };
  } finally {
    await stopProcesses(children);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
