/**
 * Clients of the older HTTP+SSE transport (MCP 2024-11-05) on the gateway's GET /sse and POST
 * /messages (src/mcp/rev-2025-11-25/legacy-sse.ts): the SDK's own SSEClientTransport lists and calls
 * the catalog, gets progress and an MCP server's results unchanged; a stream belongs to the principal
 * that opened it, and a POST naming another's session is answered as one that does not exist.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { tempDir } from '@mcp-fleet/testing';
import { newApiKey } from '../src/auth/auth';
import { SHOW_RESULT } from './fixtures/meta-mcp-server';
import { startGatewayWithStdioServer, type RunningGateway } from './helpers';

const FIXTURE = path.join(__dirname, 'fixtures', 'meta-mcp-server.ts');
const CONFORMANCE_FIXTURE = path.join(__dirname, 'fixtures', 'conformance-fixture-server.ts');

describe('clients of the older HTTP+SSE transport (GET /sse)', () => {
  const tmp = tempDir('mcp-fleet-legacy-clients-');
  const alice = newApiKey('alice', ['tools:read', 'tools:write']);
  const mallory = newApiKey('mallory', ['tools:read', 'tools:write']);
  let g: RunningGateway;

  const connect = async (key: string) => {
    const client = new Client({ name: 'old-client', version: '1' });
    const transport = new SSEClientTransport(new URL(`${g.url}/sse`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
    await client.connect(transport);
    return { client, transport };
  };

  beforeAll(async () => {
    fs.writeFileSync(path.join(tmp.dir, 'keys.json'), JSON.stringify([alice.entry, mallory.entry]));
    g = await startGatewayWithStdioServer('meta', FIXTURE, tmp.dir, 'meta_show', { API_KEYS_FILE: path.join(tmp.dir, 'keys.json') });
  }, 60_000);

  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  it('lists and calls the catalog over its one stream, with progress, results as the server sent them', async () => {
    const { client } = await connect(alice.key);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['meta_show', 'meta_steady']));
      expect(await client.callTool({ name: 'meta_show', arguments: {} })).toEqual(SHOW_RESULT);
      const seen: number[] = [];
      // reports 100 ms apart, so that a stall of the loaded machine does not bring them in with the answer (at 20 ms, one
      // CI rehearsal saw none of the three: all came in the answer's turn, which the client drops)
      const done = await client.callTool({ name: 'meta_steady', arguments: { steps: 3, everyMs: 100 } }, undefined, {
        onprogress: (p) => seen.push(p.progress),
      });
      expect(done.content).toEqual([{ type: 'text', text: 'worked 3 steps' }]);
      // every report is sent before the answer (seen on the wire); the SDK client runs its progress
      // handler a turn later, so one that arrives with the answer may be dropped by the client itself
      expect(seen.slice(0, 2)).toEqual([1, 2]);
    } finally {
      await client.close();
    }
  });

  it("answers a POST naming another principal's session as a session that does not exist", async () => {
    const { client, transport } = await connect(alice.key);
    try {
      const sessionId = (transport as unknown as { _endpoint?: URL })._endpoint?.searchParams.get('sessionId');
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const post = (key: string, id: string) =>
        fetch(`${g.url}/messages?sessionId=${id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
        });
      const theirs = await post(mallory.key, sessionId!);
      const none = await post(mallory.key, '00000000-0000-0000-0000-000000000000');
      expect(theirs.status).toBe(404);
      expect([theirs.status, await theirs.text()]).toEqual([none.status, await none.text()]);
      // the owner's own POST is taken (answered on the stream)
      expect((await post(alice.key, sessionId!)).status).toBe(202);
      // and without a key there is no stream at all, nor from a page of another site (DNS rebinding)
      expect((await fetch(`${g.url}/sse`)).status).toBe(401);
      const rebound = await fetch(`${g.url}/sse`, { headers: { authorization: `Bearer ${alice.key}`, origin: 'http://evil.example' } });
      expect(rebound.status).toBe(403);
    } finally {
      await client.close();
    }
  });
});

describe('an HTTP+SSE client is asked what the MCP server behind the gateway asks, and hears its log messages', () => {
  const tmp = tempDir('mcp-fleet-legacy-asked-');
  let g: RunningGateway;

  beforeAll(async () => {
    g = await startGatewayWithStdioServer('asker', CONFORMANCE_FIXTURE, tmp.dir, 'test_elicitation');
  }, 60_000);

  afterAll(async () => {
    await g?.stop();
    tmp.cleanup();
  });

  const connect = async (capabilities: Record<string, unknown>) => {
    const client = new Client({ name: 'old-client', version: '1' }, { capabilities });
    await client.connect(new SSEClientTransport(new URL(`${g.url}/sse`)));
    return client;
  };

  it('elicitation/create reaches the client on its stream, and its answer reaches the server', async () => {
    const client = await connect({ elicitation: {} });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    });
    try {
      const res = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
      expect(asked).toEqual([expect.objectContaining({ message: 'Who are you?' })]);
      expect(res.content).toEqual([
        { type: 'text', text: 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}' },
      ]);
    } finally {
      await client.close();
    }
  });

  it('a client that did not declare elicitation is not asked: the server is refused, and the call ends with its error', async () => {
    const client = await connect({});
    let asked = 0;
    client.fallbackRequestHandler = async () => {
      asked++;
      return {};
    };
    try {
      const outcome = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who?' } }).then(
        (r) => ({ isError: r.isError, text: JSON.stringify(r.content) }),
        (e: Error) => ({ isError: true, text: e.message }),
      );
      expect(outcome.isError).toBe(true);
      expect(outcome.text).toMatch(/elicitation/);
      expect(asked).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('the server’s log messages arrive before the answer, filtered by the session’s logging/setLevel', async () => {
    const client = await connect({});
    const heard: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void heard.push(n.params.data));
    try {
      await client.setLoggingLevel('debug');
      await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
      expect(heard).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
      heard.length = 0;
      await client.setLoggingLevel('error');
      await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
      expect(heard).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
