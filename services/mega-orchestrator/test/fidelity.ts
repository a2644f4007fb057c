/**
 * Fidelity (issue 29): an MCP server behind the gateway must work as well as it does directly. The
 * official conformance suite's required server scenarios of a revision, run against a server and
 * against a gateway in front of it; what passes directly must pass through the gateway.
 * fidelity.test.ts asserts it; fidelity-report.ts prints the counts.
 */
import path from 'node:path';
import {
  conformanceProblems,
  runConformanceScenario,
  runRequiredServerScenarios,
  scenarioPassed,
  type ConformanceCheck,
  type SpecRevision,
} from '@mcp-fleet/testing/conformance';
import type { McpServerSpec } from '../src/core/types';

export const ERAS: SpecRevision[] = ['2025-11-25', '2026-07-28'];

const DUAL_ERA = path.join(__dirname, 'fixtures', 'dual-era-mcp-server.ts');

/**
 * The ways the gateway is put in front of the dual-era fixture: over Streamable HTTP (at `url`) and
 * over stdio (a child it starts), each declared 2026-07-28 and left for the gateway to find.
 */
export function dualEraFronts(url: string): { name: string; mcp: McpServerSpec }[] {
  const declared = { protocolVersion: '2026-07-28' as const };
  const http = { transport: 'streamable-http' as const, url, headers: {} };
  const repo = path.resolve(__dirname, '../../..');
  const stdio = {
    transport: 'stdio' as const,
    command: process.execPath,
    args: ['--import', 'tsx', DUAL_ERA, 'stdio'],
    cwd: repo,
    env: {},
  };
  return [
    { name: 'HTTP, declared', mcp: { ...http, ...declared } },
    { name: 'HTTP, found', mcp: http },
    { name: 'stdio, declared', mcp: { ...stdio, ...declared } },
    { name: 'stdio, found', mcp: stdio },
  ];
}

export interface ScenarioCounts {
  passed: Set<string>;
  /** The failing checks of each scenario that failed. */
  failed: Map<string, ReturnType<typeof conformanceProblems>>;
  total: number;
}

/**
 * The revision's required server scenarios against an MCP endpoint, as passed and failed. A scenario
 * of `retry` (through the gateway: those that passed directly) that fails is run once more on its
 * own, at the same revision, and counts as failed only if it fails again: some checks give the
 * server a fixed time (server-stateless reads the answer of a 100 ms tool within 500 ms), which a
 * machine running the rest of the test suite beside it can exceed. A failure that is the server's
 * or the gateway's fails both times.
 */
export async function requiredScenarioCounts(
  url: string,
  era: SpecRevision,
  outDir: string,
  retry: ReadonlySet<string> = new Set(),
): Promise<ScenarioCounts> {
  const results: Map<string, ConformanceCheck[]> = await runRequiredServerScenarios(url, era, outDir);
  const passed = new Set<string>();
  const failed = new Map<string, ReturnType<typeof conformanceProblems>>();
  for (const [scenario, first] of results) {
    const again = !scenarioPassed(first) && retry.has(scenario);
    const checks = again ? await runConformanceScenario(url, scenario, outDir, { specVersion: era }) : first;
    if (scenarioPassed(checks)) passed.add(scenario);
    else
      failed.set(
        scenario,
        conformanceProblems(checks).filter((c) => c.status === 'FAILURE'),
      );
  }
  return { passed, failed, total: results.size };
}

/** Scenarios that pass directly but not through the gateway, with the gateway's failing checks. */
export function lostThroughGateway(direct: ScenarioCounts, gateway: ScenarioCounts): Record<string, unknown> {
  return Object.fromEntries([...direct.passed].filter((s) => !gateway.passed.has(s)).map((s) => [s, gateway.failed.get(s)]));
}
