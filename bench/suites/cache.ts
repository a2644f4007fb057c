/**
 * cache-mcp-wrapper get/set throughput through the tool over HTTP, against the embedded store and
 * against Redis (REDIS_URL, default redis://127.0.0.1:6379), at concurrency 1 and 16.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { markdownTable, runLoad, startServiceProcess, stopProcesses, type LoadResult } from '../lib';

export async function run(options: { durationMs: number }): Promise<{ json: unknown; markdown: string }> {
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const rows: { backend: string; op: string; result: LoadResult }[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cache-'));
  const namespace = `bench-${process.pid}`;
  for (const backend of ['embedded', 'redis'] as const) {
    const port = 37025 + Math.floor(Math.random() * 1000);
    const env = { DATA_DIR: dataDir, CACHE_NAMESPACE: namespace, ...(backend === 'redis' ? { REDIS_URL: redisUrl } : {}) };
    const child = await startServiceProcess('cache-mcp-wrapper', env, port);
    try {
      const origin = `http://127.0.0.1:${port}`;
      await fetch(`${origin}/tools/cache`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'set', key: 'hot', value: { n: 1, text: 'x'.repeat(100) } }),
      });
      const ops = {
        set: {
          path: '/tools/cache',
          body: JSON.stringify({ action: 'set', key: 'bench-key', value: { n: 2, text: 'y'.repeat(100) }, ttlSeconds: 60 }),
        },
        get: {
          path: '/tools/cache',
          body: JSON.stringify({ action: 'get', key: 'hot' }),
          check: (b: string, s: number) => s === 200 && b.includes('"n":1'),
        },
      };
      for (const concurrency of [1, 16]) {
        for (const [op, call] of Object.entries(ops)) {
          const result = await runLoad(origin, call, concurrency, options.durationMs);
          rows.push({ backend, op, result });
          process.stdout.write(
            `cache ${backend} ${op} c=${concurrency}: ${result.throughput} ops/s p50 ${result.p50Ms} ms p99 ${result.p99Ms} ms errors ${result.errors}\n`,
          );
        }
      }
      await fetch(`${origin}/tools/cache`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ action: 'delete', keys: ['hot', 'bench-key'] }),
      });
    } finally {
      await stopProcesses([child]);
    }
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  const markdown = [
    '### cache-mcp-wrapper get/set through POST /tools/cache (100-byte JSON values)',
    '',
    markdownTable(
      ['backend', 'op', 'concurrency', 'ops/s', 'p50 ms', 'p99 ms', 'errors'],
      rows.map((r) => [r.backend, r.op, r.result.concurrency, r.result.throughput, r.result.p50Ms, r.result.p99Ms, r.result.errors]),
    ),
  ].join('\n');
  return { json: rows, markdown };
}
