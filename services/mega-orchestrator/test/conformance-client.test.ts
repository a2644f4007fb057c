/**
 * The official conformance suite's client scenarios with the gateway as the client under test: each
 * scenario's server sits behind the gateway (found, not declared), and fixtures/conformance-client.ts
 * drives the gateway with an MCP client of the scenario's revision. What the suite checks is what the
 * gateway sends that server: its handshake and wire messages, the 2026-07-28 headers (Mcp-Method,
 * Mcp-Name, the Mcp-Param headers of x-mcp-header arguments), `_meta`, requestState echoes, schemas
 * passed on as listed, answers to elicitation, SSE retry timing.
 *
 * Every scenario a revision requires runs, except the auth/* ones: the gateway is no OAuth client of
 * the servers behind it (docs/gateway.md: a token for such a server goes in its entry's `headers`).
 * json-schema-2020-12-preservation is reported by the suite but not yet required; it runs too.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from '@mcp-fleet/testing';
import {
  conformanceProblems,
  requiredClientScenarios,
  runConformanceClientScenario,
  type ConformanceCheck,
  type SpecRevision,
} from '@mcp-fleet/testing/conformance';

// run by the suite from its output folder: tsx named by its file, the driver by its path
const TSX = pathToFileURL(require.resolve('tsx')).href;
const DRIVER = `${process.execPath} --import ${TSX} ${path.join(__dirname, 'fixtures', 'conformance-client.ts')}`;
const EXTRA = ['json-schema-2020-12-preservation'];
const REVISIONS: SpecRevision[] = ['2025-11-25', '2026-07-28'];

const runs = REVISIONS.flatMap((revision) =>
  [...requiredClientScenarios(revision).filter((s) => !s.startsWith('auth/')), ...EXTRA].map((scenario) => ({ revision, scenario })),
);

describe('the conformance suite’s client scenarios, the gateway as the client', () => {
  const tmp = tempDir('mcp-fleet-conformance-client-');
  afterAll(() => tmp.cleanup());

  it('runs every required non-auth client scenario of both revisions', () => {
    expect(runs.map((r) => `${r.revision} ${r.scenario}`)).toEqual(
      expect.arrayContaining([
        '2025-11-25 initialize',
        '2025-11-25 tools_call',
        '2025-11-25 elicitation-sep1034-client-defaults',
        '2025-11-25 sse-retry',
        '2026-07-28 request-metadata',
        '2026-07-28 sep-2322-client-request-state',
        '2026-07-28 http-custom-headers',
        '2026-07-28 json-schema-ref-no-deref',
      ]),
    );
  });

  it.each(runs.map((r) => [r.revision, r.scenario] as const))(
    '%s %s: every check passes',
    async (revision, scenario) => {
      const checks: ConformanceCheck[] = await runConformanceClientScenario(DRIVER, scenario, tmp.dir, { specVersion: revision });
      expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
      expect(conformanceProblems(checks)).toEqual([]);
    },
    90_000,
  );
});
