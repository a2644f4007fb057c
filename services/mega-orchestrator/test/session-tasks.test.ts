/**
 * Tasks in 2025-11-25 sessions (SEP-1686): a task-augmented tools/call answers a task at once and
 * runs on; tasks/get, tasks/result, tasks/list and tasks/cancel serve it, within the session only.
 * The tools are an MCP server's (the conformance fixture over stdio, a real child process), whose
 * execution.taskSupport the gateway lists; the official SDK client drives a task to its result.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { tempDir } from '@mcp-fleet/testing';
import { initSession, startGatewayWithStdioServer, type RunningGateway } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'conformance-fixture-server.ts');

describe('tasks in 2025-11-25 sessions', () => {
  const tmp = tempDir('mcp-fleet-session-tasks-');
  let g: RunningGateway;

  beforeAll(async () => {
    g = await startGatewayWithStdioServer('conformance-fixture', FIXTURE, tmp.dir, 'slow_compute', {
      MCP_TASK_POLL_MS: '100',
      MCP_TASK_TTL_MS: '60000',
    });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  let nextId = 1;
  /** One JSON-RPC request in a session: its result or error. */
  const rpc = async (sid: string, method: string, params: Record<string, unknown> = {}) => {
    const res = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    });
    return (await res.json()) as { result?: any; error?: { code: number; message: string } };
  };
  const until = async <T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 10_000): Promise<T> => {
    const end = Date.now() + ms;
    for (;;) {
      const v = await read();
      if (done(v) || Date.now() > end) return v;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('declares tasks and lists each tool’s taskSupport', async () => {
    const client = new Client({ name: 'tasks-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
    try {
      expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const { tools } = await client.listTools();
      const support = (name: string) => tools.find((t) => t.name === name)?.execution?.taskSupport;
      // a downstream's required task is an option here: a call without params.task runs to its end
      expect([support('slow_compute'), support('failing_job'), support('greet')]).toEqual(['optional', 'optional', undefined]);
    } finally {
      await client.close();
    }
  });

  it('runs a call as a task for the official SDK client: created, working, then its result', async () => {
    const client = new Client({ name: 'tasks-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
    try {
      await client.listTools(); // the client learns which tools run as tasks
      const seen: string[] = [];
      let result: unknown;
      for await (const m of client.experimental.tasks.callToolStream(
        { name: 'slow_compute', arguments: { seconds: 0.3 } },
        CallToolResultSchema,
      )) {
        seen.push(m.type === 'taskStatus' ? `status:${m.task.status}` : m.type);
        if (m.type === 'result') result = m.result;
        if (m.type === 'error') throw m.error;
      }
      expect(seen[0]).toBe('taskCreated');
      expect(seen.at(-1)).toBe('result');
      expect(result).toMatchObject({ content: [expect.objectContaining({ type: 'text' })] });
      expect((result as { isError?: boolean }).isError).toBeFalsy();
    } finally {
      await client.close();
    }
  });

  it('serves tasks/get, tasks/list, tasks/result and tasks/cancel on the wire, within the session', async () => {
    const sid = await initSession(g.url);
    const created = await rpc(sid, 'tools/call', { name: 'slow_compute', arguments: { seconds: 5 }, task: { ttl: 999_999_999 } });
    const task = created.result.task;
    // the ttl asked is capped at MCP_TASK_TTL_MS; the poll interval is MCP_TASK_POLL_MS
    expect(task).toMatchObject({ taskId: expect.any(String), status: 'working', ttl: 60_000, pollInterval: 100 });
    expect((await rpc(sid, 'tasks/get', { taskId: task.taskId })).result).toMatchObject({ taskId: task.taskId, status: 'working' });
    expect((await rpc(sid, 'tasks/list')).result.tasks.map((t: { taskId: string }) => t.taskId)).toContain(task.taskId);
    // another session sees none of it
    const other = await initSession(g.url);
    expect((await rpc(other, 'tasks/get', { taskId: task.taskId })).error?.code).toBe(-32602);
    expect((await rpc(other, 'tasks/list')).result.tasks).toEqual([]);
    expect((await rpc(other, 'tasks/cancel', { taskId: task.taskId })).error?.code).toBe(-32602);
    // cancelled: at once, and for good
    expect((await rpc(sid, 'tasks/cancel', { taskId: task.taskId })).result).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect((await rpc(sid, 'tasks/get', { taskId: task.taskId })).result.status).toBe('cancelled');
    expect((await rpc(sid, 'tasks/cancel', { taskId: task.taskId })).error?.code).toBe(-32602); // a terminal task

    const quick = (await rpc(sid, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} })).result.task;
    const done = await until(
      () => rpc(sid, 'tasks/get', { taskId: quick.taskId }),
      (r) => r.result?.status === 'completed',
    );
    expect(done.result.status).toBe('completed');
    const answer = await rpc(sid, 'tasks/result', { taskId: quick.taskId });
    expect(answer.result).toMatchObject({
      content: [expect.objectContaining({ type: 'text' })],
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: quick.taskId } },
    });
  });

  it("answers bad params of the methods the SDK serves itself -32602, naming the field (the SDK's parse made them -32603 with zod's dump)", async () => {
    const sid = await initSession(g.url);
    for (const [method, params, field] of [
      ['tasks/get', {}, 'params.taskId'],
      ['tasks/get', { taskId: 42 }, 'params.taskId'],
      ['tasks/result', {}, 'params.taskId'],
      ['tasks/cancel', { taskId: ['x'] }, 'params.taskId'],
      ['logging/setLevel', {}, 'params.level'],
      ['logging/setLevel', { level: 'loud' }, 'params.level'],
    ] as const) {
      const answer = await rpc(sid, method, params);
      expect({ method, params, code: answer.error?.code }).toEqual({ method, params, code: -32602 });
      expect(answer.error?.message).toContain(`Invalid params for ${method}: ${field}:`);
      expect(answer.error?.message).not.toMatch(/\[\s*\{/); // no zod dump
    }
    // good params still reach the SDK's handler
    expect((await rpc(sid, 'logging/setLevel', { level: 'error' })).result).toEqual({});
    expect((await rpc(sid, 'tasks/get', { taskId: 'nope' })).error?.code).toBe(-32602);
  });

  it('fails a task whose tool reports an error, with that result', async () => {
    const sid = await initSession(g.url);
    const { task } = (await rpc(sid, 'tools/call', { name: 'failing_job', arguments: {}, task: {} })).result;
    const failed = await until(
      () => rpc(sid, 'tasks/get', { taskId: task.taskId }),
      (r) => r.result?.status === 'failed',
    );
    expect(failed.result.status).toBe('failed');
    expect((await rpc(sid, 'tasks/result', { taskId: task.taskId })).result).toMatchObject({ isError: true });
  });

  it('refuses a task for a tool that does not run as one (-32601), an unknown tool (-32602), and tasks without a session', async () => {
    const sid = await initSession(g.url);
    expect((await rpc(sid, 'tools/call', { name: 'greet', arguments: {}, task: {} })).error?.code).toBe(-32601);
    expect((await rpc(sid, 'tools/call', { name: 'no_such_tool', arguments: {}, task: {} })).error?.code).toBe(-32602);
    expect((await rpc(sid, 'tasks/get', { taskId: 'nope' })).error?.code).toBe(-32602);
    // without task, the same tool runs to its end as before
    expect((await rpc(sid, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })).result.isError).toBeFalsy();
    const sessionless = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow_compute', arguments: {}, task: {} } }),
    });
    const body = (await sessionless.json()) as { error?: { code: number; message: string } };
    expect(body.error).toMatchObject({ code: -32602, message: expect.stringContaining('need a session') });
  });
});
