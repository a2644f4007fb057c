/**
 * MCP servers of the stateless revision (2026-07-28) behind the gateway: no initialize, every request
 * stands alone, and what the server needs from the client (elicitation, sampling, roots) comes back
 * in-band as an `input_required` result (SEP-2322) instead of a server-to-client request. Such a
 * server is declared with `"protocolVersion": "2026-07-28"` in MCP_SERVERS and spoken to with the
 * official v2 client, pinned to that revision, with its automatic fulfilment off: the gateway puts
 * each round's requests to the caller of the very call that got them (keyed as the server keyed
 * them) and sends the request again with the answers and the server's `requestState`.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isPlainObject } from '@mcp-fleet/kit';
import { VERSION } from '../core/config';
import { CLIENT_REQUEST_METHODS, type ClientRequestMethod } from './http-client';
import type { StreamBudget } from './stream-budget';

export const MODERN_VERSION = '2026-07-28';
/** Rounds of questions one request may take before the gateway gives up on it (the v2 client's own default). */
const MAX_ROUNDS = 10;
const ASKABLE: ReadonlySet<string> = new Set(CLIENT_REQUEST_METHODS);

export type ModernClient = Client;
export type { McpSubscription, SubscriptionFilter } from '@modelcontextprotocol/client';

/** Asks the caller one of the server's input requests; `key` is the server's name for it. */
export type InputAsker = (method: ClientRequestMethod, params: Record<string, unknown>, key: string) => Promise<Record<string, unknown>>;

/** Where a 2026-07-28 server is: a URL (Streamable HTTP), or a program to start (stdio; its stderr piped). */
export type ModernTarget =
  | { url: string; headers: Record<string, string> }
  | { command: string; args: string[]; cwd?: string; env: Record<string, string>; onStderr: (chunk: Buffer) => void };

/**
 * Connects (server/discover) to a 2026-07-28 server; `capabilities` are what the gateway may be asked;
 * `budget` counts what the server sends and closes a request's stream with it; `takeFirst` sees
 * each message as it is read, before the client, and keeps those it returns true for.
 */
export async function connectModern(
  target: ModernTarget,
  capabilities: Record<string, unknown>,
  timeoutMs: number,
  budget: StreamBudget,
  takeFirst: (message: unknown) => boolean = () => false,
): Promise<ModernClient> {
  const client = new Client({ name: 'mcp-fleet-gateway', version: VERSION }, {
    capabilities,
    versionNegotiation: { mode: { pin: MODERN_VERSION } },
    inputRequired: { autoFulfill: false },
  } as ConstructorParameters<typeof Client>[1]);
  let transport: StreamableHTTPClientTransport | StdioClientTransport;
  if ('url' in target)
    transport = budget.http(
      (fetch) => new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers: target.headers }, fetch }),
    );
  else {
    const { command, args, cwd, env, onStderr } = target;
    transport = budget.stdio(new StdioClientTransport({ command, args, cwd, env, stderr: 'pipe', maxBufferSize: budget.stdioBufferSize }));
    transport.stderr?.on('data', onStderr);
  }
  readInbound(transport, takeFirst);
  try {
    await client.connect(transport, { timeout: timeoutMs } as never);
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
  return client;
}

/** Results the revision makes cacheable: lists and reads. */
const CACHEABLE = ['tools', 'prompts', 'resources', 'resourceTemplates', 'contents'];

/**
 * What a sloppy server leaves out, filled in as the revision reads an older server's result: no
 * `resultType` is complete; a list or read without `ttlMs`/`cacheScope` is not to be cached (0 ms,
 * private), never a reason to refuse the answer (the v2 client refused it, and the whole server read
 * as unhealthy).
 */
export function withDefaults(result: Record<string, unknown>): Record<string, unknown> {
  const cacheable = CACHEABLE.some((k) => Array.isArray(result[k]));
  const badScope = result.cacheScope !== 'public' && result.cacheScope !== 'private';
  if ('resultType' in result && (!cacheable || (typeof result.ttlMs === 'number' && !badScope))) return result;
  const out: Record<string, unknown> = { ...result };
  if (!('resultType' in out)) out.resultType = 'complete';
  if (cacheable && typeof out.ttlMs !== 'number') out.ttlMs = 0;
  if (cacheable && badScope) out.cacheScope = 'private';
  return out;
}

/**
 * What the transport delivers, as the gateway reads it before the client: a message `takeFirst`
 * keeps goes no further; a result gets what a sloppy server left out (withDefaults), so that one
 * sloppy answer no longer looks like a broken server.
 */
export function readInbound(transport: object, takeFirst: (message: unknown) => boolean): void {
  type Handler = (message: unknown, extra?: unknown) => void;
  const bridged =
    (handler: Handler): Handler =>
    (message, extra) => {
      if (takeFirst(message)) return;
      const m = message as { id?: unknown; result?: unknown };
      handler(m.id !== undefined && isPlainObject(m.result) ? { ...m, result: withDefaults(m.result) } : message, extra);
    };
  // on top of an accessor already there (the stream budget's), else a plain slot
  const own = Object.getOwnPropertyDescriptor(transport, 'onmessage');
  let slot = own?.value as Handler | undefined;
  const get = own?.get ? (own.get.bind(transport) as () => Handler | undefined) : () => slot;
  const set = own?.set ? (own.set.bind(transport) as (h: Handler | undefined) => void) : (h: Handler | undefined) => (slot = h);
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    enumerable: true,
    get,
    set: (handler?: Handler) => set(handler ? bridged(handler) : undefined),
  });
}

/**
 * Sends a request that the server may answer `input_required`: each round's requests go to `ask`
 * (all of a round at once), then the request again with `inputResponses` and the server's
 * `requestState`, until a complete result.
 */
export async function withInputRounds<T>(
  what: string,
  send: (extra: Record<string, unknown>) => Promise<unknown>,
  ask: InputAsker,
  /** What the first request carries besides (answers the caller sent up front). */
  first: Record<string, unknown> = {},
): Promise<T> {
  let extra: Record<string, unknown> = first;
  for (let round = 1; ; round++) {
    const result = await send(extra);
    if (!isPlainObject(result) || result.resultType !== 'input_required') return result as T;
    const requests = isPlainObject(result.inputRequests) ? Object.entries(result.inputRequests) : [];
    if (round > MAX_ROUNDS)
      throw new McpError(ErrorCode.InternalError, `${what} still asked for input after ${MAX_ROUNDS} rounds; the gateway gave up on it.`);
    for (const [key, request] of requests)
      if (!isPlainObject(request) || typeof request.method !== 'string' || !ASKABLE.has(request.method))
        throw new McpError(ErrorCode.InternalError, `${what} asked for input the gateway cannot put to a client (${key}).`);
    const answers = await Promise.all(
      requests.map(async ([key, request]) => {
        const { method, params } = request as { method: ClientRequestMethod; params?: unknown };
        return [key, await ask(method, isPlainObject(params) ? params : {}, key)] as const;
      }),
    );
    extra = {
      inputResponses: Object.fromEntries(answers),
      ...(typeof result.requestState === 'string' ? { requestState: result.requestState } : {}),
    };
  }
}

/** A v2 client's error as the v1 McpError the rest of the gateway reads (code, message, data; its prefixes are stripped there). */
export function asMcpError(err: unknown): unknown {
  if (err instanceof McpError || !(err instanceof Error)) return err;
  const { code, data } = err as Error & { code?: unknown; data?: unknown };
  if (typeof code === 'number') return new McpError(code, err.message, data);
  // An HTTP error status whose body is the server's JSON-RPC error (the revision answers -32601 with
  // 404 and header mismatches with 400): that error, not a failed transport.
  const text = isPlainObject(data) && typeof data.status === 'number' && typeof data.text === 'string' ? data.text : undefined;
  if (text === undefined) return err;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return err;
  }
  const error = isPlainObject(body) && isPlainObject(body.error) ? body.error : undefined;
  if (typeof error?.code !== 'number' || typeof error.message !== 'string') return err;
  return new McpError(error.code, error.message, error.data);
}
