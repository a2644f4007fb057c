/**
 * What the gateway carries from an MCP server to its clients, judged by the official conformance
 * suite: its fixture tools and prompts (test/fixtures/conformance-fixture-server.ts, over stdio)
 * behind a real gateway, and the suite's scenarios for them run against the gateway's /mcp: every
 * content type, progress, tool errors, prompts with arguments, images and embedded resources,
 * completions, and JSON Schema 2020-12 kept word for word. Every check must pass.
 */
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { conformanceProblems, runConformanceScenarios, type ConformanceCheck } from '@mcp-fleet/testing/conformance';
import { post2026, startGatewayWithStdioServer, type RunningGateway } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'conformance-fixture-server.ts');

const SCENARIOS = [
  'tools-call-simple-text',
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-progress',
  'tools-call-error',
  // what the server asks its client during a call, put to the gateway's caller (a 2025-era session)
  'tools-call-elicitation',
  'tools-call-with-logging',
  'tools-call-sampling',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'prompts-get-simple',
  'prompts-get-with-args',
  'prompts-get-embedded-resource',
  'prompts-get-with-image',
  'completion-complete',
  'resources-list',
  'resources-read-text',
  'resources-read-binary',
  'resources-templates-read',
  'resources-subscribe',
  'resources-unsubscribe',
  'json-schema-2020-12',
  // the stateless revision's own rules with the fixture's diagnostic tools behind the gateway
  'server-stateless',
  // the tasks extension (gateway tasks over the fixture's task-supporting tools)
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-headers',
  'tasks-required-task-error',
  'tasks-request-state-removal',
  'tasks-dispatch-and-envelope',
  'tasks-mrtr-input',
  // SEP-2663 with SEP-2322: input_required first (no task), then the task on the round that answers
  'tasks-mrtr-composition',
];

/**
 * Scenarios whose server asks its caller during a call, run on a gateway and fixture of their own: a
 * 2025-era stdio server's question names no call, so the gateway puts it only to the one call in
 * flight on the connection (calls.ts clientRequest), and a task another scenario left running there
 * would make it refuse to guess (a rehearsal under load failed tasks-mrtr-input so).
 */
const ISOLATED = new Set(['tasks-mrtr-input', 'tasks-mrtr-composition']);

describe('an MCP server behind the gateway, judged by the official conformance suite', () => {
  const tmp = tempDir('mcp-fleet-passthrough-');
  let g: RunningGateway;
  let isolated: RunningGateway;
  let results: Map<string, ConformanceCheck[]>;

  beforeAll(async () => {
    // the task window wider than its 100 ms default: a question asked at once (test_tool_with_task) still
    // comes within it when the suite's other workers load the machine (the fixture asks 1200 ms in otherwise)
    g = await startGatewayWithStdioServer('conformance-fixture', FIXTURE, tmp.dir, 'test_simple_text', { MCP_TASK_MINT_MS: '400' });
    results = await runConformanceScenarios(
      `${g.url}/mcp`,
      SCENARIOS.filter((s) => !ISOLATED.has(s)),
      tmp.dir,
    );
    isolated = await startGatewayWithStdioServer('conformance-fixture', FIXTURE, path.join(tmp.dir, 'isolated'), 'test_simple_text', {
      MCP_TASK_MINT_MS: '400',
    });
    for (const scenario of ISOLATED)
      results.set(scenario, (await runConformanceScenarios(`${isolated.url}/mcp`, [scenario], tmp.dir)).get(scenario)!);
  }, 240_000);

  afterAll(async () => {
    await isolated?.stop();
    await g?.stop();
    tmp.cleanup();
  });

  it.each(SCENARIOS)('%s', async (scenario) => {
    const checks = results.get(scenario)!;
    expect(checks.filter((c) => c.status === 'SUCCESS').length).toBeGreaterThan(0);
    const problems = conformanceProblems(checks);
    // a task that failed says why in the gateway's task store: shown with the failure (a flake seen once under load)
    const failedTasks = problems.length === 0 ? [] : await failedTaskRows(ISOLATED.has(scenario) ? isolated : g);
    expect({ problems, failedTasks }).toEqual({ problems: [], failedTasks: [] });
  });

  /** The tasks the gateway marked failed (tool, message, error), read from its store. */
  const failedTaskRows = (on: RunningGateway) =>
    (on.gw.ctx.tasks as unknown as { db: { all: <T>(sql: string, params?: unknown[]) => Promise<T[]> } }).db.all<{
      tool: string;
      status_message: string | null;
      error: string | null;
    }>(`SELECT tool, status_message, error FROM tasks WHERE status = 'failed' AND tool <> 'failing_job'`);

  it('lists and reads the server’s resources and templates over 2026-07-28 too; an unknown URI is -32602 with the URI', async () => {
    const rpc = async (method: string, params: Record<string, unknown> = {}) =>
      (await (await post2026(g.url, method, params, { headers: params.uri ? { 'mcp-name': String(params.uri) } : {} })).json()) as {
        result?: any;
        error?: any;
      };
    const listed = await rpc('resources/list');
    expect(listed.result.resources.map((r: { uri: string }) => r.uri)).toEqual([
      'mega://health',
      'mega://services',
      'mega://schema',
      'test://static-text',
      'test://static-binary',
      'test://watched-resource',
      'test://asking-resource',
    ]);
    const templates = await rpc('resources/templates/list');
    expect(templates.result.resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'test://template/{id}/data' })]);
    expect((await rpc('resources/read', { uri: 'test://template/42/data' })).result.contents[0]).toMatchObject({
      uri: 'test://template/42/data',
      text: expect.stringContaining('Data for ID: 42'),
    });
    expect((await rpc('resources/read', { uri: 'test://static-binary' })).result.contents[0]).toMatchObject({ mimeType: 'image/png' });
    for (const uri of ['test://nowhere', 'test://template/1/other', 'file:///etc/passwd'])
      expect((await rpc('resources/read', { uri })).error).toMatchObject({ code: -32602, data: { uri } });
  });
});
