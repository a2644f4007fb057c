/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in the catalog) run
 * as its CLI, one server scenario at a time, with its results read back from the file it writes. On
 * Node 20 through test/support/conformance-register.mjs (the bundle imports fs.globSync, Node 22+).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '../../..');
const CLI = require.resolve('@modelcontextprotocol/conformance/dist/index.js', { paths: [REPO_ROOT] });
const REGISTER = path.join(REPO_ROOT, 'test/support/conformance-register.mjs');

export interface ConformanceCheck {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/**
 * Runs one scenario against an MCP endpoint; its checks come from the results file it writes under
 * outDir. `specVersion` runs it at that revision, even one the scenario is not listed for (--force:
 * an extension's scenarios, which the suite runs at 2026-07-28 by default).
 */
export async function runConformanceScenario(
  url: string,
  scenario: string,
  outDir: string,
  options: { specVersion?: string } = {},
): Promise<ConformanceCheck[]> {
  const dir = path.join(outDir, `${scenario}-${Math.random().toString(36).slice(2, 8)}`);
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve) => {
    const version = options.specVersion ? ['--spec-version', options.specVersion, '--force'] : [];
    const child = spawn(
      process.execPath,
      ['--import', REGISTER, CLI, 'server', '--url', url, '--scenario', scenario, ...version, '-o', dir],
      {
        cwd: outDir,
        env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout.on('data', (b: Buffer) => output.push(b.toString()));
    child.stderr.on('data', (b: Buffer) => output.push(b.toString()));
    child.on('exit', resolve);
  });
  const results = fs.existsSync(dir) ? fs.readdirSync(dir).map((d) => path.join(dir, d, 'checks.json')) : [];
  if (results.length !== 1 || !fs.existsSync(results[0]))
    throw new Error(`conformance ${scenario} wrote no results (exit ${code}):\n${output.join('').slice(-3000)}`);
  return JSON.parse(fs.readFileSync(results[0], 'utf8')) as ConformanceCheck[];
}

/** Runs the scenarios one at a time (each is a node process; the machine has two cores): their checks by scenario. */
export async function runConformanceScenarios(
  url: string,
  scenarios: readonly string[],
  outDir: string,
): Promise<Map<string, ConformanceCheck[]>> {
  const results = new Map<string, ConformanceCheck[]>();
  for (const scenario of scenarios) results.set(scenario, await runConformanceScenario(url, scenario, outDir));
  return results;
}

/** The checks that failed or warned, except those exempted by id while their message matches. */
export function conformanceProblems(checks: ConformanceCheck[], exempt: Record<string, RegExp> = {}) {
  return checks
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .filter((c) => !exempt[c.id]?.test(c.errorMessage ?? ''))
    .map((c) => ({ id: c.id, status: c.status, error: c.errorMessage }));
}
