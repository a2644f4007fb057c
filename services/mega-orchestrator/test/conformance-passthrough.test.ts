/**
 * What the gateway carries from an MCP server to its clients, judged by the official conformance
 * suite: its fixture tools and prompts (test/fixtures/conformance-fixture-server.ts, over stdio)
 * behind a real gateway, and the suite's scenarios for them run against the gateway's /mcp: every
 * content type, progress, tool errors, prompts with arguments, images and embedded resources,
 * completions, and JSON Schema 2020-12 kept word for word. Every check must pass.
 */
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { conformanceProblems, runConformanceScenario, type ConformanceCheck } from '@mcp-fleet/testing/conformance';
import { startGatewayWithStdioServer, type RunningGateway } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'conformance-fixture-server.ts');

const SCENARIOS = [
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-progress',
  'tools-call-error',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'completion-complete',
  'json-schema-2020-12',
  // the tasks extension (gateway tasks over the fixture's task-supporting tools)
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-headers',
  'tasks-required-task-error',
  'tasks-request-state-removal',
  'tasks-dispatch-and-envelope',
];

/** Checks that need an elicitation round trip (input_required), which gateway tasks never ask for. */
const NEEDS_ELICITATION: Record<string, RegExp> = {
  'tasks-result-type-complete-on-non-task-responses': /No service offers a tool named "confirm_delete"/,
};

describe('an MCP server behind the gateway, judged by the official conformance suite', () => {
  const tmp = tempDir('mcp-fleet-passthrough-');
  let g: RunningGateway;
  const results = new Map<string, ConformanceCheck[]>();

  beforeAll(async () => {
    g = await startGatewayWithStdioServer('conformance-fixture', FIXTURE, tmp.dir, 'test_simple_text');
    // one scenario at a time: each is a node process, and the machine has two cores
    for (const scenario of SCENARIOS) results.set(scenario, await runConformanceScenario(`${g.url}/mcp`, scenario, tmp.dir));
  }, 180_000);

  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  it.each(SCENARIOS)('%s', (scenario) => {
    const checks = results.get(scenario)!;
    expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
    expect(conformanceProblems(checks, NEEDS_ELICITATION)).toEqual([]);
  });
});
