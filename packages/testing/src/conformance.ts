/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in the catalog) run
 * as its CLI, one server scenario at a time, with its results read back from the file it writes. On
 * Node 20 through test/support/conformance-register.mjs (the bundle imports fs.globSync, Node 22+).
 */
import { spawn, spawnSync } from 'node:child_process';
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

const CLI_ENV = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };

/** Runs the suite's CLI with these arguments: its exit code and what it printed. */
function runCli(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  const output: string[] = [];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', REGISTER, CLI, ...args], { cwd, env: CLI_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (b: Buffer) => output.push(b.toString()));
    child.stderr.on('data', (b: Buffer) => output.push(b.toString()));
    child.on('exit', (code) => resolve({ code, output: output.join('') }));
  });
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
  const version = options.specVersion ? ['--spec-version', options.specVersion, '--force'] : [];
  return checksOf(
    `conformance ${scenario}`,
    dir,
    await runCli(['server', '--url', url, '--scenario', scenario, ...version, '-o', dir], outDir),
  );
}

/** The checks a run wrote to its one results file under dir (its output in the error when there is none). */
function checksOf(what: string, dir: string, run: { code: number | null; output: string }): ConformanceCheck[] {
  const results = fs.existsSync(dir) ? fs.readdirSync(dir).map((d) => path.join(dir, d, 'checks.json')) : [];
  if (results.length !== 1 || !fs.existsSync(results[0]))
    throw new Error(`${what} wrote no results (exit ${run.code}):\n${run.output.slice(-3000)}`);
  return JSON.parse(fs.readFileSync(results[0], 'utf8')) as ConformanceCheck[];
}

/**
 * Runs one client scenario: the suite starts its server and runs `command <serverUrl>` as the client
 * under test (MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION, MCP_CONFORMANCE_CONTEXT in
 * its environment); its checks come from the results file it writes under outDir.
 */
export async function runConformanceClientScenario(
  command: string,
  scenario: string,
  outDir: string,
  options: { specVersion?: string; timeoutMs?: number } = {},
): Promise<ConformanceCheck[]> {
  const dir = path.join(outDir, `client-${scenario}-${Math.random().toString(36).slice(2, 8)}`);
  const version = options.specVersion ? ['--spec-version', options.specVersion] : [];
  const timeout = ['--timeout', String(options.timeoutMs ?? 60_000)];
  const args = ['client', '--command', command, '--scenario', scenario, ...version, ...timeout, '-o', dir];
  return checksOf(`conformance client ${scenario}`, dir, await runCli(args, outDir));
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

export type SpecRevision = '2025-11-25' | '2026-07-28';

/** The server scenarios a spec revision requires, as the suite lists them (frozen at its release). */
export function requiredServerScenarios(revision: SpecRevision): string[] {
  return requiredScenarios('server', revision);
}

/** The client scenarios a spec revision requires, as the suite lists them (frozen at its release). */
export function requiredClientScenarios(revision: SpecRevision): string[] {
  return requiredScenarios('client', revision);
}

function requiredScenarios(side: 'server' | 'client', revision: SpecRevision): string[] {
  const out = spawnSync(process.execPath, ['--import', REGISTER, CLI, 'list', `--${side}`, '--requirements', revision], {
    encoding: 'utf8',
    env: CLI_ENV,
  }).stdout;
  const heading = side === 'server' ? 'Server scenarios' : 'Client scenarios';
  const section = out.slice(out.indexOf(heading), out.indexOf('\n\n', out.indexOf(heading)));
  return [...section.matchAll(/^\s+- (\S+)$/gm)].map((m) => m[1]);
}

/**
 * Every server scenario a revision requires, run at that revision's wire in one process of the suite
 * (`--requirements`): the checks of each by scenario (one that wrote none fails with the suite's
 * output). Those it runs but never scores (extensions, pending) are left out.
 */
export async function runRequiredServerScenarios(
  url: string,
  revision: SpecRevision,
  outDir: string,
): Promise<Map<string, ConformanceCheck[]>> {
  const dir = path.join(outDir, `required-${revision}-${Math.random().toString(36).slice(2, 8)}`);
  const { output } = await runCli(['server', '--url', url, '--requirements', revision, '-o', dir], outDir);
  const written = new Map<string, string>();
  for (const d of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const name = /^server-(.+)-\d{4}-\d{2}-\d{2}T/.exec(d)?.[1];
    if (name) written.set(name, path.join(dir, d, 'checks.json'));
  }
  const results = new Map<string, ConformanceCheck[]>();
  for (const scenario of requiredServerScenarios(revision)) {
    const file = written.get(scenario);
    results.set(
      scenario,
      file && fs.existsSync(file)
        ? (JSON.parse(fs.readFileSync(file, 'utf8')) as ConformanceCheck[])
        : [{ id: scenario, status: 'FAILURE', errorMessage: `wrote no results:\n${output.slice(-2000)}` }],
    );
  }
  return results;
}

/** Whether a scenario passed as the suite counts it: some check ran and none failed (warnings allowed). */
export const scenarioPassed = (checks: ConformanceCheck[]): boolean => checks.length > 0 && !checks.some((c) => c.status === 'FAILURE');
