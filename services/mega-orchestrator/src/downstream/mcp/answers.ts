/**
 * An MCP server's answers as the gateway's downstream answers (../downstream.ts): a tool result as
 * it is (what MCP clients get) with the fleet's envelope made of it (its own result in `mcp`), a
 * list's pages as one list, the fleet's error envelope, and why the SDK refused an answer the server
 * sent.
 */
import { setMaxListeners } from 'node:events';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isErrorCode, isPlainObject, META_SERVER_INFO, statusForCode, type ErrorCode as FleetCode } from '@mcp-fleet/kit';
import type { DownstreamAnswer, ListAnswer, ToolAnswer } from '../downstream';

const MAX_LIST_PAGES = 100;

/**
 * An MCP error's message without the SDK's `MCP error -32602: ` prefixes: the one its McpError puts
 * before the server's message, and any the server's own message carried (a server that sent its
 * McpError's message whole); the code travels on its own. Every path to a client strips them alike
 * (mcp/errors.ts, the 2025-11-25 transport's withPlainErrorMessages).
 */
export function withoutPrefix(message: string): string {
  return message.replace(/^(MCP error -?\d+: )+/, '');
}

/**
 * A result without the identity of the server that sent it (`_meta["io.modelcontextprotocol/serverInfo"]`,
 * which 2026-07-28 allows in every result): passed on, it would name that server as the gateway to
 * the gateway's clients. The rest of `_meta` is the server's and stays; a `_meta` left empty goes.
 */
function withoutServerInfo<T extends object>(result: T): T {
  const meta = (result as { _meta?: unknown })._meta;
  if (!isPlainObject(meta) || !(META_SERVER_INFO in meta)) return result;
  const { [META_SERVER_INFO]: _identity, ...rest } = meta;
  const { _meta: _all, ...own } = result as T & { _meta?: unknown };
  return (Object.keys(rest).length > 0 ? { ...own, _meta: rest } : own) as T;
}

/** The fleet's error envelope, from MCP server `service`. */
export function errorEnvelope(service: string, code: FleetCode, message: string, details?: unknown): Record<string, unknown> {
  return {
    success: false,
    error: message,
    code,
    service,
    timestamp: new Date().toISOString(),
    ...(details !== undefined ? { details } : {}),
  };
}

/**
 * An MCP tool result as the call's answer: the result as the server sent it (content,
 * structuredContent, `_meta`, any field of its revision), less the 2026-07-28 `resultType`, which
 * each revision's codec writes itself, and the server's identity in `_meta` (withoutServerInfo), is what MCP clients get; the fleet's envelope
 * made of it (for REST callers and the call history) carries it in `mcp` as it was.
 */
export function toolAnswer(service: string, result: CallToolResult): ToolAnswer {
  // (its size was counted on the wire: stream-budget.ts)
  const content = Array.isArray(result.content) ? result.content : [];
  const { resultType: _revisionField, ...own } = withoutServerInfo(result as CallToolResult & { resultType?: unknown });
  const mcp = { ...own, content };
  const answer = envelopeOf(service, result, mcp);
  // isError as the server said it: a result without one is a success by the protocol's default, and is passed without one
  return { ...answer, result: result.isError === undefined ? mcp : { ...mcp, isError: result.isError === true } };
}

/** The fleet's envelope of an MCP tool result (`mcp`: the result as the server sent it): a tool error's code and status as the fleet reads them. */
function envelopeOf(service: string, result: CallToolResult, mcp: CallToolResult): DownstreamAnswer {
  const { content } = mcp;
  if (result.isError) {
    const text = content
      .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
      .map((c) => c.text)
      .join('\n')
      .slice(0, 2000);
    // A fleet service over MCP carries its own code (its envelope, or {code, message} as text); keep it and its status.
    const fleet = fleetError(result.structuredContent) ?? fleetError(parseJson(text));
    if (fleet) return { status: statusForCode(fleet.code), json: { ...errorEnvelope(service, fleet.code, fleet.message), mcp } };
    // SDK servers report bad arguments as a tool result that starts with the JSON-RPC code
    const invalid = /^MCP error -32602: (.*)$/s.exec(text);
    if (invalid) return { status: 400, json: { ...errorEnvelope(service, 'VALIDATION_ERROR', `${service}: ${invalid[1]}`), mcp } };
    return {
      status: 502,
      json: { ...errorEnvelope(service, 'UPSTREAM_ERROR', `${service}: ${text || 'the tool reported an error'}`), mcp },
    };
  }
  const structured = result.structuredContent;
  // a server of protocol 2024-10-07 answers { toolResult } (the SDK's compatibility shape), no content
  const legacy = content.length === 0 ? result.toolResult : undefined;
  const body = structured !== undefined ? structured : legacy !== undefined ? legacy : contentResult(content);
  return {
    status: 200,
    json: { success: true, service, result: body, mcp, timestamp: new Date().toISOString() },
  };
}

/**
 * A prompt's or a read's result as an MCP server sent it, less what a 2026-07-28 server (or the
 * gateway's client of one: withDefaults) writes for its own revision: `resultType`, the cache
 * hints `ttlMs` and `cacheScope`, and its identity in `_meta` (withoutServerInfo). Each revision's
 * codec writes the gateway's own; the rest (`_meta` included) is passed on as the server sent it.
 */
export function withoutRevisionFields(result: unknown): unknown {
  if (!isPlainObject(result)) return result;
  const { resultType: _t, ttlMs: _ttl, cacheScope: _scope, ...own } = withoutServerInfo(result);
  return own;
}

/** The tool's answer for REST callers when it has no structuredContent: its text, parsed if it is JSON. */
function contentResult(content: CallToolResult['content']): unknown {
  if (content.length === 1 && content[0].type === 'text') {
    const text = content[0].text;
    try {
      return JSON.parse(text);
    } catch {
      return { text };
    }
  }
  return { content };
}

/**
 * Every page of an MCP list (tools/list, prompts/list, ...) under its key, up to MAX_LIST_PAGES
 * pages; once more than `max` items are read, the pages left are not (`more`: the registry refuses
 * the excess and says so).
 */
export async function allPages(
  key: string,
  list: (params: { cursor: string } | undefined) => Promise<object>,
  max = Infinity,
  signal?: AbortSignal,
): Promise<ListAnswer> {
  // every page's request listens on the one signal (more than Node's default of 10 is no leak here)
  if (signal) setMaxListeners(MAX_LIST_PAGES + 10, signal);
  let out: unknown[] = [];
  let cursor: string | undefined;
  let more = false;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const res = (await list(cursor ? { cursor } : undefined)) as Record<string, unknown> & { nextCursor?: string };
    const items = Array.isArray(res[key]) ? (res[key] as unknown[]) : [];
    out = out.length ? out.concat(items) : items;
    cursor = res.nextCursor;
    if (!cursor) break;
    if (out.length > max) {
      more = true;
      break;
    }
  }
  return { status: 200, json: { [key]: out, ...(more ? { more: true } : {}) }, value: { items: out, more } };
}

/** Marks the gateway's own McpErrors for a connection, or a call's stream, that ended without an answer. */
const CLOSED = Symbol('connection closed');

/** The gateway's error for a connection, or a call's stream, to the server that ended without an answer (isConnectionClosed). */
export function closedError(message: string): McpError {
  return Object.assign(new McpError(ErrorCode.ConnectionClosed, message), { [CLOSED]: true });
}

/**
 * Whether a call failed because its connection closed: the SDK's own -32000 "Connection closed", or
 * the gateway's (closedError). Not a server's own error -32000, which JSON-RPC leaves servers for
 * errors of their own and many use: that one is the server's answer, passed on to the caller.
 */
export function isConnectionClosed(err: unknown): boolean {
  if (!(err instanceof McpError) || err.code !== ErrorCode.ConnectionClosed) return false;
  return (
    (err as McpError & { [CLOSED]?: true })[CLOSED] === true ||
    (err.message === `MCP error ${ErrorCode.ConnectionClosed}: Connection closed` && err.data === undefined)
  );
}

/** Whether a call failed on the SDK's own time limit (its -32001 carries data.timeout), not a server's own error -32001. */
export function isSdkTimeout(err: unknown): boolean {
  return (
    err instanceof McpError &&
    err.code === ErrorCode.RequestTimeout &&
    typeof (err.data as { timeout?: unknown } | undefined)?.timeout === 'number'
  );
}

/** The v2 client's codes for an answer it refused (the server sent it; the connection is fine). */
const REFUSED_ANSWER_CODES: ReadonlySet<string> = new Set(['INVALID_RESULT', 'UNSUPPORTED_RESULT_TYPE', 'INPUT_REQUIRED_ROUNDS_EXCEEDED']);

/**
 * Why the SDK refused an answer the server sent (either client: the v2 client's SdkError, the v1
 * client's schema check, a ZodError), or undefined for any other failure.
 */
export function brokenAnswer(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const { code, issues } = err as Error & { code?: unknown; issues?: unknown };
  if (typeof code === 'string' && REFUSED_ANSWER_CODES.has(code)) return err.message.slice(0, 500);
  if (Array.isArray(issues)) return `an answer that does not match the MCP schema (${err.message.replace(/\s+/g, ' ').slice(0, 400)})`;
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `{code, error}` (the fleet's envelope) or `{code, message}` with a code of the fleet's table. */
function fleetError(v: unknown): { code: FleetCode; message: string } | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as { code?: unknown; error?: unknown; message?: unknown };
  if (!isErrorCode(o.code)) return undefined;
  const message = typeof o.error === 'string' ? o.error : typeof o.message === 'string' ? o.message : undefined;
  return message === undefined ? undefined : { code: o.code, message };
}
