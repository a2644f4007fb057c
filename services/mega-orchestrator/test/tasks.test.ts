/**
 * The MCP tasks extension (io.modelcontextprotocol/tasks, SEP-2663) on the 2026-07-28 endpoint: a
 * real gateway in front of a real kit service and the stdio MCP fixture server, driven by
 * hand-written requests. Every error case the gateway implements is here; the ext-tasks requester
 * and two instances on PostgreSQL follow.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { AppError, defineTool } from '@mcp-fleet/kit';
import { describeWithBackend, pgScratchSchema, tempDir, type PgScratchSchema } from '@mcp-fleet/testing';
import pg from 'pg';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import { newApiKey } from '../src/auth/auth';
import type { DownstreamSpec } from '../src/core/types';
import {
  META_2026,
  sleep,
  startDownstream,
  startGateway,
  startGatewayWithStdioServer,
  type Downstream,
  type RunningGateway,
} from './helpers';

const V = '2026-07-28';
const EXT = 'io.modelcontextprotocol/tasks';
const REPO = path.resolve(__dirname, '../../..');
const FIXTURE = path.join(__dirname, 'fixtures', 'mcp-fixture-server.ts');
const CONFORMANCE_FIXTURE = path.join(__dirname, 'fixtures', 'conformance-fixture-server.ts');
const WITH_TASKS = {
  'io.modelcontextprotocol/protocolVersion': V,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXT]: {} } },
};
const WITHOUT = META_2026;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/;

/** What the jobs service saw: calls started, and calls whose signal was aborted (the gateway hung up). */
const seen = { started: 0, aborted: 0 };

function jobTools() {
  return [
    defineTool({
      name: 'long_job',
      description: 'Works ms milliseconds (max 10 s).',
      input: z.object({ ms: z.number().int().min(0).max(10_000).describe('Milliseconds.') }).strict(),
      annotations: { readOnlyHint: true },
      execution: { taskSupport: 'optional' },
      handler: async ({ ms }, ctx) => {
        seen.started++;
        ctx.signal.addEventListener('abort', () => seen.aborted++);
        await sleep(ms, ctx.signal);
        return { slept: ms };
      },
    }),
    defineTool({
      name: 'stepped_job',
      description: 'Works through steps of 400 ms, reporting each (max 10).',
      input: z.object({ steps: z.number().int().min(1).max(10).describe('Steps.') }).strict(),
      annotations: { readOnlyHint: true },
      execution: { taskSupport: 'optional' },
      handler: async ({ steps }, ctx) => {
        for (let i = 1; i <= steps; i++) {
          await sleep(400, ctx.signal);
          ctx.progress(i, steps, 'Stepping');
        }
        return { steps };
      },
    }),
    defineTool({
      name: 'must_task',
      description: 'Only runs as a task.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true },
      execution: { taskSupport: 'required' },
      handler: () => ({ ok: true }),
    }),
    defineTool({
      name: 'bad_job',
      description: 'Always fails as a tool (isError).',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true },
      execution: { taskSupport: 'optional' },
      handler: () => {
        throw new AppError('CONFLICT', 'the job conflicts with itself');
      },
    }),
    defineTool({
      name: 'big_job',
      description: 'Answers n characters.',
      input: z.object({ n: z.number().int().min(0).max(100_000).describe('Characters.') }).strict(),
      annotations: { readOnlyHint: true },
      execution: { taskSupport: 'optional' },
      handler: ({ n }) => ({ text: 'x'.repeat(n) }),
    }),
    defineTool({
      name: 'quick',
      description: 'Answers at once (no task support).',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true },
      handler: () => ({ quick: true }),
    }),
    defineTool({
      name: 'never_task',
      description: 'Answers at once, and says it never runs as a task.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true },
      execution: { taskSupport: 'forbidden' },
      handler: () => ({ never: true }),
    }),
    defineTool({
      name: 'plain_sleep',
      description: 'Sleeps ms (no task support of its own; MCP_TASK_TOOLS names it).',
      input: z.object({ ms: z.number().int().min(0).max(10_000).describe('Milliseconds.') }).strict(),
      annotations: { readOnlyHint: true },
      handler: async ({ ms }, ctx) => {
        await sleep(ms, ctx.signal);
        return { slept: ms };
      },
    }),
  ];
}

type Rpc = { status: number; body: any };

/** One hand-written 2026-07-28 request: headers as the transport requires unless overridden. */
async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  opts: { meta?: Record<string, unknown>; headers?: Record<string, string | undefined> } = {},
): Promise<Rpc> {
  const h: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const name = typeof params.taskId === 'string' ? params.taskId : typeof params.name === 'string' ? params.name : undefined;
  const defaults: Record<string, string | undefined> = { 'mcp-protocol-version': V, 'mcp-method': method, 'mcp-name': name };
  for (const [k, v] of Object.entries({ ...defaults, ...opts.headers })) if (v !== undefined) h[k] = v;
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: h,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { _meta: opts.meta ?? WITH_TASKS, ...params } }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const settled = (url: string, taskId: string, opts?: Parameters<typeof rpc>[3]) =>
  until(`task ${taskId} to end`, async () => {
    const r = await rpc(url, 'tasks/get', { taskId }, opts);
    return ['completed', 'failed', 'cancelled'].includes(r.body.result?.status) ? r.body.result : undefined;
  });

/** A subscriptions/listen stream for these task ids, read in the background as its messages arrive. */
async function listenForTasks(url: string, taskIds: string[], id: string) {
  const controller = new AbortController();
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'mcp-protocol-version': V,
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { _meta: WITH_TASKS, notifications: { taskIds } } }),
  });
  expect(res.status).toBe(200);
  const messages: any[] = [];
  const reading = (async () => {
    const reader = res.body!.getReader();
    let text = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += Buffer.from(value).toString();
        for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
          const frame = text.slice(0, end);
          text = text.slice(end + 2);
          if (frame.startsWith('event: message')) messages.push(JSON.parse(frame.slice(frame.indexOf('data: ') + 6)));
        }
      }
    } catch {
      // closed by close()
    }
  })();
  const tasks = () => messages.filter((m) => m.method === 'notifications/tasks').map((m) => m.params);
  return {
    messages,
    tasks,
    /** Waits for a notification of the task in this status. */
    heard: (taskId: string, status: string, timeoutMs = 10_000) =>
      until(
        `notifications/tasks: ${taskId} ${status}`,
        async () => tasks().find((t) => t.taskId === taskId && t.status === status),
        timeoutMs,
      ),
    close: async () => {
      controller.abort();
      await reading;
    },
  };
}

/** No state of a task was sent twice on one stream. */
const sentOnce = (notes: any[]) => expect(new Set(notes.map((t) => `${t.taskId} ${t.status} ${t.lastUpdatedAt}`)).size).toBe(notes.length);

describe('MCP tasks extension (2026-07-28)', () => {
  let tmp: ReturnType<typeof tempDir>;
  let jobs: Downstream;
  let g: RunningGateway;
  const specs = (): DownstreamSpec[] => [
    { id: 'jobs-mcp', url: jobs.url },
    {
      id: 'fixture',
      url: 'stdio:fixture',
      mcp: { transport: 'stdio', command: process.execPath, args: ['--import', 'tsx', FIXTURE], cwd: REPO, env: {} },
    },
  ];

  beforeAll(async () => {
    tmp = tempDir();
    jobs = await startDownstream('jobs-mcp', jobTools as never);
    g = await startGateway(specs(), tmp.dir, {
      HEALTH_POLL_MS: '600000',
      HEALTH_TIMEOUT_MS: '5000',
      MCP_TASK_POLL_MS: '100',
      MCP_TASK_TTL_MS: '60000',
      MCP_TASK_MAX_RESULT_BYTES: '2048',
      MCP_TASK_TOOLS: 'plain_sleep',
    });
    await until(
      'the fixture server',
      async () => {
        await g.gw.refresh();
        return g.gw.registry.catalog.byName.has('fx_job') || undefined;
      },
      20_000,
    );
  });

  afterAll(async () => {
    await g?.stop();
    await jobs?.stop();
    tmp.cleanup();
  });

  it('advertises the extension in server/discover', async () => {
    const { status, body } = await rpc(g.url, 'server/discover');
    expect(status).toBe(200);
    // beside the Skills extension (src/skills.ts)
    expect(body.result.capabilities.extensions).toEqual({ [EXT]: {}, 'io.modelcontextprotocol/skills': { directoryRead: true } });
    // the 2025-11-25 tasks capability slot is not used
    expect(body.result.capabilities.tasks).toBeUndefined();
  });

  it("lists each tool's execution.taskSupport as its downstream declared it (2026 and REST); to 2025 sessions, the tasks it may run as options and forbidden as declared", async () => {
    const { body } = await rpc(g.url, 'tools/list');
    const byName = new Map<string, any>(body.result.tools.map((t: any) => [t.name, t]));
    expect(byName.get('long_job').execution).toEqual({ taskSupport: 'optional' });
    expect(byName.get('must_task').execution).toEqual({ taskSupport: 'required' });
    expect(byName.get('fx_job').execution).toEqual({ taskSupport: 'required' }); // the MCP server's own declaration
    expect(byName.get('quick').execution).toBeUndefined();
    expect(byName.get('never_task').execution).toEqual({ taskSupport: 'forbidden' });
    const rest = await request(g.url).get('/tools/list').expect(200);
    expect(rest.body.tools.find((t: any) => t.name === 'fx_job').execution).toEqual({ taskSupport: 'required' });

    const client = new Client({ name: 'old', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
    const tools = (await client.listTools()).tools;
    expect(tools.find((t) => t.name === 'fx_job')).toBeDefined();
    // a 2025-11-25 session may run these as its own tasks (session-tasks.test.ts): each is an option there
    expect(tools.find((t) => t.name === 'fx_job')!.execution).toEqual({ taskSupport: 'optional' });
    // every tool it may run as a task is an option; "forbidden" only where the downstream declared it
    // (never_task, and the fixture MCP server's plain tools, which the SDK lists so)
    const other = tools.filter((t) => t.execution !== undefined && t.execution.taskSupport !== 'optional');
    expect(other.map((t) => [t.name, t.execution])).toEqual(other.map((t) => [t.name, { taskSupport: 'forbidden' }]));
    expect(other.map((t) => [t.name, byName.get(t.name).execution])).toEqual(other.map((t) => [t.name, { taskSupport: 'forbidden' }]));
    expect(tools.find((t) => t.name === 'never_task')!.execution).toEqual({ taskSupport: 'forbidden' });
    expect(tools.find((t) => t.name === 'fx_echo')!.execution).toEqual({ taskSupport: 'forbidden' });
    expect(tools.find((t) => t.name === 'quick')!.execution).toBeUndefined();
    // and the 2025 session runs the MCP server's task-required tool to its end (the gateway drives the task)
    const r = await client.callTool({ name: 'fx_job', arguments: { ms: 50 } });
    // a success as the server said it: without isError (the protocol's default), as the gateway passes it
    expect(r.isError).toBeUndefined();
    expect(r.content).toEqual([{ type: 'text', text: 'job done after 50 ms' }]);
    await client.close();
  });

  it('answers a declaring client a flat CreateTaskResult, durable at once, then the result inlined in tasks/get', async () => {
    const created = await rpc(g.url, 'tools/call', { name: 'long_job', arguments: { ms: 1000 } });
    expect(created.status).toBe(200);
    const t = created.body.result;
    expect(t).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 60000, pollIntervalMs: 100 });
    expect(t.taskId).toMatch(UUID);
    expect(t.createdAt).toMatch(ISO);
    expect(t.lastUpdatedAt).toMatch(ISO);
    for (const k of ['task', 'result', 'error', 'inputRequests', 'content', 'ttl', 'pollInterval', 'requestState'])
      expect(t).not.toHaveProperty(k);

    const now = await rpc(g.url, 'tasks/get', { taskId: t.taskId });
    expect(now.body.result).toMatchObject({ resultType: 'complete', taskId: t.taskId, status: 'working' });
    expect(now.body.result).not.toHaveProperty('result');

    const done = await settled(g.url, t.taskId);
    expect(done).toMatchObject({
      resultType: 'complete',
      taskId: t.taskId,
      status: 'completed',
      // what tools/call would have answered, resultType included
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: '{"slept":1000}' }],
        structuredContent: { slept: 1000 },
        isError: false,
      },
    });
    expect(done).not.toHaveProperty('error');
    expect(done.result._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined();
  });

  it("shows a running task's progress as its statusMessage, and none once it completed", async () => {
    const created = await rpc(g.url, 'tools/call', { name: 'stepped_job', arguments: { steps: 6 } });
    const { taskId } = created.body.result;
    const messages: string[] = [];
    for (;;) {
      const now = (await rpc(g.url, 'tasks/get', { taskId })).body.result;
      if (now.status !== 'working') {
        expect(now).toMatchObject({ status: 'completed', result: { structuredContent: { steps: 6 } } });
        expect(now.statusMessage).toBeUndefined();
        break;
      }
      if (now.statusMessage && messages.at(-1) !== now.statusMessage) messages.push(now.statusMessage);
      await sleep(100);
    }
    // at most one write a second: some steps are seen, in order, never one past the last
    expect(messages.length).toBeGreaterThanOrEqual(1);
    expect(messages.every((m) => /^Stepping: [1-6]\/6$/.test(m))).toBe(true);
    const steps = messages.map((m) => Number(/(\d)\/6/.exec(m)![1]));
    expect([...steps].sort()).toEqual(steps);
  });

  it('answers a client that did not declare the extension synchronously, and -32021 for a task-required tool', async () => {
    const sync = await rpc(g.url, 'tools/call', { name: 'long_job', arguments: { ms: 10 } }, { meta: WITHOUT });
    expect(sync.body.result).toMatchObject({ resultType: 'complete', structuredContent: { slept: 10 }, isError: false });
    expect(sync.body.result).not.toHaveProperty('taskId');

    for (const name of ['must_task', 'fx_job']) {
      const r = await rpc(g.url, 'tools/call', { name, arguments: name === 'fx_job' ? { ms: 1 } : {} }, { meta: WITHOUT });
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe(-32021);
      expect(r.body.error.data).toEqual({ requiredCapabilities: { extensions: { [EXT]: {} } } });
      expect(r.body.error.message).toMatch(/declare "extensions"/);
    }
  });

  it('answers tools without task support synchronously to a declaring client (the legacy task param changes nothing)', async () => {
    const r = await rpc(g.url, 'tools/call', { name: 'quick', arguments: {}, task: { ttl: 60000 } });
    expect(r.body.result).toMatchObject({ resultType: 'complete', structuredContent: { quick: true } });
    expect(r.body.result).not.toHaveProperty('taskId');
  });

  it('runs a tool named by MCP_TASK_TOOLS as a task', async () => {
    const r = await rpc(g.url, 'tools/call', { name: 'plain_sleep', arguments: { ms: 1 } });
    expect(r.body.result.resultType).toBe('task');
    expect((await settled(g.url, r.body.result.taskId)).result.structuredContent).toEqual({ slept: 1 });
  });

  it("runs the MCP server's task-required tool as a gateway task, polling the server's own task", async () => {
    const r = await rpc(g.url, 'tools/call', { name: 'fx_job', arguments: { ms: 100 } });
    expect(r.body.result.resultType).toBe('task');
    const done = await settled(g.url, r.body.result.taskId);
    expect(done.status).toBe('completed');
    expect(done.result.content).toEqual([{ type: 'text', text: 'job done after 100 ms' }]);
  });

  it("checks a task call's params before creating a task (-32602)", async () => {
    const r = await rpc(g.url, 'tools/call', { name: 'long_job', arguments: 'nope' });
    expect(r.body.error.code).toBe(-32602);
    const mode = await rpc(g.url, 'tools/call', { name: 'long_job', arguments: { ms: 1 }, _meta: { ...WITH_TASKS, mode: 'fastest' } });
    expect(mode.body.error.code).toBe(-32602);
    expect(mode.body.error.message).toMatch(/_meta.mode/);
  });

  it('tasks/cancel aborts the downstream call, reads cancelled, and acks again once terminal; unknown ids are -32602', async () => {
    const before = { ...seen };
    const { body } = await rpc(g.url, 'tools/call', { name: 'long_job', arguments: { ms: 8000 } });
    const taskId = body.result.taskId;
    await until('the job to start', async () => (seen.started > before.started ? true : undefined));
    const ack = await rpc(g.url, 'tasks/cancel', { taskId });
    expect(ack.status).toBe(200);
    expect(ack.body.result).toEqual({ resultType: 'complete' });
    const got = await rpc(g.url, 'tasks/get', { taskId });
    expect(got.body.result).toMatchObject({ status: 'cancelled', statusMessage: 'Cancelled by tasks/cancel.' });
    expect(got.body.result).not.toHaveProperty('result');
    await until('the downstream to see the abort', async () => (seen.aborted > before.aborted ? true : undefined));
    // it stays cancelled after the aborted call returns
    await sleep(100);
    expect((await rpc(g.url, 'tasks/get', { taskId })).body.result.status).toBe('cancelled');
    // terminal: the same empty acknowledgement
    expect((await rpc(g.url, 'tasks/cancel', { taskId })).body.result).toEqual({ resultType: 'complete' });
    const unknown = await rpc(g.url, 'tasks/cancel', { taskId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.body.error.code).toBe(-32602);
    expect(unknown.body.error.message).toMatch(/Task not found/);
  });

  it('a tool error is a completed task with result.isError; a result over MCP_TASK_MAX_RESULT_BYTES fails the task', async () => {
    const bad = await rpc(g.url, 'tools/call', { name: 'bad_job', arguments: {} });
    const b = await settled(g.url, bad.body.result.taskId);
    expect(b.status).toBe('completed');
    expect(b.result.isError).toBe(true);
    expect(b.result.structuredContent).toMatchObject({ code: 'CONFLICT', error: 'the job conflicts with itself' });

    const big = await rpc(g.url, 'tools/call', { name: 'big_job', arguments: { n: 5000 } });
    const f = await settled(g.url, big.body.result.taskId);
    expect(f.status).toBe('failed');
    expect(f).not.toHaveProperty('result');
    expect(f.error).toMatchObject({ code: -32603, message: expect.stringMatching(/over the 2048 .*MCP_TASK_MAX_RESULT_BYTES/) });
    expect(f.statusMessage).toBe(f.error.message);
  });

  it('tasks/update acknowledges input for no outstanding request; bad inputResponses are -32602', async () => {
    const { body } = await rpc(g.url, 'tools/call', { name: 'long_job', arguments: { ms: 1 } });
    const taskId = body.result.taskId;
    expect((await rpc(g.url, 'tasks/update', { taskId, inputResponses: { k: { action: 'accept' } } })).body.result).toEqual({
      resultType: 'complete',
    });
    const bad = await rpc(g.url, 'tasks/update', { taskId, inputResponses: 7 });
    expect(bad.body.error.code).toBe(-32602);
    expect((await rpc(g.url, 'tasks/update', { taskId: 'nope', inputResponses: {} })).body.error.code).toBe(-32602);
  });

  it('rejects tasks/* from a client that did not declare the extension with -32021 (HTTP 400)', async () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const r = await rpc(g.url, method, { taskId: 'gate-test', inputResponses: {} }, { meta: WITHOUT });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [EXT]: {} } } } });
    }
  });

  it("answers bad task requests with the spec's codes: -32602, -32020 for Mcp-Name, -32601 for tasks/list and tasks/result", async () => {
    const unknown = await rpc(g.url, 'tasks/get', { taskId: 'tasks-conformance-nonexistent-12345' });
    expect(unknown.status).toBe(200);
    expect(unknown.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Failed to retrieve task: Task not found/) });
    for (const params of [{}, { taskId: 42 }, { taskId: '' }, { taskId: 'x'.repeat(201) }]) {
      const r = await rpc(g.url, 'tasks/get', params);
      expect(r.body.error.code).toBe(-32602);
      expect(r.body.error.message).toMatch(/needs params.taskId/);
    }
    const mismatch = await rpc(g.url, 'tasks/get', { taskId: 'a' }, { headers: { 'mcp-name': 'b' } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatchObject({ code: -32020, message: expect.stringMatching(/params.taskId/) });
    const missing = await rpc(g.url, 'tasks/cancel', { taskId: 'a' }, { headers: { 'mcp-name': undefined } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: -32020, message: expect.stringMatching(/\(missing\) must equal params.taskId/) });
    for (const method of ['tasks/list', 'tasks/result']) {
      const r = await rpc(g.url, method, { taskId: 'a' });
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ code: -32601, message: expect.stringMatching(/not part of the tasks extension/) });
    }
  });

  it('pushes notifications/tasks on subscriptions/listen for the acknowledged task ids', async () => {
    const { body } = await rpc(g.url, 'tools/call', { name: 'long_job', arguments: { ms: 300 } });
    const taskId = body.result.taskId;
    const stream = await listenForTasks(g.url, [taskId, 'not-a-task'], 'sub-1');
    expect(g.gw.ctx.listen.followedTasks.get(taskId)).toBe(1);
    await stream.heard(taskId, 'completed');
    await stream.close();
    // the stream's task ids are no longer read once it closed
    await until('the stream to close', async () => (g.gw.ctx.listen.followedTasks.size === 0 ? true : undefined));
    const [ack, note] = stream.messages;
    expect(ack).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { taskIds: [taskId] } } });
    expect(note).toMatchObject({
      method: 'notifications/tasks',
      params: {
        taskId,
        status: 'completed',
        result: { structuredContent: { slept: 300 } },
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'sub-1' },
      },
    });

    const refused = await rpc(g.url, 'subscriptions/listen', { notifications: { taskIds: [taskId] } }, { meta: WITHOUT });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe(-32021);
    const malformed = await rpc(g.url, 'subscriptions/listen', { notifications: { taskIds: 'all' } });
    expect(malformed.body.error.code).toBe(-32602);
  });

  it('serves the ext-tasks requester (official v2 client + @modelcontextprotocol/ext-tasks): a task to its result, and a cancel', async () => {
    const requester = async (...args: string[]) => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [path.join(__dirname, 'fixtures', 'ext-tasks-requester.mjs'), `${g.url}/mcp`, ...args],
        {
          encoding: 'utf8',
          timeout: 20_000,
        },
      );
      return JSON.parse(stdout) as { sent: string[]; outcome?: any; result?: any; error?: string };
    };
    const done = await requester('long_job', '{"ms":300}');
    expect(done.error).toBeUndefined();
    expect(done.sent[0]).toBe('tools/call');
    expect(done.sent.slice(1).every((m) => m === 'tasks/get')).toBe(true);
    expect(done.outcome.status).toBe('completed');
    expect(done.result).toMatchObject({ structuredContent: { slept: 300 }, isError: false });

    const before = seen.aborted;
    const cancelled = await requester('long_job', '{"ms":8000}', 'cancel');
    expect(cancelled.sent).toContain('tasks/cancel');
    expect(cancelled.outcome.status).toBe('cancelled');
    await until('the downstream to see the abort', async () => (seen.aborted > before ? true : undefined));
  });

  it('keeps the hot path: a tool without task support costs no task lookup beyond the catalog', () => {
    const { catalog } = g.gw.registry;
    expect(g.gw.ctx.tasks.supportOf(catalog, 'quick')).toBeUndefined();
    expect(g.gw.ctx.tasks.supportOf(catalog, 'jobs-mcp__long_job')).toBe('optional');
    expect(g.gw.ctx.tasks.supportOf(catalog, 'fixture__fx_job')).toBe('required');
  });
});

describe('MCP tasks: limits, expiry, restarts, authorization, switched off', () => {
  let jobs: Downstream;
  const tmps: ReturnType<typeof tempDir>[] = [];
  const gateways: RunningGateway[] = [];
  const start = async (overrides: Record<string, string>, dir?: string) => {
    const tmp = tempDir();
    tmps.push(tmp);
    const gw = await startGateway([{ id: 'jobs-mcp', url: jobs.url }], dir ?? tmp.dir, {
      HEALTH_POLL_MS: '600000',
      MCP_TASK_POLL_MS: '100',
      // wider than the 100 ms default: the fixture's question comes within it on a loaded machine too
      MCP_TASK_MINT_MS: '400',
      ...overrides,
    });
    gateways.push(gw);
    return gw;
  };
  /** A gateway with authorization on: API keys of alice (a) and bob (b), and the request options that send one. */
  const startAuthed = async (overrides: Record<string, string> = {}) => {
    const tmp = tempDir();
    tmps.push(tmp);
    const a = newApiKey('alice', ['tools:all']);
    const b = newApiKey('bob', ['tools:all']);
    fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([a.entry, b.entry]));
    const gw = await start({ API_KEYS_FILE: path.join(tmp.dir, 'keys.json'), AUDIT_LOG_FILE: 'off', ...overrides }, tmp.dir);
    const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
    return { gw, a, b, as };
  };

  beforeAll(async () => {
    jobs = await startDownstream('jobs-mcp', jobTools as never);
  });

  afterAll(async () => {
    for (const gw of gateways) await gw.stop().catch(() => undefined);
    await jobs?.stop();
    for (const t of tmps) t.cleanup();
  });

  it('MCP_TASKS=false: not advertised, tasks/* are unknown methods, every call answers its result', async () => {
    const off = await start({ MCP_TASKS: 'false' });
    expect((await rpc(off.url, 'server/discover')).body.result.capabilities.extensions).toEqual({
      'io.modelcontextprotocol/skills': { directoryRead: true },
    });
    const get = await rpc(off.url, 'tasks/get', { taskId: 'a' });
    expect(get.status).toBe(404);
    expect(get.body.error).toMatchObject({ code: -32601, message: expect.stringMatching(/MCP_TASKS/) });
    const call = await rpc(off.url, 'tools/call', { name: 'long_job', arguments: { ms: 1 } });
    expect(call.body.result).toMatchObject({ resultType: 'complete', structuredContent: { slept: 1 } });
    // a task-required tool runs too: with the extension off nothing can require it
    expect(
      (await rpc(off.url, 'tools/call', { name: 'must_task', arguments: {} }, { meta: WITHOUT })).body.result.structuredContent,
    ).toEqual({
      ok: true,
    });
  });

  it('MCP_MAX_TASKS: beyond it an optional tool answers synchronously and a required one -32603 (503); expired tasks say so', async () => {
    const small = await start({ MCP_MAX_TASKS: '1', MCP_TASK_TTL_MS: '2000' });
    const first = await rpc(small.url, 'tools/call', { name: 'long_job', arguments: { ms: 200 } });
    expect(first.body.result.resultType).toBe('task');
    const second = await rpc(small.url, 'tools/call', { name: 'long_job', arguments: { ms: 1 } });
    expect(second.body.result).toMatchObject({ resultType: 'complete', structuredContent: { slept: 1 } });
    const required = await rpc(small.url, 'tools/call', { name: 'must_task', arguments: {} });
    expect(required.status).toBe(503);
    expect(required.body.error).toMatchObject({ code: -32603, message: expect.stringMatching(/MCP_MAX_TASKS \(1\)/) });

    const taskId = first.body.result.taskId;
    expect((await settled(small.url, taskId)).status).toBe('completed');
    await sleep(2100 - (Date.now() - Date.parse(first.body.result.createdAt)));
    const expired = await rpc(small.url, 'tasks/get', { taskId });
    expect(expired.body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^Failed to retrieve task: Task has expired/),
    });
    // expired tasks no longer count: a new one is a task again
    expect((await rpc(small.url, 'tools/call', { name: 'must_task', arguments: {} })).body.result.resultType).toBe('task');
  });

  it('a task running when the gateway shuts down reads failed after the restart, saying to call the tool again', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const first = await start({}, tmp.dir);
    const { body } = await rpc(first.url, 'tools/call', { name: 'long_job', arguments: { ms: 8000 } });
    await first.stop();
    const second = await start({}, tmp.dir);
    const got = await rpc(second.url, 'tasks/get', { taskId: body.result.taskId });
    expect(got.body.result).toMatchObject({
      status: 'failed',
      statusMessage: 'The gateway shut down before this task finished; call the tool again.',
      error: { code: -32603 },
    });
  });

  it('a task left working by a gateway that died (SQLite) reads failed once a gateway opens the store again', async () => {
    const tmp = tempDir();
    tmps.push(tmp);
    const dead = await start({}, tmp.dir);
    const { body } = await rpc(dead.url, 'tools/call', { name: 'long_job', arguments: { ms: 3000 } });
    // The next process opens the same file while the row still says working (as a SIGKILLed gateway leaves it).
    const next = await start({}, tmp.dir);
    const got = await rpc(next.url, 'tasks/get', { taskId: body.result.taskId });
    expect(got.body.result).toMatchObject({
      status: 'failed',
      error: { code: -32603, message: expect.stringMatching(/restart or a crash/) },
    });
    // the first one finishing later does not overwrite it
    await sleep(3200);
    expect((await rpc(next.url, 'tasks/get', { taskId: body.result.taskId })).body.result.status).toBe('failed');
  });

  it('answers -32602/-32603 (never HTTP 500) when the task store fails under it', async () => {
    const broken = await start({});
    const { body } = await rpc(broken.url, 'tools/call', { name: 'long_job', arguments: { ms: 1 } });
    await settled(broken.url, body.result.taskId);
    await broken.gw.history.close(); // the database goes away under the gateway
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const r = await rpc(broken.url, method, { taskId: body.result.taskId });
      expect(r.status).toBe(200);
      expect(r.body.error).toMatchObject({ code: -32603, message: expect.stringMatching(/task store is unavailable/) });
    }
    const call = await rpc(broken.url, 'tools/call', { name: 'long_job', arguments: { ms: 1 } });
    expect(call.status).toBe(200);
    expect(call.body.error.code).toBe(-32603);
  });

  it('binds tasks to their principal with authorization on: another key gets "Task not found"', async () => {
    const { gw: authed, a, b, as } = await startAuthed();
    const created = await rpc(authed.url, 'tools/call', { name: 'long_job', arguments: { ms: 1 } }, as(a.key));
    const taskId = created.body.result.taskId;
    expect((await settled(authed.url, taskId, as(a.key))).status).toBe('completed');
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const other = await rpc(authed.url, method, { taskId }, as(b.key));
      expect(other.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/Task not found/) });
    }
    expect((await rpc(authed.url, 'tasks/get', { taskId }, as(a.key))).body.result.status).toBe('completed');
  });

  it('MCP_TASK_MAX_PER_CALLER: a principal holds that many unfinished tasks, the next is -32603 saying to wait or cancel; others are not held back', async () => {
    const { gw: capped, a, b, as } = await startAuthed({ MCP_TASK_MAX_PER_CALLER: '2' });
    const long = (key: string) => rpc(capped.url, 'tools/call', { name: 'long_job', arguments: { ms: 8000 } }, as(key));

    // four at once: exactly two are admitted
    const burst = await Promise.all([1, 2, 3, 4].map(() => long(a.key)));
    const admitted = burst.filter((r) => r.body.result?.resultType === 'task');
    const refused = burst.filter((r) => r.body.error);
    expect(admitted).toHaveLength(2);
    expect(refused).toHaveLength(2);
    for (const r of refused) {
      expect(r.status).toBe(200);
      expect(r.body.error).toMatchObject({ code: -32603, data: { maxPerCaller: 2 } });
      expect(r.body.error.message).toMatch(/already hold 2 unfinished tasks, .*MCP_TASK_MAX_PER_CALLER.*tasks\/cancel.*call again/);
      expect(r.body.error.message).not.toMatch(/every caller/);
    }
    // a task-required tool is refused the same way (not the global cap's 503), never run synchronously
    const required = await rpc(capped.url, 'tools/call', { name: 'must_task', arguments: {} }, as(a.key));
    expect(required.status).toBe(200);
    expect(required.body.error).toMatchObject({ code: -32603, message: expect.stringMatching(/MCP_TASK_MAX_PER_CALLER/) });
    // another principal is not held back
    expect((await long(b.key)).body.result.resultType).toBe('task');
    // a finished (here cancelled) task no longer counts
    await rpc(capped.url, 'tasks/cancel', { taskId: admitted[0]!.body.result.taskId }, as(a.key));
    const again = await long(a.key);
    expect(again.body.result.resultType).toBe('task');
    // refused creations left no row behind
    const db = (await capped.gw.history.database())!;
    expect((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM tasks WHERE owner = ?', ['api-key:alice']))?.n).toBe(3);
    for (const t of [admitted[1]!, again]) await rpc(capped.url, 'tasks/cancel', { taskId: t.body.result.taskId }, as(a.key));
  });

  it('MCP_TASK_MAX_PER_CALLER without authorization: every caller counts as one; a completed task frees its place', async () => {
    const anonymous = await start({ MCP_TASK_MAX_PER_CALLER: '1' });
    const first = await rpc(anonymous.url, 'tools/call', { name: 'long_job', arguments: { ms: 1500 } });
    expect(first.body.result.resultType).toBe('task');
    const second = await rpc(anonymous.url, 'tools/call', { name: 'long_job', arguments: { ms: 1 } });
    expect(second.body.error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/already hold 1 unfinished task, .*without authorization every caller counts as the same one/),
    });
    expect((await settled(anonymous.url, first.body.result.taskId)).status).toBe('completed');
    expect((await rpc(anonymous.url, 'tools/call', { name: 'long_job', arguments: { ms: 1 } })).body.result.resultType).toBe('task');

    const uncapped = await start({ MCP_TASK_MAX_PER_CALLER: '0' });
    const many = await Promise.all([1, 2, 3].map(() => rpc(uncapped.url, 'tools/call', { name: 'long_job', arguments: { ms: 100 } })));
    expect(many.map((r) => r.body.result?.resultType)).toEqual(['task', 'task', 'task']);
  });
});

describe('MCP tasks: a call that asks first answers input_required, then its task (lazy minting, MCP_TASK_MINT_MS)', () => {
  // test_tool_with_task (the conformance fixture, over stdio, taskSupport "required") asks the user's
  // name at once, then works 1200 ms; slow_compute {seconds: 0} ends at once
  const tmps: ReturnType<typeof tempDir>[] = [];
  const gateways: RunningGateway[] = [];
  const ASKING = { ...WITH_TASKS, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [EXT]: {} } } };
  const start = async (overrides: Record<string, string> = {}) => {
    const tmp = tempDir();
    tmps.push(tmp);
    const a = newApiKey('alice', ['tools:all']);
    const b = newApiKey('bob', ['tools:all']);
    fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([a.entry, b.entry]));
    const gw = await startGatewayWithStdioServer('conformance', CONFORMANCE_FIXTURE, tmp.dir, 'test_tool_with_task', {
      API_KEYS_FILE: path.join(tmp.dir, 'keys.json'),
      AUDIT_LOG_FILE: 'off',
      MCP_TASK_POLL_MS: '100',
      // wider than the 100 ms default: the fixture's question comes within it on a loaded machine too
      MCP_TASK_MINT_MS: '400',
      ...overrides,
    });
    gateways.push(gw);
    const as = (key: string, meta: Record<string, unknown> = ASKING) => ({ meta, headers: { authorization: `Bearer ${key}` } });
    return { gw, alice: as(a.key), bob: as(b.key) };
  };
  /** The rows of the task store for this tool. */
  const taskRows = async (gw: RunningGateway, tool: string) =>
    (await gw.gw.history.database())!.all<{ task_id: string; owner: string; status: string }>(
      'SELECT task_id, owner, status FROM tasks WHERE tool = ?',
      [tool],
    );
  const answer = { action: 'accept', content: { user_name: 'Alice' } };

  afterAll(async () => {
    for (const gw of gateways) await gw.stop().catch(() => undefined);
    for (const t of tmps) t.cleanup();
  });

  it('round 1 asks (input_required, no task); another principal or an altered requestState continues nothing; round 2 is the task, and its replay mints none', async () => {
    const { gw, alice, bob } = await start();
    const first = await rpc(gw.url, 'tools/call', { name: 'test_tool_with_task', arguments: {} }, alice);
    expect(first.status).toBe(200);
    const round1 = first.body.result;
    expect(round1).toMatchObject({
      resultType: 'input_required',
      inputRequests: {
        'elicitation-1': {
          method: 'elicitation/create',
          params: expect.objectContaining({ requestedSchema: expect.objectContaining({ properties: { user_name: expect.any(Object) } }) }),
        },
      },
      requestState: expect.any(String),
    });
    expect(round1).not.toHaveProperty('taskId');
    expect(await taskRows(gw, 'test_tool_with_task')).toEqual([]);
    expect(gw.gw.ctx.inputs.waiting).toBe(1);

    const round2 = (state: unknown, who = alice) =>
      rpc(
        gw.url,
        'tools/call',
        { name: 'test_tool_with_task', arguments: {}, inputResponses: { 'elicitation-1': answer }, requestState: state },
        who,
      );
    // the refusals of any input_required retry (docs/gateway.md, "requestState"): nothing is delivered, no task is made
    const integrity = { code: -32602, message: expect.stringMatching(/failed its integrity check/) };
    const state = round1.requestState as string;
    const mac = state.slice(state.lastIndexOf('.') + 1);
    const tampered = [
      `${state.slice(0, state.lastIndexOf('.') + 1)}${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`,
      state.replace(/\.1\./, '.2.'), // another round, same MAC
      state.replace(/^(v2\.[^.]*\.)[0-9a-f-]+/, '$1' + '00000000-0000-4000-8000-000000000000'), // another call id
    ];
    for (const bad of tampered) expect((await round2(bad)).body.error).toMatchObject(integrity);
    // bob holds alice's genuine state: it was signed for her
    const foreign = await round2(state, bob);
    expect(foreign.body.error).toMatchObject(integrity);
    expect(await taskRows(gw, 'test_tool_with_task')).toEqual([]);
    expect(gw.gw.ctx.inputs.waiting).toBe(1);

    // alice's round 2, sent twice at once (a replay racing the original): one task, one refusal
    const [x, y] = await Promise.all([round2(state), round2(state)]);
    const created = [x, y].filter((r) => r.body.result?.resultType === 'task');
    const refused = [x, y].filter((r) => r.body.error);
    expect(created).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/round 1 of this call, which is at round 2/),
    });
    const task = created[0]!.body.result;
    expect(task).toMatchObject({ resultType: 'task', taskId: expect.stringMatching(UUID), status: 'working' });
    for (const k of ['requestState', 'inputRequests', 'result', 'content']) expect(task).not.toHaveProperty(k);
    // and once more after it became the task: the call is no longer waiting
    expect((await round2(state)).body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/no longer waiting/) });
    expect(gw.gw.ctx.inputs.waiting).toBe(0);

    // bob cannot read it; alice's task ends with the name gathered in round 1
    expect((await rpc(gw.url, 'tasks/get', { taskId: task.taskId }, bob)).body.error).toMatchObject({ code: -32602 });
    const done = await settled(gw.url, task.taskId, alice);
    expect(done).toMatchObject({
      status: 'completed',
      result: { resultType: 'complete', content: [{ type: 'text', text: 'Hello, Alice' }] },
    });
    expect(await taskRows(gw, 'test_tool_with_task')).toEqual([{ task_id: task.taskId, owner: 'api-key:alice', status: 'completed' }]);
  }, 30_000);

  it('a call that ends within the window answers its task already completed; one that asks what the caller did not declare is -32021 with no task', async () => {
    const { gw, alice } = await start();
    const quick = await rpc(gw.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, alice);
    expect(quick.body.result).toMatchObject({ resultType: 'task', status: 'completed' });
    expect(quick.body.result).not.toHaveProperty('result');
    const now = await rpc(gw.url, 'tasks/get', { taskId: quick.body.result.taskId }, alice);
    expect(now.body.result).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'computed after 0 s' }] } });
    // still running after the window: working
    const slow = await rpc(gw.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 1 } }, alice);
    expect(slow.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    // (ended before the next call: with two calls in flight a stdio server's question belongs to neither)
    expect((await settled(gw.url, slow.body.result.taskId, alice)).status).toBe('completed');

    // the extension declared, elicitation not: refused as any call whose server asks what the caller cannot answer
    const undeclared = await rpc(gw.url, 'tools/call', { name: 'test_tool_with_task', arguments: {} }, { ...alice, meta: WITH_TASKS });
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
    expect(await taskRows(gw, 'test_tool_with_task')).toEqual([]);
  }, 30_000);

  it('MCP_TASK_MINT_MS=0 mints the task at once: the question goes to the task (input_required, tasks/update)', async () => {
    const { gw, alice } = await start({ MCP_TASK_MINT_MS: '0' });
    const created = await rpc(gw.url, 'tools/call', { name: 'test_tool_with_task', arguments: {} }, alice);
    expect(created.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = created.body.result.taskId;
    const waiting = await until('the task to ask', async () => {
      const r = (await rpc(gw.url, 'tasks/get', { taskId }, alice)).body.result;
      return r.status === 'input_required' ? r : undefined;
    });
    expect(Object.keys(waiting.inputRequests)).toEqual(['elicitation-1']);
    expect((await rpc(gw.url, 'tasks/update', { taskId, inputResponses: { 'elicitation-1': answer } }, alice)).body.result).toEqual({
      resultType: 'complete',
    });
    expect((await settled(gw.url, taskId, alice)).result.content).toEqual([{ type: 'text', text: 'Hello, Alice' }]);
  }, 30_000);
});

describeWithBackend('postgres', 'MCP tasks on PostgreSQL: any instance answers', () => {
  let db: PgScratchSchema;
  let jobs: Downstream;
  let a: RunningGateway;
  let b: RunningGateway;
  const tmpA = tempDir();
  const tmpB = tempDir();

  beforeAll(async () => {
    db = await pgScratchSchema('gw_tasks');
    jobs = await startDownstream('jobs-mcp', jobTools as never);
    const env = {
      SESSION_DATABASE_URL: db.url,
      HEALTH_POLL_MS: '600000',
      MCP_TASK_POLL_MS: '100',
      MCP_TASK_LEASE_MS: '300',
      MCP_TASK_MAX_PER_CALLER: '3',
    };
    a = await startGateway([{ id: 'jobs-mcp', url: jobs.url }], tmpA.dir, env);
    b = await startGateway([{ id: 'jobs-mcp', url: jobs.url }], tmpB.dir, env);
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await jobs?.stop();
    await db?.drop();
    tmpA.cleanup();
    tmpB.cleanup();
  });

  it('a task created on one instance is read on the other, and cancelled there: the running instance aborts its call', async () => {
    const done = await rpc(a.url, 'tools/call', { name: 'long_job', arguments: { ms: 200 } });
    expect((await settled(b.url, done.body.result.taskId)).result.structuredContent).toEqual({ slept: 200 });

    const before = seen.aborted;
    const { body } = await rpc(a.url, 'tools/call', { name: 'long_job', arguments: { ms: 8000 } });
    expect((await rpc(b.url, 'tasks/get', { taskId: body.result.taskId })).body.result.status).toBe('working');
    expect((await rpc(b.url, 'tasks/cancel', { taskId: body.result.taskId })).body.result).toEqual({ resultType: 'complete' });
    expect((await rpc(a.url, 'tasks/get', { taskId: body.result.taskId })).body.result.status).toBe('cancelled');
    // a renews its leases every 100 ms and then sees the cancel
    await until('instance a to abort the call', async () => (seen.aborted > before ? true : undefined), 5000);
    expect(a.gw.ctx.tasks.runningCount).toBe(0);
  });

  it('a task whose instance stopped renewing it (died) reads failed after its lease, never working forever', async () => {
    // The row a SIGKILLed instance leaves behind: working, its lease lapsed.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const now = Date.now();
    await client.query(
      `INSERT INTO tasks (task_id, owner, tool, status, created_at, updated_at, ttl_ms, expires_at, poll_ms, instance, lease_until)
       VALUES ($1, NULL, 'long_job', 'working', $2, $2, 60000, $3, 100, 'a-dead-instance', $4)`,
      ['11111111-1111-4111-8111-111111111111', now - 5000, now + 55_000, now - 1000],
    );
    await client.end();
    const got = await rpc(b.url, 'tasks/get', { taskId: '11111111-1111-4111-8111-111111111111' });
    expect(got.body.result).toMatchObject({
      status: 'failed',
      error: { code: -32603, message: expect.stringMatching(/restart or a crash/) },
    });
  });

  it('notifications/tasks of a task running on one instance reach listeners on the other, each state once on each', async () => {
    await until('both instances to listen on PostgreSQL', async () =>
      a.gw.ctx.tasks.otherInstances.listening && b.gw.ctx.tasks.otherInstances.listening ? true : undefined,
    );
    await sleep(300); // what the test before changed on b may still be on its way to a
    const heard = { a: a.gw.ctx.tasks.otherInstances.heard, b: b.gw.ctx.tasks.otherInstances.heard };
    const { body } = await rpc(a.url, 'tools/call', { name: 'stepped_job', arguments: { steps: 3 } });
    const taskId = body.result.taskId;
    const onA = await listenForTasks(a.url, [taskId], 'on-a');
    const onB = await listenForTasks(b.url, [taskId], 'on-b');
    await onA.heard(taskId, 'completed');
    const last = await onB.heard(taskId, 'completed');
    expect(last).toMatchObject({
      result: { structuredContent: { steps: 3 } },
      _meta: { 'io.modelcontextprotocol/subscriptionId': 'on-b' },
    });
    await sleep(300); // anything late would arrive by now
    await onA.close();
    await onB.close();
    // the progress the tool reported reached the other instance too
    expect(onB.tasks().some((t) => t.status === 'working' && /^Stepping: [1-3]\/3$/.test(t.statusMessage))).toBe(true);
    sentOnce(onA.tasks());
    sentOnce(onB.tasks());
    expect(onB.tasks().at(-1).status).toBe('completed');
    // b heard a's changes; a did not hear its own back
    expect(b.gw.ctx.tasks.otherInstances.heard).toBeGreaterThan(heard.b);
    expect(a.gw.ctx.tasks.otherInstances.heard).toBe(heard.a);

    // a cancel through b reaches a listener on a, the instance running the task
    const long = await rpc(a.url, 'tools/call', { name: 'long_job', arguments: { ms: 8000 } });
    const running = await listenForTasks(a.url, [long.body.result.taskId], 'running-on-a');
    await rpc(b.url, 'tasks/cancel', { taskId: long.body.result.taskId });
    expect(await running.heard(long.body.result.taskId, 'cancelled')).toMatchObject({ statusMessage: 'Cancelled by tasks/cancel.' });
    await running.close();
  });

  it('an instance whose LISTEN connection dropped reconnects, and its listeners still get the outcome changed meanwhile', async () => {
    await until('b to listen on PostgreSQL', async () => (b.gw.ctx.tasks.otherInstances.listening ? true : undefined));
    const { body } = await rpc(a.url, 'tools/call', { name: 'long_job', arguments: { ms: 300 } });
    const taskId = body.result.taskId;
    const onB = await listenForTasks(b.url, [taskId], 'through-a-drop');
    const killed = await db.admin.query('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1', [
      `mcp-fleet-tasks:${b.gw.ctx.tasks.instance}`,
    ]);
    expect(killed.rows).toEqual([{ ok: true }]);
    await until('b to see its connection drop', async () => (b.gw.ctx.tasks.otherInstances.listening ? undefined : true), 5000);
    // the task ends on a while b is reconnecting (after 0.4-0.6 s); b reads it again once back
    expect((await settled(a.url, taskId)).status).toBe('completed');
    expect(await onB.heard(taskId, 'completed', 10_000)).toMatchObject({ result: { structuredContent: { slept: 300 } } });
    expect(b.gw.ctx.tasks.otherInstances.listening).toBe(true);
    await onB.close();
    sentOnce(onB.tasks());

    // and it hears the next changes as before
    const next = await rpc(a.url, 'tools/call', { name: 'long_job', arguments: { ms: 600 } });
    const again = await listenForTasks(b.url, [next.body.result.taskId], 'after-the-drop');
    await again.heard(next.body.result.taskId, 'completed');
    await again.close();
  });

  it('MCP_TASK_MAX_PER_CALLER counts the tasks a caller holds on every instance', async () => {
    await until('no task running', async () => (a.gw.ctx.tasks.runningCount + b.gw.ctx.tasks.runningCount === 0 ? true : undefined));
    const long = (url: string) => rpc(url, 'tools/call', { name: 'long_job', arguments: { ms: 8000 } });
    const held = [await long(a.url), await long(b.url), await long(a.url)];
    expect(held.map((r) => r.body.result?.resultType)).toEqual(['task', 'task', 'task']);
    const refused = await long(b.url);
    expect(refused.body.error).toMatchObject({ code: -32603, message: expect.stringMatching(/already hold 3 unfinished tasks/) });
    await rpc(b.url, 'tasks/cancel', { taskId: held[0]!.body.result.taskId });
    const admitted = await long(b.url);
    expect(admitted.body.result.resultType).toBe('task');
    for (const r of [...held.slice(1), admitted]) await rpc(a.url, 'tasks/cancel', { taskId: r.body.result.taskId });
  });
});
