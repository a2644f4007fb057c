/**
 * What an MCP server behind the gateway asks its client during a tool call (elicitation, sampling,
 * roots), and what it streams (progress, log messages), reaches the caller: a 2026-07-28 client as input_required results (SEP-2322) answered by
 * retrying with inputResponses and the signed requestState, a 2025-era session's client as requests
 * on the call's event stream. The server is a real child process (the conformance fixture over stdio).
 */
import path from 'node:path';
import { tempDir } from '@mcp-fleet/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitationCompleteNotificationSchema,
  McpError,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from '@modelcontextprotocol/client';
import { META_2026, post2026, sleep, startGatewayWithStdioServer, until, type RunningGateway } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'conformance-fixture-server.ts');
const ALL = { elicitation: {}, sampling: {}, roots: {} };
const DOWNSTREAM_TIMEOUT_MS = 1500;
const INPUT_TIMEOUT_MS = 2500;

interface Rpc {
  status: number;
  result?: Record<string, any>;
  error?: { code: number; message: string };
}

describe('questions from MCP servers behind the gateway', () => {
  const tmp = tempDir('mcp-fleet-client-requests-');
  let g: RunningGateway;

  beforeAll(async () => {
    g = await startGatewayWithStdioServer('asker', FIXTURE, tmp.dir, 'test_elicitation', {
      DOWNSTREAM_TIMEOUT_MS: String(DOWNSTREAM_TIMEOUT_MS),
      MCP_INPUT_TIMEOUT_MS: String(INPUT_TIMEOUT_MS),
    });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  async function call(
    name: string,
    args: Record<string, unknown> = {},
    extra: Record<string, unknown> = {},
    caps: unknown = ALL,
  ): Promise<Rpc> {
    const res = await post2026(
      g.url,
      'tools/call',
      { name, arguments: args, ...extra },
      { meta: { ...META_2026, 'io.modelcontextprotocol/clientCapabilities': caps } },
    );
    return { status: res.status, ...((await res.json()) as { result?: Record<string, any>; error?: Rpc['error'] }) };
  }
  const text = (r: Rpc) => (r.result?.content as { text: string }[] | undefined)?.[0]?.text ?? '';

  describe('a 2026-07-28 client (input_required)', () => {
    it('is asked with input_required, and its retry with the answer finishes the call; the spent requestState is refused', async () => {
      const first = await call('test_elicitation', { message: 'Who are you?' });
      expect(first.status).toBe(200);
      expect(first.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: {
          'elicitation-1': {
            method: 'elicitation/create',
            params: { message: 'Who are you?', requestedSchema: { type: 'object', required: ['username', 'email'] } },
          },
        },
      });
      const state = first.result!.requestState as string;
      expect(typeof state).toBe('string');
      expect(g.gw.ctx.inputs.waiting).toBe(1);

      const answer = { 'elicitation-1': { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } } };
      const done = await call('test_elicitation', { message: 'Who are you?' }, { inputResponses: answer, requestState: state });
      expect(done.result).toMatchObject({ resultType: 'complete' });
      expect(done.result).not.toHaveProperty('isError');
      expect(text(done)).toBe('User response: action=accept, content={"username":"ada","email":"ada@example.com"}');
      expect(g.gw.ctx.inputs.waiting).toBe(0);

      const again = await call('test_elicitation', { message: 'Who are you?' }, { inputResponses: answer, requestState: state });
      expect(again.error).toMatchObject({ code: -32602, message: expect.stringContaining('no longer waiting') });
    });

    it('asks round after round with a fresh requestState each time; an earlier round’s state is refused', async () => {
      const r1 = await call('ask_twice');
      expect(r1.result?.inputRequests['elicitation-1'].params.message).toBe('Step 1: What is your name?');
      const r2 = await call(
        'ask_twice',
        {},
        { inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Ada' } } }, requestState: r1.result!.requestState },
      );
      expect(r2.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: { 'elicitation-2': { method: 'elicitation/create', params: { message: 'Step 2: What is your favourite colour?' } } },
      });
      expect(r2.result!.requestState).not.toBe(r1.result!.requestState);
      const stale = await call(
        'ask_twice',
        {},
        { inputResponses: { 'elicitation-2': { action: 'accept', content: { colour: 'red' } } }, requestState: r1.result!.requestState },
      );
      expect(stale.error).toMatchObject({ code: -32602, message: expect.stringContaining('round 1') });
      const r3 = await call(
        'ask_twice',
        {},
        { inputResponses: { 'elicitation-2': { action: 'accept', content: { colour: 'teal' } } }, requestState: r2.result!.requestState },
      );
      expect(text(r3)).toBe('Hello Ada, who likes teal.');
    });

    it('asks what the server asks at once in one round, asks again for what was left unanswered, and ignores extra keys', async () => {
      const r1 = await call('ask_all');
      const requests = r1.result!.inputRequests as Record<string, { method: string }>;
      expect(
        Object.values(requests)
          .map((r) => r.method)
          .sort(),
      ).toEqual(['elicitation/create', 'roots/list', 'sampling/createMessage']);
      const key = (method: string) => Object.keys(requests).find((k) => requests[k].method === method)!;
      const r2 = await call(
        'ask_all',
        {},
        {
          inputResponses: {
            [key('elicitation/create')]: { action: 'accept', content: { name: 'Ada' } },
            [key('sampling/createMessage')]: {
              role: 'assistant',
              content: { type: 'text', text: 'Hello' },
              model: 'm',
              stopReason: 'endTurn',
            },
            unrelated: { anything: true },
          },
          requestState: r1.result!.requestState,
        },
      );
      expect(r2.result).toMatchObject({ resultType: 'input_required' });
      expect(Object.keys(r2.result!.inputRequests)).toEqual([key('roots/list')]);
      const r3 = await call(
        'ask_all',
        {},
        {
          inputResponses: { [key('roots/list')]: { roots: [{ uri: 'file:///work', name: 'work' }] } },
          requestState: r2.result!.requestState,
        },
      );
      expect(text(r3)).toBe('Hello Ada; roots: file:///work');
    });

    it('refuses a tampered state, another tool’s state and answers of the wrong shape with -32602, and the call still waits', async () => {
      const first = await call('test_elicitation', { message: 'm' });
      const state = first.result!.requestState as string;
      const good = { 'elicitation-1': { action: 'decline' } };
      const tampered = `${state.slice(0, -2)}${state.endsWith('AA') ? 'BB' : 'AA'}`;
      const bad = [
        await call('test_elicitation', { message: 'm' }, { inputResponses: good, requestState: tampered }),
        await call('ask_twice', {}, { inputResponses: good, requestState: state }),
        await call('test_elicitation', { message: 'm' }, { inputResponses: good, requestState: 'v1.not-a-call.1.xyz' }),
        await call('test_elicitation', { message: 'm' }, { inputResponses: { 'elicitation-1': 12345 }, requestState: state }),
        await call('test_elicitation', { message: 'm' }, { inputResponses: { 'elicitation-1': { action: 'maybe' } }, requestState: state }),
        await call('test_elicitation', { message: 'm' }, { inputResponses: null, requestState: state }),
        await call('test_elicitation', { message: 'm' }, { inputResponses: 'yes' }),
      ];
      for (const r of bad) expect({ status: r.status, code: r.error?.code }).toEqual({ status: 200, code: -32602 });
      expect(bad[0].error!.message).toContain('integrity check');
      expect(bad[1].error!.message).toContain('integrity check');
      expect(bad[3].error!.message).toContain('inputResponses["elicitation-1"] is not a valid answer to elicitation/create');
      const done = await call('test_elicitation', { message: 'm' }, { inputResponses: good, requestState: state });
      expect(text(done)).toBe('User response: action=decline, content={}');
    });

    it('answers HTTP 400 -32021 naming the capability when the server asks what the client did not declare, and stops the server’s call', async () => {
      const r = await call('test_elicitation', { message: 'm' }, {}, { sampling: {} });
      expect(r.status).toBe(400);
      expect(r.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
      expect(r.error!.message).toContain('elicitation/create');
      const sampling = await call('test_sampling', { prompt: 'p' }, {}, { elicitation: {} });
      expect(sampling.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
      expect(g.gw.ctx.inputs.waiting).toBe(0);
      // the server is free for the next call
      const next = (await call('test_simple_text')).result;
      expect(next).toMatchObject({ resultType: 'complete', content: [{ type: 'text' }] });
      expect(next).not.toHaveProperty('isError');
    });

    it('refuses only the server’s roots/list when the caller did not declare roots (a server also asks it unprompted), and the call goes on', async () => {
      const r = await call('ask_roots', {}, {}, { elicitation: {} });
      expect(r.status).toBe(200);
      expect(r.result).toMatchObject({ resultType: 'complete' });
      expect(text(r)).toMatch(/^no roots: .*did not declare the "roots" capability/);
      expect(g.gw.ctx.inputs.waiting).toBe(0);
      const asked = await call('ask_roots');
      expect(asked.result).toMatchObject({ resultType: 'input_required' });
      const key = Object.keys(asked.result!.inputRequests)[0];
      const answered = await call(
        'ask_roots',
        {},
        { inputResponses: { [key]: { roots: [{ uri: 'file:///w', name: 'w' }] } }, requestState: asked.result!.requestState },
      );
      expect(text(answered)).toBe('roots: file:///w');
    });

    it('drops a call whose client never comes back after MCP_INPUT_TIMEOUT_MS; its state is then unknown', async () => {
      const first = await call('test_elicitation', { message: 'm' });
      expect(g.gw.ctx.inputs.waiting).toBe(1);
      await sleep(INPUT_TIMEOUT_MS + 500);
      expect(g.gw.ctx.inputs.waiting).toBe(0);
      const late = await call(
        'test_elicitation',
        { message: 'm' },
        { inputResponses: { 'elicitation-1': { action: 'cancel' } }, requestState: first.result!.requestState },
      );
      expect(late.error).toMatchObject({ code: -32602, message: expect.stringContaining('expired') });
      // the server is free again: a new call is asked afresh
      const fresh = await call('test_elicitation', { message: 'again' });
      expect(fresh.result?.resultType).toBe('input_required');
      await call(
        'test_elicitation',
        { message: 'again' },
        { inputResponses: { 'elicitation-1': { action: 'cancel' } }, requestState: fresh.result!.requestState },
      );
    }, 15_000);

    it('puts a server’s request to the call that is running, not to one parked on its client', async () => {
      const parked = await call('test_elicitation', { message: 'parked' });
      expect(parked.result?.resultType).toBe('input_required');
      // the server now runs a second call while the first waits for its client's retry (a person takes
      // longer than the few ms in which a server's simultaneous requests arrive)
      await sleep(50);
      const second = await call('ask_twice');
      expect(second.result?.inputRequests['elicitation-1'].params.message).toBe('Step 1: What is your name?');
      const r2 = await call(
        'ask_twice',
        {},
        { inputResponses: { 'elicitation-1': { action: 'accept', content: { name: 'Bo' } } }, requestState: second.result!.requestState },
      );
      const r3 = await call(
        'ask_twice',
        {},
        { inputResponses: { 'elicitation-2': { action: 'accept', content: { colour: 'red' } } }, requestState: r2.result!.requestState },
      );
      expect(text(r3)).toBe('Hello Bo, who likes red.');
      const first = await call(
        'test_elicitation',
        { message: 'parked' },
        { inputResponses: { 'elicitation-1': { action: 'cancel' } }, requestState: parked.result!.requestState },
      );
      expect(text(first)).toBe('User response: action=cancel, content={}');
    });

    it('asks during prompts/get and resources/read too (a request of either kind, its own signed state)', async () => {
      const meta = { meta: { ...META_2026, 'io.modelcontextprotocol/clientCapabilities': ALL } };
      const rpc = async (method: string, params: Record<string, unknown>, name: string) =>
        (await (await post2026(g.url, method, params, { ...meta, headers: { 'mcp-name': name } })).json()) as Rpc;
      const first = await rpc('prompts/get', { name: 'ask_prompt' }, 'ask_prompt');
      expect(first.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: { 'elicitation-1': { method: 'elicitation/create', params: { message: 'What context should the prompt use?' } } },
      });
      // a prompt's state is not a tool's
      const foreign = await call('ask_prompt', {}, { inputResponses: {}, requestState: first.result!.requestState });
      expect(foreign.error).toMatchObject({ code: -32602, message: expect.stringContaining('integrity check') });
      const prompt = await rpc(
        'prompts/get',
        {
          name: 'ask_prompt',
          inputResponses: { 'elicitation-1': { action: 'accept', content: { context: 'billing' } } },
          requestState: first.result!.requestState,
        },
        'ask_prompt',
      );
      expect(prompt.result).toMatchObject({ resultType: 'complete', messages: [{ role: 'user', content: { text: 'Context: billing' } }] });

      const uri = 'test://asking-resource';
      const asked = await rpc('resources/read', { uri }, uri);
      expect(asked.result?.resultType).toBe('input_required');
      const read = await rpc(
        'resources/read',
        {
          uri,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { part: 'two' } } },
          requestState: asked.result!.requestState,
        },
        uri,
      );
      expect(read.result).toMatchObject({ resultType: 'complete', contents: [{ uri, text: 'part two' }], ttlMs: 0, cacheScope: 'private' });
    });

    it('passes an MCP server’s -32042 (URL elicitation required) to the caller as that JSON-RPC error, elicitations included', async () => {
      const r = await call('needs_connect');
      expect(r.status).toBe(200);
      expect(r.error).toEqual({
        code: -32042,
        message: 'This request requires more information.',
        data: {
          elicitations: [
            {
              mode: 'url',
              elicitationId: 'connect-1',
              url: 'https://example.com/connect?session=1',
              message: 'Connect your example.com account.',
            },
          ],
        },
      });
    });

    it('serves the official v2 SDK client, which answers input_required through its own elicitation handler', async () => {
      const client = new V2Client({ name: 'v2-asked', version: '1.0.0' }, {
        capabilities: { elicitation: {} },
        versionNegotiation: { mode: { pin: '2026-07-28' } },
      } as ConstructorParameters<typeof V2Client>[1]);
      const asked: string[] = [];
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(String((request.params as { message?: string }).message));
        return { action: 'accept', content: { username: 'v2', email: 'v2@example.com' } };
      });
      await client.connect(new V2Transport(new URL(`${g.url}/mcp`)));
      const result = (await client.callTool({ name: 'test_elicitation', arguments: { message: 'From v2?' } })) as CallToolResult;
      expect(asked).toEqual(['From v2?']);
      expect((result.content[0] as { text: string }).text).toBe(
        'User response: action=accept, content={"username":"v2","email":"v2@example.com"}',
      );
      await client.close();
    });
  });

  describe('what a 2026-07-28 call streams', () => {
    /** The messages of an answer: the events of a stream, or the one JSON body. */
    async function messages(meta: Record<string, unknown>, name: string): Promise<{ type: string; list: Record<string, any>[] }> {
      const res = await post2026(g.url, 'tools/call', { name, arguments: {} }, { meta: { ...META_2026, ...meta } });
      const type = res.headers.get('content-type') ?? '';
      const text = await res.text();
      if (!type.startsWith('text/event-stream')) return { type, list: [JSON.parse(text)] };
      const list = text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as Record<string, any>);
      return { type, list };
    }

    it('streams the server’s log messages at or above _meta’s logLevel, then the result; none without it', async () => {
      const info = await messages({ 'io.modelcontextprotocol/logLevel': 'info' }, 'test_logging_tool');
      expect(info.type).toMatch(/^text\/event-stream/);
      expect(info.list.map((m) => m.method ?? 'result')).toEqual([
        'notifications/message',
        'notifications/message',
        'notifications/message',
        'result',
      ]);
      expect(info.list[0].params).toEqual({ level: 'info', data: 'Tool execution started' });
      expect(info.list[3].result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Logged three messages.' }] });
      for (const meta of [{}, { 'io.modelcontextprotocol/logLevel': 'warning' }]) {
        const quiet = await messages(meta, 'test_logging_tool');
        expect(quiet.type).toMatch(/^application\/json/);
        expect(quiet.list).toHaveLength(1);
        expect(quiet.list[0].result.resultType).toBe('complete');
      }
      const bad = await messages({ 'io.modelcontextprotocol/logLevel': 'loud' }, 'test_logging_tool');
      expect(bad.list[0].error).toMatchObject({ code: -32602, message: expect.stringContaining('debug, info') });
    });

    it('keeps a log message to itself while another call is in flight on the server, even one parked on its client', async () => {
      const parked = (await (
        await post2026(
          g.url,
          'tools/call',
          { name: 'test_elicitation', arguments: { message: 'm' } },
          { meta: { ...META_2026, 'io.modelcontextprotocol/clientCapabilities': ALL } },
        )
      ).json()) as { result: Record<string, any> };
      expect(parked.result.resultType).toBe('input_required');
      await sleep(50);
      // the parked call's server could be the one logging: neither caller is told
      const logged = await messages({ 'io.modelcontextprotocol/logLevel': 'debug' }, 'test_logging_tool');
      expect(logged.type).toMatch(/^application\/json/);
      expect(logged.list.map((m) => m.method ?? 'result')).toEqual(['result']);
      await post2026(
        g.url,
        'tools/call',
        {
          name: 'test_elicitation',
          arguments: { message: 'm' },
          inputResponses: { 'elicitation-1': { action: 'cancel' } },
          requestState: parked.result.requestState,
        },
        { meta: { ...META_2026, 'io.modelcontextprotocol/clientCapabilities': ALL } },
      );
    });

    it('streams progress for _meta.progressToken, then the result', async () => {
      const { list } = await messages({ progressToken: 'p-1' }, 'test_tool_with_progress');
      expect(list.filter((m) => m.method === 'notifications/progress').map((m) => m.params)).toEqual([
        { progressToken: 'p-1', progress: 0, total: 100 },
        { progressToken: 'p-1', progress: 50, total: 100 },
        { progressToken: 'p-1', progress: 100, total: 100 },
      ]);
      expect(list.at(-1)!.result).toMatchObject({ resultType: 'complete' });
      expect(list.at(-1)!.result).not.toHaveProperty('isError');
    });
  });

  describe('a task (tasks extension)', () => {
    const TASK_CAPS = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const meta = { ...META_2026, 'io.modelcontextprotocol/clientCapabilities': TASK_CAPS };
    const rpc = async (method: string, params: Record<string, unknown>): Promise<Rpc> => {
      const res = await post2026(g.url, method, params, { meta, headers: { 'mcp-name': String(params.name ?? params.taskId) } });
      return { status: res.status, ...((await res.json()) as { result?: Record<string, any>; error?: Rpc['error'] }) };
    };
    async function until(taskId: string, status: string): Promise<Record<string, any>> {
      for (let i = 0; i < 100; i++) {
        const r = await rpc('tasks/get', { taskId });
        if (r.result?.status === status) return r.result;
        await sleep(50);
      }
      throw new Error(`task ${taskId} never became ${status}`);
    }

    it('reads input_required with the question on tasks/get; a wrong-shaped answer is -32602 and delivers nothing; the right one completes it', async () => {
      const created = await rpc('tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } });
      expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
      const taskId = created.result!.taskId as string;
      const waiting = await until(taskId, 'input_required');
      expect(waiting.inputRequests).toEqual({
        'elicitation-1': {
          method: 'elicitation/create',
          params: expect.objectContaining({ message: 'Delete a.txt?' }),
        },
      });
      expect(waiting.statusMessage).toContain('elicitation/create');
      const wrong = await rpc('tasks/update', { taskId, inputResponses: { 'elicitation-1': { action: 'sure' } } });
      expect(wrong.error).toMatchObject({ code: -32602, message: expect.stringContaining('Nothing was delivered') });
      expect((await rpc('tasks/get', { taskId })).result).toMatchObject({ status: 'input_required' });
      const ack = await rpc('tasks/update', {
        taskId,
        inputResponses: { 'elicitation-1': { action: 'accept', content: { confirm: true } } },
      });
      expect(ack.result).toEqual({ resultType: 'complete' });
      const done = await until(taskId, 'completed');
      expect(done.inputRequests).toBeUndefined();
      expect(done.result.content).toEqual([{ type: 'text', text: 'Deleted a.txt.' }]);
    });
  });

  describe('a 2025-era session', () => {
    async function session(
      capabilities: Record<string, unknown>,
      answer?: (req: { params: { message: string } }) => Promise<Record<string, unknown>>,
    ) {
      const client = new Client({ name: 'v1-asked', version: '1.0.0' }, { capabilities });
      if (answer) client.setRequestHandler(ElicitRequestSchema, answer as never);
      await client.connect(new StreamableHTTPClientTransport(new URL(`${g.url}/mcp`)));
      return client;
    }

    it('is asked on the call’s stream; its time to answer does not count against the call’s time limit', async () => {
      const client = await session({ elicitation: {} }, async () => {
        await sleep(DOWNSTREAM_TIMEOUT_MS + 300);
        return { action: 'accept', content: { username: 'slow', email: 'slow@example.com' } };
      });
      const result = (await client.callTool({ name: 'test_elicitation', arguments: { message: 'Take your time' } })) as CallToolResult;
      expect((result.content[0] as { text: string }).text).toContain('slow@example.com');
      expect(result.isError).toBeFalsy();
      await client.close();
    });

    it('is asked during prompts/get and resources/read too, on that request’s stream; a client without the capability is not', async () => {
      const asked: string[] = [];
      const client = await session({ elicitation: {} }, async (req) => {
        asked.push(req.params.message);
        return { action: 'accept', content: req.params.message.startsWith('Which') ? { part: 'two' } : { context: 'billing' } };
      });
      const prompt = await client.getPrompt({ name: 'ask_prompt' });
      expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Context: billing' } }]);
      const read = await client.readResource({ uri: 'test://asking-resource' });
      expect(read.contents).toEqual([{ uri: 'test://asking-resource', mimeType: 'text/plain', text: 'part two' }]);
      expect(asked).toEqual(['What context should the prompt use?', 'Which part?']);
      // Unknown names keep their JSON-RPC errors; the simple ones their results.
      await expect(client.getPrompt({ name: 'no_such_prompt' })).rejects.toMatchObject({ code: -32602 });
      await expect(client.readResource({ uri: 'test://nothing-here' })).rejects.toMatchObject({ code: -32002 });
      expect((await client.readResource({ uri: 'test://static-text' })).contents[0]).toMatchObject({
        text: expect.stringContaining('static text'),
      });
      await client.close();

      // Without elicitation the server is told it cannot ask, and its own answer to that is the caller's error.
      const plain = await session({});
      await expect(plain.getPrompt({ name: 'ask_prompt' })).rejects.toThrow();
      await plain.close();
    });

    it('gets the server’s log messages on the call’s stream, filtered by the session’s logging/setLevel', async () => {
      const client = await session({});
      const logs: string[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(`${n.params.level} ${String(n.params.data)}`));
      await client.setLoggingLevel('error');
      await client.callTool({ name: 'test_logging_tool', arguments: {} });
      expect(logs).toEqual([]);
      await client.setLoggingLevel('info');
      await client.callTool({ name: 'test_logging_tool', arguments: {} });
      expect(logs).toEqual(['info Tool execution started', 'info Tool processing data', 'info Tool execution completed']);
      await client.close();
    });

    it('tells the server when its client does not answer within MCP_INPUT_TIMEOUT_MS, and the caller sees the server’s own error', async () => {
      const client = await session({ elicitation: {} }, async () => {
        await sleep(INPUT_TIMEOUT_MS + 1000);
        return { action: 'cancel' };
      });
      // the server's tool let the refusal's error through: its JSON-RPC error, as it answered it (issue 29, fidelity)
      const failure = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Too slow' } }).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(McpError);
      expect((failure as McpError).message).toContain(`did not answer elicitation/create within ${INPUT_TIMEOUT_MS} ms`);
      await client.close();
    }, 15_000);

    it('gets an MCP server’s -32042 (URL elicitation required) as that JSON-RPC error, and later its completion notice', async () => {
      const client = await session({ elicitation: { url: {} } });
      const bystander = await session({ elicitation: { url: {} } });
      const completed: string[] = [];
      const heard: string[] = [];
      client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => void completed.push(n.params.elicitationId));
      bystander.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => void heard.push(n.params.elicitationId));
      await sleep(100); // the GET streams open
      const failure = await client.callTool({ name: 'needs_connect', arguments: {} }).catch((err: unknown) => err);
      expect(failure).toMatchObject({ code: -32042, data: { elicitations: [{ elicitationId: 'connect-1', mode: 'url' }] } });
      // the user finished at the URL: the server says so, and the gateway tells the session it asked
      expect(text(await call('complete_connect'))).toBe('connect-1 complete');
      await until(() => completed.length === 1);
      expect(completed).toEqual(['connect-1']);
      expect(heard).toEqual([]);
      await client.close();
      await bystander.close();
    });

    it('cannot be asked without the capability, and a request with two calls in flight on the server is refused as ambiguous', async () => {
      const bare = await session({});
      const refused = (await bare.callTool({ name: 'test_elicitation', arguments: { message: 'm' } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toMatch(/did not declare the \W*elicitation\W* capability/);
      await bare.close();

      const client = await session({ elicitation: {} }, async () => ({ action: 'accept', content: { username: 'u', email: 'e' } }));
      const slow = client.callTool({ name: 'slow_compute', arguments: { seconds: 1 } });
      await sleep(100);
      const ambiguous = await client.callTool({ name: 'test_elicitation', arguments: { message: 'm' } }).catch((err: unknown) => err);
      expect(ambiguous).toBeInstanceOf(McpError);
      expect((ambiguous as McpError).message).toContain('2 tool calls are in flight');
      expect(((await slow) as CallToolResult).isError).toBeFalsy();
      await client.close();
    });
  });
});
