/**
 * `pnpm bench [suite ...]`: runs the benchmark suites on this machine and writes
 * bench/results/latest.json and bench/results/latest.md (plus a dated copy of each).
 * BENCH_DURATION_MS sets the measured time per cell (default 3000).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

type Suite = { run: (o: { durationMs: number }) => Promise<{ json: unknown; markdown: string }> };

/** Every bench/suites/<name>.ts is a suite; suites that live beside their package are listed here. */
const SUITES: Record<string, () => Promise<Suite>> = {
  ...Object.fromEntries(
    fs
      .readdirSync(path.join(__dirname, 'suites'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => [f.slice(0, -3), () => import(`./suites/${f.slice(0, -3)}`) as Promise<Suite>]),
  ),
  vector: () => import('../packages/vector-store/bench/search.bench'),
};

async function main() {
  const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const names = wanted.length ? wanted : Object.keys(SUITES);
  for (const n of names) if (!SUITES[n]) throw new Error(`unknown suite "${n}"; suites: ${Object.keys(SUITES).join(', ')}`);
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 3000);
  const startedAt = new Date().toISOString();
  const results: Record<string, unknown> = {};
  const sections: string[] = [];
  for (const name of names) {
    process.stdout.write(`bench: ${name}...\n`);
    const suite = await SUITES[name]();
    const out = await suite.run({ durationMs });
    results[name] = out.json;
    sections.push(out.markdown);
  }
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const json = JSON.stringify({ startedAt, machine, durationMs, results }, null, 2);
  const md = [
    `# Benchmark results (${startedAt})`,
    '',
    `Machine: ${machine.cpus} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}.`,
    '',
    sections.join('\n\n'),
    '',
  ].join('\n');
  const stamp = startedAt.replace(/[:.]/g, '-');
  const suffix = wanted.length ? `-${names.join('-')}` : '';
  fs.writeFileSync(path.join(dir, `latest${suffix}.json`), json);
  fs.writeFileSync(path.join(dir, `latest${suffix}.md`), md);
  fs.writeFileSync(path.join(dir, `${stamp}${suffix}.json`), json);
  // Each suite's newest figures are kept in bench/results/suites/<name>.md (committed), whichever run made them.
  const perSuite = path.join(dir, 'suites');
  fs.mkdirSync(perSuite, { recursive: true });
  names.forEach((name, i) => {
    // a suite that did not run (e.g. build-ab without BENCH_AB_BASE) keeps its last figures
    if ((results[name] as { skipped?: unknown } | undefined)?.skipped !== undefined) return;
    const header = `<!-- ${startedAt}; ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node} -->\n`;
    fs.writeFileSync(path.join(perSuite, `${name}.md`), header + sections[i] + '\n');
    fs.writeFileSync(
      path.join(perSuite, `${name}.json`),
      JSON.stringify({ startedAt, machine, durationMs, result: results[name] }, null, 2),
    );
  });
  process.stdout.write(
    `\n${md}\nbench: wrote ${path.relative(process.cwd(), path.join(dir, `latest${suffix}.md`))} and bench/results/suites/\n`,
  );
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
