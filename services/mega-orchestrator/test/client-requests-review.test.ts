/**
 * Review of "questions from MCP servers": defects found by an adversarial read, each pinned by a
 * test here (the conformance fixture over stdio behind a real gateway, or InputExchanges alone).
 */
import path from 'node:path';
import { tempDir, testLogger } from '@mcp-fleet/testing';
import { InputExchanges } from '../src/mcp/client-requests';
import { META_2026, post2026, sleep, startGatewayWithStdioServer, type RunningGateway } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'conformance-fixture-server.ts');

describe('questions from MCP servers: review', () => {
  const tmp = tempDir('mcp-fleet-client-requests-review-');
  let g: RunningGateway;

  beforeAll(async () => {
    g = await startGatewayWithStdioServer('asker', FIXTURE, tmp.dir, 'test_elicitation', {
      DOWNSTREAM_TIMEOUT_MS: '3000',
      MCP_INPUT_TIMEOUT_MS: '3000',
    });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  /** A 2025-11-25 session opened by hand (raw HTTP), with these client capabilities. */
  async function rawSession(capabilities: Record<string, unknown>): Promise<string> {
    const init = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    await init.text();
    const sid = init.headers.get('mcp-session-id')!;
    const ready = await fetch(`${g.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'mcp-session-id': sid },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    await ready.text();
    return sid;
  }

  describe('a 2025-era session POST that accepts only application/json', () => {
    const callJsonOnly = (sid: string, name: string, args: Record<string, unknown> = {}) =>
      fetch(`${g.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'mcp-session-id': sid,
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }),
      });

    it('gets JSON, not an event stream, when the server logs during the call', async () => {
      const sid = await rawSession({});
      const res = await callJsonOnly(sid, 'test_logging_tool');
      const text = await res.text();
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = JSON.parse(text) as { result?: { content: { text: string }[] } };
      expect(body.result?.content[0].text).toBe('Logged three messages.');
    });

    it('is not asked (the server gets -32601, docs: "a POST that did not accept text/event-stream cannot be asked")', async () => {
      const sid = await rawSession({ elicitation: {} });
      const res = await callJsonOnly(sid, 'test_elicitation', { message: 'm' });
      const text = await res.text();
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = JSON.parse(text) as { result?: { isError?: boolean; content: { text: string }[] } };
      expect(body.result?.isError).toBe(true);
      expect(JSON.stringify(body.result?.content)).toContain('did not accept text/event-stream');
    }, 15_000);
  });
});

describe('a retry of an input_required call of a tool that may run as a task', () => {
  const tmp = tempDir('mcp-fleet-client-requests-review-tasks-');
  let g: RunningGateway;
  const TASK_CAPS = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
  const meta = { ...META_2026, 'io.modelcontextprotocol/clientCapabilities': TASK_CAPS };

  beforeAll(async () => {
    g = await startGatewayWithStdioServer('asker', FIXTURE, tmp.dir, 'confirm_delete', {
      MCP_MAX_TASKS: '1',
      MCP_TASK_TTL_MS: '3000',
      MCP_INPUT_TIMEOUT_MS: '10000',
    });
  }, 60_000);
  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  it('resumes the waiting call (it does not start the tool again as a new task once the task store has room)', async () => {
    const rpc = async (params: Record<string, unknown>) => {
      const res = await post2026(g.url, 'tools/call', params, { meta });
      return (await res.json()) as { result?: Record<string, any>; error?: { code: number; message: string } };
    };
    // the one task the store may hold: an optional-task tool now answers synchronously
    const task = await rpc({ name: 'slow_compute', arguments: { seconds: 0 } });
    expect(task.result?.resultType).toBe('task');
    // finished (still stored): its call is no longer in flight on the server, so the question below
    // has one call to belong to (a busy machine may take a moment)
    const taskId = task.result!.taskId as string;
    for (let i = 0; i < 40; i++) {
      const got = (await (await post2026(g.url, 'tasks/get', { taskId }, { meta, headers: { 'mcp-name': taskId } })).json()) as {
        result?: { status?: string };
      };
      if (got.result?.status === 'completed') break;
      await sleep(50);
    }
    const first = await rpc({ name: 'confirm_delete', arguments: { filename: 'a.txt' } });
    expect(first.result?.resultType).toBe('input_required');
    await sleep(3300); // the task expired: the store has room again
    const retry = await rpc({
      name: 'confirm_delete',
      arguments: { filename: 'a.txt' },
      inputResponses: { 'elicitation-1': { action: 'accept', content: { confirm: true } } },
      requestState: first.result!.requestState,
    });
    expect(retry.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'Deleted a.txt.' }] });
    expect(g.gw.ctx.inputs.waiting).toBe(0);
  }, 30_000);
});

describe('InputExchanges', () => {
  it('forgets a call whose client closed its request while a round was being gathered', async () => {
    const inputs = new InputExchanges({ ttlMs: 60_000, logger: testLogger('inputs'), gatherMs: 50 });
    const request = new AbortController();
    const answer = inputs.call(
      async (ask, signal) => {
        void ask('roots/list', {}, signal).catch(() => undefined);
        // the call takes a while to stop once aborted (a slow downstream teardown)
        await new Promise((_, reject) => signal.addEventListener('abort', () => setTimeout(() => reject(signal.reason), 100)));
        return {};
      },
      { owner: '', tool: 't', capabilities: { roots: {} } },
      request.signal,
    );
    await sleep(10);
    request.abort(new Error('the client closed its request'));
    await answer.catch(() => undefined);
    await sleep(150);
    expect(inputs.waiting).toBe(0);
    inputs.close();
  });
});
