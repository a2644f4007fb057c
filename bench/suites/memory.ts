/**
 * memory-mcp search over 100k stored memories (embedded SQLite FTS5 store): bulk insert time,
 * then ranked search latency p50/p99 and throughput over a fixed set of queries.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseSearchQuery, SqliteMemoryStore } from '../../services/memory-mcp/src';
import { markdownTable, summarize } from '../lib';

const WORDS = (
  'gateway service memory vector cache session search index query schema table column commit branch merge deploy release ' +
  'latency throughput error timeout retry circuit breaker health metric log trace span token secret config backup restore ' +
  'python typescript rust golang postgres redis qdrant mosquitto vault grafana loki prometheus docker compose kubernetes ' +
  'alpha beta gamma delta epsilon zeta theta lambda sigma omega red green blue yellow purple orange silver golden'
).split(' ');

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export async function run(options: { durationMs: number; count?: number }): Promise<{ json: unknown; markdown: string }> {
  const count = options.count ?? 100_000;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-memory-'));
  const random = rng(7);
  const word = () => WORDS[Math.floor(random() * WORDS.length)];
  try {
    const store = await SqliteMemoryStore.open(path.join(dir, 'memories.sqlite'));
    let t = performance.now();
    for (let start = 0; start < count; start += 5000) {
      const batch = [];
      for (let i = start; i < Math.min(count, start + 5000); i++) {
        batch.push({
          content: Array.from({ length: 12 + Math.floor(random() * 20) }, word).join(' ') + ` note ${i}`,
          type: i % 5 === 0 ? 'fact' : 'note',
          tags: [word(), word()],
          importance: random(),
          metadata: { i },
        });
      }
      await store.storeMany(batch);
    }
    const insertSeconds = (performance.now() - t) / 1000;
    process.stdout.write(`memory: stored ${count} in ${insertSeconds.toFixed(1)} s\n`);

    const queries = [
      'gateway latency',
      'redis cache timeout',
      '"circuit breaker"',
      'postgres OR qdrant',
      'golden -silver',
      'deploy release rollback',
      'python',
      'omega sigma delta',
    ];
    const latencies: number[] = [];
    for (const q of queries) await store.search({ query: parseSearchQuery(q), tags: [], offset: 0, limit: 10 }); // warm
    t = performance.now();
    let i = 0;
    while (performance.now() - t < options.durationMs) {
      const q = queries[i++ % queries.length];
      const t0 = performance.now();
      await store.search({ query: parseSearchQuery(q), tags: [], offset: 0, limit: 10 });
      latencies.push(performance.now() - t0);
    }
    const result = summarize(latencies, (performance.now() - t) / 1000, 1, 0);
    await store.close();
    const markdown = [
      `### memory-mcp search over ${count} memories (embedded SQLite FTS5, bm25, top 10)`,
      '',
      `Bulk insert: ${count} memories in ${insertSeconds.toFixed(1)} s (${Math.round(count / insertSeconds)} per second).`,
      '',
      markdownTable(
        ['queries', 'searches/s', 'p50 ms', 'p90 ms', 'p99 ms'],
        [[queries.length, result.throughput, result.p50Ms, result.p90Ms, result.p99Ms]],
      ),
    ].join('\n');
    return { json: { count, insertSeconds, search: result, queries }, markdown };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
