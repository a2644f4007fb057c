/**
 * A 2026-07-28 MCP server behind the gateway that offers the tasks extension itself (SEP-2663) and
 * runs tools as its own tasks, some of them task-required: the gateway declares the extension in
 * that server's tools/call (and only there), follows the server's task inside its one downstream
 * call (tasks/get; what the task asks put to the caller and answered with tasks/update; tasks/cancel
 * when the call is given up), and its callers of either era get the result as from any tool. The
 * server is the modern fixture with `tasks: true` (a real HTTP server), declared 2026-07-28 and found,
 * and the same fixture over stdio (MODERN_TASKS=1), declared.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { conformanceProblems, runConformanceScenarios, scenarioPassed } from '@mcp-fleet/testing/conformance';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { post2026, startGatewayWithMcpServer, until, type RunningGateway } from './helpers';
import { startModernServer, TASKS_EXTENSION, type ModernServer, type Received } from './fixtures/modern-mcp-server';

const V = '2026-07-28' as const;
const CAPS_KEY = 'io.modelcontextprotocol/clientCapabilities';
/** A 2026-07-28 caller of the gateway that declares the extension (and can be asked things). */
const META_TASKS = {
  'io.modelcontextprotocol/protocolVersion': V,
  [CAPS_KEY]: { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } },
};
/** The conformance suite's tasks scenarios whose tools the fixture serves. */
const SCENARIOS = ['tasks-lifecycle', 'tasks-required-task-error', 'tasks-mrtr-input'];
/** The fixture's tools the scenarios expect as tasks. */
const TASK_TOOLS = 'slow_compute,failing_job,protocol_error_job,confirm_delete,multi_input';

type Rpc = { result?: Record<string, any>; error?: { code: number; message: string; data?: unknown } };

async function rpc(url: string, method: string, params: Record<string, unknown>): Promise<Rpc> {
  return (await (await post2026(url, method, params, { meta: META_TASKS, headers: tasksName(params) })).json()) as Rpc;
}

/** The Mcp-Name of a tasks/* request (post2026 names params.name only). */
const tasksName = (params: Record<string, unknown>) => (typeof params.taskId === 'string' ? { 'mcp-name': params.taskId } : undefined);

/** A tools/call of the gateway as a 2026-07-28 client: its result, read from the gateway's own task when it made one. */
async function call2026(url: string, name: string, args: Record<string, unknown>): Promise<Rpc> {
  const first = await rpc(url, 'tools/call', { name, arguments: args });
  if (first.result?.resultType !== 'task') return first;
  const end = Date.now() + 15_000;
  for (;;) {
    const got = await rpc(url, 'tasks/get', { taskId: first.result.taskId });
    const status = got.result?.status;
    if (status === 'completed') return { result: got.result!.result };
    if (status === 'failed' || status === 'cancelled' || got.error) return { error: got.result?.error ?? got.error };
    if (Date.now() > end) throw new Error(`the gateway's task ${first.result.taskId} did not end: ${JSON.stringify(got)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function client2025(url: string, answer?: (message: string) => Record<string, unknown>): Promise<Client> {
  const client = new Client({ name: 'v1', version: '1.0.0' }, { capabilities: answer ? { elicitation: {} } : {} });
  if (answer) client.setRequestHandler(ElicitRequestSchema, async (req) => ({ action: 'accept', content: answer(req.params.message) }));
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  return client;
}

const text = (r: CallToolResult) => (r.content[0] as { text: string }).text;
const received = (server: ModernServer, method: string) => server.requests.filter((r) => r.method === method);
const declaresTasks = (r: Received) => r.params._meta?.[CAPS_KEY]?.extensions?.[TASKS_EXTENSION] !== undefined;
/** The fixture's tasks the gateway (or anyone) asked tasks/get of. */
const taskIdsOf = (server: ModernServer) => new Set(received(server, 'tasks/get').map((r) => String(r.params.taskId)));

/** The modern fixture, with its tasks or without, behind a gateway: started before the describe's tests, stopped after. */
function behindGateway(options: { tasks: boolean; declared: boolean; overrides?: Record<string, string> }) {
  const f = {} as { server: ModernServer; g: RunningGateway };
  const tmp = tempDir('mcp-fleet-downstream-tasks-');
  beforeAll(async () => {
    f.server = await startModernServer({ tasks: options.tasks });
    const mcp = {
      transport: 'streamable-http' as const,
      url: f.server.url,
      headers: {},
      ...(options.declared ? { protocolVersion: V } : {}),
    };
    const tool = options.tasks ? 'task_report' : 'modern_meta_echo';
    f.g = await startGatewayWithMcpServer(options.tasks ? 'tasker' : 'plain', mcp, tmp.dir, tool, options.overrides);
  });
  afterAll(async () => {
    await f.g?.stop();
    await f.server?.stop();
    tmp.cleanup();
  });
  return f;
}

describe.each([
  ['declared 2026-07-28', true],
  ['found', false],
])('a 2026-07-28 server with its own tasks behind the gateway (Streamable HTTP, %s)', (_how, declared) => {
  // slow_compute runs as the gateway's own task for a caller that declares the extension; the rest is
  // answered synchronously (a 2026-07-28 listing carries no execution.taskSupport for the gateway to go by)
  const f = behindGateway({ tasks: true, declared, overrides: { MCP_TASK_TOOLS: 'slow_compute' } });

  it('a 2026-07-28 client gets a task-required tool’s result; the gateway declared the extension and followed the server’s task', async () => {
    const done = await call2026(f.g.url, 'task_report', { topic: 'tides' });
    expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'Report on tides.' }] });
    const calls = received(f.server, 'tools/call').filter((r) => r.params.name === 'task_report');
    expect(calls.length).toBe(1);
    expect(declaresTasks(calls[0])).toBe(true);
    // followed with tasks/get, each naming its method and task in the headers (the fixture refuses them otherwise)
    const gets = received(f.server, 'tasks/get');
    expect(gets.length).toBeGreaterThan(0);
    expect(gets.every(declaresTasks)).toBe(true);
    expect(gets[0].headers['mcp-method']).toBe('tasks/get');
    expect(gets[0].headers['mcp-name']).toBe(gets[0].params.taskId);
    expect(gets[0].params._meta['io.modelcontextprotocol/protocolVersion']).toBe(V);
  });

  it('a tools/call the server runs as its task carries the Mcp-Param headers of its x-mcp-header arguments (SEP-2243)', async () => {
    const client = await client2025(f.g.url);
    try {
      const done = (await client.callTool({ name: 'region_report', arguments: { region: 'São Paulo' } })) as CallToolResult;
      expect(text(done)).toBe('Report for São Paulo.');
    } finally {
      await client.close();
    }
    const calls = received(f.server, 'tools/call').filter((r) => r.params.name === 'region_report');
    expect(calls.length).toBe(1);
    expect(declaresTasks(calls[0])).toBe(true); // the raw request of a task call, not the SDK client's
    // not printable ASCII: Base64 of its UTF-8
    expect(calls[0].headers['mcp-param-region']).toBe(`=?base64?${Buffer.from('São Paulo', 'utf8').toString('base64')}?=`);
  });

  it('a 2025-era client gets the result too, a tool error as the tool’s error, a failed task as its error', async () => {
    const client = await client2025(f.g.url);
    try {
      const report = (await client.callTool({ name: 'task_report', arguments: { topic: 'reefs' } })) as CallToolResult;
      expect(text(report)).toBe('Report on reefs.');
      const failing = (await client.callTool({ name: 'failing_job', arguments: {} })) as CallToolResult;
      expect(failing.isError).toBe(true);
      expect(JSON.stringify(failing.content)).toContain('The job failed.');
      // a task that failed (status failed, its JSON-RPC error inlined): the call's error, with the server's message
      const crashed = await client.callTool({ name: 'protocol_error_job', arguments: {} }).then(
        (r) => JSON.stringify(r),
        (err: Error) => err.message,
      );
      expect(crashed).toContain('The job crashed.');
      expect(crashed).toContain('-32603');
    } finally {
      await client.close();
    }
  });

  it('a question inside the server’s task is put to the caller, and its answer reaches the server with tasks/update', async () => {
    const asked: string[] = [];
    const client = await client2025(f.g.url, (message) => (asked.push(message), { confirm: true }));
    try {
      const done = (await client.callTool({ name: 'confirm_delete', arguments: { filename: 'notes.txt' } })) as CallToolResult;
      expect(text(done)).toBe('Deleted notes.txt.');
      expect(asked).toEqual(['Delete notes.txt?']);
      const updates = received(f.server, 'tasks/update');
      expect(updates.at(-1)!.params.inputResponses).toEqual({ confirm: { action: 'accept', content: { confirm: true } } });
      expect(updates.at(-1)!.headers['mcp-name']).toBe(updates.at(-1)!.params.taskId);
    } finally {
      await client.close();
    }
  });

  it('two questions at once are both put to the caller and answered in one tasks/update', async () => {
    const client = await client2025(f.g.url, (message) => ({ name: message.startsWith('First') ? 'Ada' : 'Lin' }));
    try {
      const done = (await client.callTool({ name: 'multi_input', arguments: {} })) as CallToolResult;
      expect(text(done)).toBe('Got Ada and Lin.');
      expect(Object.keys(received(f.server, 'tasks/update').at(-1)!.params.inputResponses).sort()).toEqual(['first', 'second']);
    } finally {
      await client.close();
    }
  });

  it('a 2025-era caller that cancels its call cancels the server’s task', async () => {
    const client = await client2025(f.g.url);
    const before = taskIdsOf(f.server);
    const ac = new AbortController();
    const call = client.callTool({ name: 'slow_compute', arguments: { seconds: 30, label: 'abort' } }, undefined, { signal: ac.signal });
    const failed = call.then(
      () => 'answered',
      () => 'aborted',
    );
    try {
      // the gateway is following the task (a tasks/get of a task not seen before)
      await until(() => [...taskIdsOf(f.server)].some((id) => !before.has(id)), 5000);
      const taskId = [...taskIdsOf(f.server)].find((id) => !before.has(id))!;
      ac.abort();
      expect(await failed).toBe('aborted');
      await until(() => received(f.server, 'tasks/cancel').some((r) => r.params.taskId === taskId), 5000);
      const cancel = received(f.server, 'tasks/cancel').find((r) => r.params.taskId === taskId)!;
      expect(declaresTasks(cancel)).toBe(true);
      expect(cancel.headers['mcp-name']).toBe(taskId);
    } finally {
      await client.close();
    }
  });

  it('tasks/cancel of the gateway’s own task cancels the server’s task', async () => {
    const before = taskIdsOf(f.server);
    const created = await rpc(f.g.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 30, label: 'gateway-task' } });
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    await until(() => [...taskIdsOf(f.server)].some((id) => !before.has(id)), 5000);
    const taskId = [...taskIdsOf(f.server)].find((id) => !before.has(id))!;
    const ack = await rpc(f.g.url, 'tasks/cancel', { taskId: created.result!.taskId });
    expect(ack.error).toBeUndefined();
    await until(() => received(f.server, 'tasks/cancel').some((r) => r.params.taskId === taskId), 5000);
    const after = await rpc(f.g.url, 'tasks/get', { taskId: created.result!.taskId });
    expect(after.result?.status).toBe('cancelled');
  });
});

describe('a 2026-07-28 stdio server with its own tasks behind the gateway', () => {
  const tmp = tempDir('mcp-fleet-downstream-tasks-stdio-');
  const methodsDir = path.join(tmp.dir, 'methods');
  const methods = () => fs.readFileSync(path.join(methodsDir, 'tasker.methods'), 'utf8').trim().split('\n');
  let g: RunningGateway;
  beforeAll(async () => {
    fs.mkdirSync(methodsDir);
    g = await startGatewayWithMcpServer(
      'tasker',
      {
        transport: 'stdio',
        command: process.execPath,
        args: ['--import', 'tsx', path.join(__dirname, 'fixtures', 'modern-mcp-server.ts'), 'stdio'],
        cwd: path.resolve(__dirname, '../../..'),
        env: { MODERN_TASKS: '1', METHODS_FILE: path.join(methodsDir, 'tasker.methods') },
        // sandboxed: the file it writes lies in a directory its declaration makes writable
        sandbox: { writable: [methodsDir] },
        protocolVersion: V,
      },
      tmp.dir,
      'task_report',
      { HEALTH_TIMEOUT_MS: '10000' },
    );
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  it('callers of both eras get a task-required tool’s result; the gateway followed the task over stdio (tasks/get)', async () => {
    const done = await call2026(g.url, 'task_report', { topic: 'tides' });
    expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'Report on tides.' }] });
    const client = await client2025(g.url);
    try {
      expect(text((await client.callTool({ name: 'task_report', arguments: { topic: 'reefs' } })) as CallToolResult)).toBe(
        'Report on reefs.',
      );
    } finally {
      await client.close();
    }
    expect(methods().filter((m) => m === 'tools/call').length).toBeGreaterThanOrEqual(2);
    expect(methods()).toContain('tasks/get');
  }, 30_000);
});

describe('a server’s task outliving the gateway call’s time limit', () => {
  const f = behindGateway({ tasks: true, declared: true, overrides: { DOWNSTREAM_TIMEOUT_MS: '1500' } });

  it('is cancelled at the server when the call times out, and the caller is told', async () => {
    const client = await client2025(f.g.url);
    try {
      const outcome = await client.callTool({ name: 'slow_compute', arguments: { seconds: 30, label: 'timeout' } }).then(
        (r) => JSON.stringify(r),
        (err: Error) => err.message,
      );
      expect(outcome).toContain('did not answer within 1500 ms');
      await until(() => received(f.server, 'tasks/cancel').length === 1, 5000);
      const [cancel] = received(f.server, 'tasks/cancel');
      expect(received(f.server, 'tasks/get').map((r) => r.params.taskId)).toContain(cancel.params.taskId);
    } finally {
      await client.close();
    }
  });
});

describe('a 2026-07-28 server that does not offer the extension', () => {
  const f = behindGateway({ tasks: false, declared: true });

  it('is never sent the extension, though the gateway’s caller declared it', async () => {
    const echoed = await call2026(f.g.url, 'modern_echo', { text: 'plain' });
    expect(echoed.result).toMatchObject({ content: [{ type: 'text', text: 'plain' }] });
    const asked = await rpc(f.g.url, 'tools/call', { name: 'modern_meta_echo', arguments: {} });
    expect(asked.result!.structuredContent.meta[CAPS_KEY]).toEqual({ elicitation: {} });
    const calls = received(f.server, 'tools/call');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(f.server.requests.filter(declaresTasks)).toEqual([]);
    expect(f.server.methods.filter((m) => m.startsWith('tasks/'))).toEqual([]);
  });
});

describe('the conformance suite’s tasks scenarios, directly against the fixture and through the gateway', () => {
  // the gateway's own tasks for the scenarios' task tools (it cannot learn them from a 2026-07-28
  // listing); the window wider than its default, as in conformance-passthrough
  const f = behindGateway({ tasks: true, declared: true, overrides: { MCP_TASK_MINT_MS: '400', MCP_TASK_TOOLS: TASK_TOOLS } });
  const tmp = tempDir('mcp-fleet-downstream-tasks-conformance-');
  let direct: Map<string, Parameters<typeof scenarioPassed>[0]>;
  let through: Map<string, Parameters<typeof scenarioPassed>[0]>;

  beforeAll(async () => {
    direct = await runConformanceScenarios(f.server.url, SCENARIOS, tmp.dir);
    through = await runConformanceScenarios(`${f.g.url}/mcp`, SCENARIOS, tmp.dir);
  }, 180_000);
  afterAll(() => tmp.cleanup());

  it.each(SCENARIOS)('%s passes directly', (scenario) => {
    const d = direct.get(scenario)!;
    expect(conformanceProblems(d)).toEqual([]);
    expect(scenarioPassed(d)).toBe(true);
  });

  it.each(SCENARIOS)('%s passes through the gateway', (scenario) => {
    const t = through.get(scenario)!;
    expect(conformanceProblems(t)).toEqual([]);
    expect(scenarioPassed(t)).toBe(true);
  });

  it('tasks-required-task-error: a 2026-07-28 caller that did not declare the extension is not declared for; the server’s -32021 reaches it', () => {
    const byGateway = (r: Received) => r.params._meta?.['io.modelcontextprotocol/clientInfo']?.name === 'mcp-fleet-gateway';
    const failingJob = received(f.server, 'tools/call').filter((r) => byGateway(r) && r.params.name === 'failing_job');
    expect(failingJob.length).toBeGreaterThan(0);
    expect(failingJob.some((r) => !declaresTasks(r))).toBe(true);
  });

  it('the gateway followed the fixture’s tasks for them (it declared the extension and polled)', () => {
    const byGateway = (r: Received) => r.params._meta?.['io.modelcontextprotocol/clientInfo']?.name === 'mcp-fleet-gateway';
    expect(received(f.server, 'tools/call').filter((r) => byGateway(r) && declaresTasks(r)).length).toBeGreaterThan(0);
    expect(received(f.server, 'tasks/get').filter(byGateway).length).toBeGreaterThan(0);
    expect(received(f.server, 'tasks/update').filter(byGateway).length).toBeGreaterThan(0);
  });
});
