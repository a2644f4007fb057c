/**
 * Fidelity (issue 29): an MCP server behind the gateway must work as well as it does directly. The
 * official conformance suite's required server scenarios of a revision, run against a server and
 * against a gateway in front of it; what passes directly must pass through the gateway.
 * fidelity.test.ts asserts it; fidelity-report.ts prints the counts.
 */
import {
  conformanceProblems,
  runRequiredServerScenarios,
  scenarioPassed,
  type ConformanceCheck,
  type SpecRevision,
} from '@mcp-fleet/testing/conformance';

export const ERAS: SpecRevision[] = ['2025-11-25', '2026-07-28'];

export interface ScenarioCounts {
  passed: Set<string>;
  /** The failing checks of each scenario that failed. */
  failed: Map<string, ReturnType<typeof conformanceProblems>>;
  total: number;
}

/** The revision's required server scenarios against an MCP endpoint, as passed and failed. */
export async function requiredScenarioCounts(url: string, era: SpecRevision, outDir: string): Promise<ScenarioCounts> {
  const results: Map<string, ConformanceCheck[]> = await runRequiredServerScenarios(url, era, outDir);
  const passed = new Set<string>();
  const failed = new Map<string, ReturnType<typeof conformanceProblems>>();
  for (const [scenario, checks] of results)
    if (scenarioPassed(checks)) passed.add(scenario);
    else
      failed.set(
        scenario,
        conformanceProblems(checks).filter((c) => c.status === 'FAILURE'),
      );
  return { passed, failed, total: results.size };
}

/** Scenarios that pass directly but not through the gateway, with the gateway's failing checks. */
export function lostThroughGateway(direct: ScenarioCounts, gateway: ScenarioCounts): Record<string, unknown> {
  return Object.fromEntries([...direct.passed].filter((s) => !gateway.passed.has(s)).map((s) => [s, gateway.failed.get(s)]));
}
