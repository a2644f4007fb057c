/**
 * Embedded search benchmark: 100k x 384 Cosine vectors, top 10, p50 of 50 queries.
 * Run: pnpm exec tsx packages/vector-store/bench/search.bench.ts [points] [dims]
 * `run()` has the shape of a bench/suites entry, so the root harness can register it.
 * Not a test: timings depend on the machine.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedVectorStore } from '../src';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

export async function run(
  options: { points?: number; dims?: number; durationMs?: number } = {},
): Promise<{ json: unknown; markdown: string }> {
  const points = options.points ?? 100_000;
  const dims = options.dims ?? 384;
  const json: Record<string, unknown> = { points, dims };
  const lines: string[] = [`### Embedded vector search (${points} x ${dims}, Cosine, top 10)`, ''];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vector-bench-'));
  const random = rng(42);
  const out = (line: string) => lines.push(`- ${line}`);
  try {
    const store = await EmbeddedVectorStore.open({ dir });
    await store.createCollection({ name: 'bench', size: dims, distance: 'Cosine' });
    let t = performance.now();
    for (let start = 0; start < points; start += 1000) {
      const batch = [];
      for (let id = start; id < Math.min(points, start + 1000); id++) {
        batch.push({ id, vector: Array.from({ length: dims }, random), payload: { group: id % 10 } });
      }
      await store.upsert('bench', batch);
    }
    json.insertMs = Math.round(performance.now() - t);
    out(`inserted through upsert (1000 per call) in ${json.insertMs} ms`);
    t = performance.now();
    await store.close();
    const reopened = await EmbeddedVectorStore.open({ dir });
    json.reopenMs = Math.round(performance.now() - t);
    out(`reopened (loaded into memory) in ${json.reopenMs} ms`);
    const measure = async (label: string, filter?: object) => {
      const times: number[] = [];
      for (let i = 0; i < 55; i++) {
        const vector = Array.from({ length: dims }, random);
        const s = performance.now();
        const hits = await reopened.search('bench', { vector, limit: 10, filter, withPayload: false });
        if (hits.length !== 10) throw new Error('expected 10 hits');
        if (i >= 5) times.push(performance.now() - s);
      }
      times.sort((a, b) => a - b);
      const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))].toFixed(1);
      json[label] = { p50: Number(q(0.5)), p90: Number(q(0.9)), max: Number(q(1)) };
      out(`${label}: p50 ${q(0.5)} ms, p90 ${q(0.9)} ms, max ${q(1)} ms`);
    };
    await measure('top-10 search', undefined);
    await measure('top-10 search with filter group=3', { must: [{ key: 'group', match: { value: 3 } }] });
    await reopened.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { json, markdown: lines.join('\n') };
}

if (require.main === module) {
  void run({ points: Number(process.argv[2] ?? 100_000), dims: Number(process.argv[3] ?? 384) }).then((r) =>
    process.stdout.write(`${r.markdown}\n`),
  );
}
