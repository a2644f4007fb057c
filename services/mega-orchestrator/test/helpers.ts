import path from 'node:path';
import { createServiceApp, defineTool, listen, type Logger, type PromptListing, type RunningServer, type ServiceApp } from '@mcp-fleet/kit';
import { serve, tempDir, testConfig, testLogger } from '@mcp-fleet/testing';
import type { ServiceEntry } from '@mcp-fleet/inventory';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import request from 'supertest';
import { z } from 'zod';
import { createApp, type Gateway } from '../src/http/app';
import { configSchema, type Config } from '../src/core/config';
import type { DownstreamSpec, McpServerSpec } from '../src/core/types';

/** A real downstream built with the kit, served on 127.0.0.1 (port 0, or a given port to "restart" it). */
export interface Downstream {
  id: string;
  url: string;
  port: number;
  calls: Map<string, number>;
  /** The next n POST /tools/call requests have their connection dropped before any answer. */
  dropNext: number;
  /** The next n POST /tools/call requests are never answered (a service that ignores its time budget). */
  hangNext: number;
  /** /health answers 503 while set. */
  failHealth: boolean;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** Waits ms, or rejects with the signal's reason when it aborts first. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason);
    });
  });

export function alphaTools(calls: Map<string, number>) {
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  return [
    defineTool({
      name: 'echo',
      description: 'Echoes text back. Caps: 1000 characters.',
      input: z.object({ text: z.string().max(1000).describe('Text to echo.') }).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true },
      handler: ({ text }) => {
        count('echo');
        return { text };
      },
    }),
    defineTool({
      name: 'sleep',
      description: 'Sleeps ms milliseconds (max 10 s).',
      input: z.object({ ms: z.number().int().min(0).max(10_000).describe('Milliseconds.') }).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true },
      handler: async ({ ms }, ctx) => {
        count('sleep');
        await sleep(ms, ctx.signal);
        return { slept: ms };
      },
    }),
    defineTool({
      name: 'fail',
      description: 'Always fails with an internal error.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true },
      handler: () => {
        count('fail');
        throw new Error('boom');
      },
    }),
    defineTool({
      name: 'scalar',
      description: 'Returns the number 42.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true },
      handler: () => 42,
    }),
    defineTool({
      name: 'write_note',
      description: 'Pretends to write a note (not idempotent).',
      input: z.object({ note: z.string().describe('The note.'), password: z.string().optional().describe('A secret.') }).strict(),
      annotations: { readOnlyHint: false, idempotentHint: false },
      handler: ({ note }) => {
        count('write_note');
        return { written: note.length };
      },
    }),
    defineTool({
      name: 'request_id',
      description: 'Returns the X-Request-Id it was called with.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true },
      handler: (_args, ctx) => ({ requestId: ctx.requestId }),
    }),
    defineTool({
      name: 'system_info',
      description: 'System info from alpha.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true },
      handler: () => {
        count('system_info');
        return { from: 'alpha-mcp' };
      },
    }),
  ];
}

export function betaTools(calls: Map<string, number>) {
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  return [
    defineTool({
      name: 'system_info',
      description: 'System info from beta.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true },
      handler: () => {
        count('system_info');
        return { from: 'beta-mcp' };
      },
    }),
    defineTool({
      name: 'memory_stats',
      description: 'Memory store statistics.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true },
      handler: () => ({ memories: 3 }),
    }),
    defineTool({
      name: 'ping_beta',
      description: 'Answers pong.',
      input: z.object({}).strict(),
      annotations: { readOnlyHint: true, idempotentHint: true },
      handler: () => ({ pong: true }),
    }),
  ];
}

export async function startDownstream(
  id: string,
  makeTools: (calls: Map<string, number>) => ReturnType<typeof alphaTools | typeof betaTools>,
): Promise<Downstream> {
  const calls = new Map<string, number>();
  const state: Downstream = {
    id,
    url: '',
    port: 0,
    calls,
    dropNext: 0,
    hangNext: 0,
    failHealth: false,
    stop: async () => undefined,
    start: async () => undefined,
  };
  const build = (): ServiceApp =>
    createServiceApp({
      service: id,
      config: testConfig,
      logger: testLogger(id),
      tools: makeTools(calls),
      healthChecks: [
        {
          name: 'flag',
          check: () => {
            if (state.failHealth) throw new Error('told to fail');
          },
        },
      ],
      extend: (app) => {
        app.post('/tools/call', (req, _res, next) => {
          if (state.dropNext > 0) {
            state.dropNext -= 1;
            req.socket.destroy();
            return;
          }
          if (state.hangNext > 0) {
            state.hangNext -= 1;
            return;
          }
          next();
        });
      },
    });
  let running: RunningServer | undefined;
  state.start = async () => {
    const svc = build();
    running =
      state.port === 0 ? await serve(svc.app) : await listen(svc.app, { host: '127.0.0.1', port: state.port, shutdownTimeoutMs: 200 });
    state.port = running.port;
    state.url = running.url;
  };
  state.stop = async () => {
    running?.server.closeAllConnections();
    await running?.stop();
    running = undefined;
  };
  await state.start();
  return state;
}

/** A kit service offering these prompts (read live: a test may change the array); get answers "<name> about <topic>". */
export function promptService(id: string, prompts: PromptListing[]): ServiceApp {
  return createServiceApp({
    service: id,
    config: testConfig,
    logger: testLogger(id),
    tools: [],
    defaultMetrics: false,
    prompts: {
      list: () => prompts,
      get: (name, args) => ({ messages: [{ role: 'user', content: { type: 'text', text: `${name} about ${args.topic ?? '-'}` } }] }),
    },
  });
}

/** A fixed inventory for tests, so they do not depend on which fleet services are built yet. */
export const TEST_INVENTORY: ServiceEntry[] = [
  {
    id: 'mega-orchestrator',
    port: 7000,
    pattern: 'gateway',
    description: 'The gateway.',
    tools: [],
    backends: ['sqlite'],
    status: 'available',
    http: true,
  },
  {
    id: 'alpha-mcp',
    port: 7101,
    pattern: 'tool-oriented',
    description: 'Test service alpha.',
    tools: ['echo'],
    backends: [],
    status: 'available',
    http: true,
  },
  {
    id: 'beta-mcp',
    port: 7102,
    pattern: 'tool-oriented',
    description: 'Test service beta.',
    tools: [],
    backends: [],
    status: 'available',
    http: true,
  },
  {
    id: 'memory-mcp',
    port: 7005,
    pattern: 'route-oriented',
    description: 'A planned service.',
    tools: ['store_memory', 'list_memories'],
    backends: ['sqlite'],
    status: 'planned',
    http: true,
  },
  { id: 'vision-mcp', port: 7014, pattern: 'scaffold', description: 'Excluded.', tools: [], backends: [], status: 'excluded', http: false },
];

export function gatewayConfig(dataDir: string, overrides: Record<string, string> = {}): Config {
  return configSchema.parse({
    ...testConfig,
    DATA_DIR: dataDir,
    HEALTH_POLL_MS: '200',
    HEALTH_TIMEOUT_MS: '1000',
    DOWNSTREAM_TIMEOUT_MS: '5000',
    SESSION_FLUSH_MS: '20',
    ...overrides,
  });
}

export interface RunningGateway {
  gw: Gateway;
  url: string;
  stop(): Promise<void>;
}

export async function startGateway(
  services: DownstreamSpec[],
  dataDir: string,
  overrides: Record<string, string> = {},
  options: {
    inventory?: readonly ServiceEntry[];
    logger?: Logger;
    /**
     * What to wait for, refreshing meanwhile: tool names in the catalog, or a condition (a server's
     * discovery under a short DOWNSTREAM_TIMEOUT_MS can miss its first try on a loaded machine).
     */
    ready?: readonly string[] | ((g: RunningGateway) => boolean);
    /** How long `ready` may take (20 s). */
    readyMs?: number;
  } = {},
): Promise<RunningGateway> {
  const gw = createApp({
    config: gatewayConfig(dataDir, overrides),
    logger: options.logger ?? testLogger('gateway'),
    services,
    inventory: options.inventory ?? TEST_INVENTORY,
    autoStart: false,
  });
  await gw.refresh();
  // A given PORT is listened on (a test that must know the URL before the gateway starts).
  const port = Number(overrides.PORT ?? 0);
  const running = port ? await listen(gw.app, { host: '127.0.0.1', port, shutdownTimeoutMs: 200 }) : await serve(gw.app);
  const g: RunningGateway = {
    gw,
    url: running.url,
    stop: async () => {
      await gw.mcp.close();
      running.server.closeAllConnections();
      await running.stop();
      await gw.close();
    },
  };
  const { ready = [], readyMs = 20_000 } = options;
  const missing = () =>
    typeof ready === 'function' ? (ready(g) ? [] : ['its ready condition']) : ready.filter((name) => !gw.registry.catalog.byName.has(name));
  const end = Date.now() + readyMs;
  for (;;) {
    const left = missing();
    if (!left.length) return g;
    if (Date.now() > end) {
      await g.stop();
      throw new Error(`the gateway did not meet ${left.join(', ')} within ${readyMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
    await gw.refresh();
  }
}

/** Every tool name an MCP client is shown, every page of tools/list followed. */
export async function listToolNames(client: {
  listTools(params?: { cursor: string }): Promise<{ tools: { name: string }[]; nextCursor?: string }>;
}): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  return names;
}

/** The `_meta` every 2026-07-28 request carries (no client capabilities). */
export const META_2026 = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };

/**
 * POSTs one 2026-07-28 request to the gateway's /mcp with the headers the revision asks for
 * (MCP-Protocol-Version, Mcp-Method; Mcp-Name from params.name when there is one); `headers` adds to
 * or replaces them.
 */
export function post2026(
  url: string,
  method: string,
  params: Record<string, unknown>,
  opts: { id?: string | number | null; meta?: Record<string, unknown>; headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
      ...opts.headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: opts.id === undefined ? 1 : opts.id,
      method,
      params: { _meta: opts.meta ?? META_2026, ...params },
    }),
    signal: opts.signal,
  });
}

/** A gateway in front of one MCP server over stdio (a TypeScript file run with tsx), once `tool` is in its catalog. */
export async function startGatewayWithStdioServer(
  id: string,
  file: string,
  dataDir: string,
  tool: string,
  overrides: Record<string, string> = {},
): Promise<RunningGateway> {
  const repo = path.resolve(__dirname, '../../..');
  const mcp: McpServerSpec = { transport: 'stdio', command: process.execPath, args: ['--import', 'tsx', file], cwd: repo, env: {} };
  return startGatewayWithMcpServer(id, mcp, dataDir, tool, overrides);
}

/** A gateway in front of one MCP server (stdio or Streamable HTTP), once `tool` is in its catalog. */
export async function startGatewayWithMcpServer(
  id: string,
  mcp: McpServerSpec,
  dataDir: string,
  tool: string,
  overrides: Record<string, string> = {},
): Promise<RunningGateway> {
  const spec: DownstreamSpec = { id, url: mcp.transport === 'stdio' ? `stdio:${id}` : mcp.url, mcp };
  return startGateway([spec], dataDir, { HEALTH_POLL_MS: '600000', HEALTH_TIMEOUT_MS: '5000', ...overrides }, { ready: [tool] });
}

export type Frame = { comment: true } | { data: any };

/** POSTs a 2026-07-28 subscriptions/listen request to a gateway and reads its SSE stream frame by frame. */
export async function openListen(
  url: string,
  params: Record<string, unknown>,
  opts: { id?: string | number | null; headers?: Record<string, string> } = {},
) {
  const ac = new AbortController();
  const id = opts.id === undefined ? 'listen-1' : opts.id;
  const res = await post2026(url, 'subscriptions/listen', params, { id, headers: opts.headers, signal: ac.signal });
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const decoder = new TextDecoder();
  let buf = '';
  const frame = async (): Promise<Frame | undefined> => {
    for (;;) {
      const end = buf.indexOf('\n\n');
      if (end >= 0) {
        const raw = buf.slice(0, end);
        buf = buf.slice(end + 2);
        if (raw.startsWith(':')) return { comment: true };
        const data = raw
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n');
        return { data: JSON.parse(data) };
      }
      reader ??= res.body!.getReader();
      const { value, done } = await reader.read();
      if (done) return undefined;
      buf += decoder.decode(value, { stream: true });
    }
  };
  /** The next message, keep-alive comments skipped; undefined when the stream ended. */
  const next = async (): Promise<any> => {
    for (;;) {
      const f = await frame();
      if (!f || 'data' in f) return f?.data;
    }
  };
  return { res, frame, next, close: () => ac.abort() };
}

/** Waits until the check holds (polling every 10 ms), failing after `ms`. */
export const until = async (check: () => boolean, ms = 3000) => {
  const stop = Date.now() + ms;
  while (!check()) {
    if (Date.now() > stop) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** A 2025-era MCP session opened by hand on a gateway: its Mcp-Session-Id. */
export async function initSession(url: string): Promise<string> {
  const init = await request(url)
    .post('/mcp')
    .set('accept', 'application/json, text/event-stream')
    .send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    })
    .expect(200);
  return init.headers['mcp-session-id'] as string;
}

/**
 * A gateway in front of `specs` and a 2025-era MCP client of it, for one describe block (set up in its
 * beforeAll): ready once `ready` holds, the gateway refreshed meanwhile (tool names: once they are in
 * its catalog). `stop` ends what the specs started; `readyMs` is how long they may take (20 s).
 */
export function gatewayWithClient(
  specs: () => DownstreamSpec[] | Promise<DownstreamSpec[]>,
  ready: string[] | ((g: RunningGateway) => boolean),
  overrides: Record<string, string>,
  stop?: () => Promise<void> | void,
  readyMs = 20_000,
): { g: RunningGateway; client: Client } {
  const tmp = tempDir('mcp-fleet-gw-client-');
  const f = {} as { g: RunningGateway; client: Client };
  beforeAll(async () => {
    f.g = await startGateway(
      await specs(),
      tmp.dir,
      { HEALTH_POLL_MS: '600000', HEALTH_TIMEOUT_MS: '5000', ...overrides },
      { ready, readyMs },
    );
    f.client = new Client({ name: 'gateway-test', version: '1' });
    await f.client.connect(new StreamableHTTPClientTransport(new URL(`${f.g.url}/mcp`)));
  }, readyMs + 40_000);
  afterAll(async () => {
    await f.client?.close();
    await f.g?.stop();
    await stop?.();
    tmp.cleanup();
  });
  return f;
}
