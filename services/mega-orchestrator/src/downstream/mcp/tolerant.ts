/**
 * Tolerance of what sloppy MCP servers answer (issue 29: "be exact in what you send and tolerant in
 * what you accept"). Servers in the wild write `null` where MCP has an optional field left out
 * (`"description": null`, `"nextCursor": null`, `"isError": null`), input schemas without
 * `"type": "object"` or with `"required": null`, and content blocks of a type no revision defines.
 * The SDK clients of both eras check every answer against the revision's schema, so one such field
 * made a whole tools/list fail: the server was unhealthy and none of its tools was served. Every
 * answer a server sends is read through `tolerated` before the SDK client sees it; what it changes:
 *
 * - a `null` where an optional field may be absent is left out (initialize's capabilities and server
 *   info, lists, their items, a read's contents, a completion, tool results, content blocks; never
 *   inside `structuredContent`, `_meta` values or a schema's own keywords);
 * - a tool's `inputSchema` becomes a schema MCP allows: an object with `"type": "object"`, its
 *   `properties` an object of schemas (`true` is `{}`, `false` is `{"not": {}}`), `required` strings;
 *   an `outputSchema` that cannot be one (not an object, or a type other than `object`) is left out;
 * - a content block of an unknown type becomes a text block holding its JSON (what it said is kept);
 * - a response id that is a string of digits answers the request of that number: the SDKs number
 *   their requests, and some servers echo the id as a string.
 *
 * An answer that needs none of this is passed on as the same object (nothing is copied per call).
 * What the SDK's transport itself refuses (a message its JSON-RPC schema does not read: a result's or
 * notification's own `"_meta": null`, a message without `"jsonrpc": "2.0"`, an error without a
 * message) it drops, and the call it answered would time out: a server's lines are mended before its
 * transport reads them (`mendedLines`: a stdio server's, and an HTTP answer's through `LineMender`).
 * An HTTP answer belongs to the one request its POST carried, so there an answer whose id is no
 * string or number (`null`, a fraction's spelling, an object, none) is that request's answer.
 */
import { isPlainObject } from '@mcp-fleet/kit';

/** Content block types of the revisions the gateway speaks (2025-11-25, 2026-07-28). */
const BLOCK_TYPES: ReadonlySet<unknown> = new Set(['text', 'image', 'audio', 'resource', 'resource_link']);
/** The lists an answer may carry, by key (`contents`: a read's). */
const LIST_KEYS = ['tools', 'prompts', 'resources', 'resourceTemplates', 'contents'] as const;

/** A JSON-RPC message as a server sent it, tolerated (the same object when nothing needed it). */
export function toleratedMessage(message: unknown): unknown {
  if (!isPlainObject(message) || 'method' in message) return message;
  let out = message;
  const id = answerId(message.id);
  if (id !== message.id) out = { ...out, id };
  if (isPlainObject(message.result)) {
    const result = tolerated(message.result);
    if (result !== message.result) out = { ...out, result };
  }
  return out;
}

/** An answer's id as the SDKs match it: a string of digits answers the request of that number (they number their requests; some servers echo the id as a string). */
export function answerId(id: unknown): unknown {
  return typeof id === 'string' && /^\d{1,15}$/.test(id) ? Number(id) : id;
}

/** A result, tolerated: the same object when it needs nothing. */
export function tolerated(result: Record<string, unknown>): Record<string, unknown> {
  let out = withoutNulls(result);
  for (const key of LIST_KEYS) {
    const list = out[key];
    if (!Array.isArray(list)) continue;
    const items = mapSame(list, key === 'tools' ? toleratedTool : key === 'prompts' ? toleratedPrompt : withoutNulls);
    if (items !== list) out = { ...out, [key]: items };
  }
  if (isPlainObject(out.capabilities)) {
    // initialize: a capability's settings (`"listChanged": null`), and the server's info
    const capabilities = withoutNulls(out.capabilities);
    let fixed: Record<string, unknown> | undefined;
    for (const [name, settings] of Object.entries(capabilities)) {
      const kept = withoutNulls(settings);
      if (kept !== settings) (fixed ??= { ...capabilities })[name] = kept;
    }
    const kept = fixed ?? capabilities;
    if (kept !== out.capabilities) out = { ...out, capabilities: kept };
    const info = withoutNulls(out.serverInfo);
    if (info !== out.serverInfo) out = { ...out, serverInfo: info };
  }
  if (isPlainObject(out.completion)) {
    // completion/complete: `"total": null`, `"hasMore": null`
    const completion = withoutNulls(out.completion);
    if (completion !== out.completion) out = { ...out, completion };
  }
  if (Array.isArray(out.content)) {
    const content = mapSame(out.content, toleratedBlock);
    if (content !== out.content) out = { ...out, content };
  }
  if (Array.isArray(out.messages)) {
    // prompts/get: each message's one content block
    const messages = mapSame(out.messages, (m) => {
      if (!isPlainObject(m) || !isPlainObject(m.content)) return m;
      const content = toleratedBlock(m.content);
      return content === m.content ? m : { ...m, content };
    });
    if (messages !== out.messages) out = { ...out, messages };
  }
  return out;
}

/** The object without its keys whose value is null (the same object when it has none). */
function withoutNulls<T>(value: T): T {
  if (!isPlainObject(value)) return value;
  let nulls = false;
  for (const key in value) {
    if (value[key] === null) {
      nulls = true;
      break;
    }
  }
  if (!nulls) return value;
  const out: Record<string, unknown> = {};
  for (const key in value) if (value[key] !== null) out[key] = value[key];
  return out as T;
}

/** `items` mapped by `f`: the same array when `f` returned every item unchanged. */
function mapSame(items: unknown[], f: (item: unknown) => unknown): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const next = f(items[i]);
    if (next !== items[i]) (out ??= items.slice())[i] = next;
  }
  return out ?? items;
}

function toleratedTool(raw: unknown): unknown {
  if (!isPlainObject(raw)) return raw;
  let tool = withoutNulls(raw);
  const input = objectSchema(tool.inputSchema) ?? { type: 'object' };
  if (input !== tool.inputSchema) tool = { ...tool, inputSchema: input };
  if ('outputSchema' in tool) {
    const output = objectSchema(tool.outputSchema);
    if (output === undefined) {
      const { outputSchema: _unusable, ...rest } = tool;
      tool = rest;
    } else if (output !== tool.outputSchema) tool = { ...tool, outputSchema: output };
  }
  if (isPlainObject(tool.annotations)) {
    const annotations = withoutNulls(tool.annotations);
    if (annotations !== tool.annotations) tool = { ...tool, annotations };
  }
  return tool;
}

function toleratedPrompt(raw: unknown): unknown {
  if (!isPlainObject(raw)) return raw;
  let prompt = withoutNulls(raw);
  if (Array.isArray(prompt.arguments)) {
    const args = mapSame(prompt.arguments, withoutNulls);
    if (args !== prompt.arguments) prompt = { ...prompt, arguments: args };
  }
  return prompt;
}

/**
 * A tool's schema as MCP allows it (type "object", properties of schemas, required strings): the same
 * object when it is one; undefined when it cannot be one (not an object, or another type).
 */
function objectSchema(schema: unknown): Record<string, unknown> | undefined {
  if (!isPlainObject(schema)) return undefined;
  if (schema.type !== undefined && schema.type !== 'object') return undefined;
  let out = schema;
  if (schema.type === undefined) out = { type: 'object', ...out };
  const { properties, required } = out;
  if (properties !== undefined) {
    if (!isPlainObject(properties)) {
      const { properties: _unusable, ...rest } = out;
      out = rest;
    } else {
      let fixed: Record<string, unknown> | undefined;
      for (const [name, s] of Object.entries(properties)) {
        if (isPlainObject(s)) continue;
        (fixed ??= { ...properties })[name] = s === false ? { not: {} } : {};
      }
      if (fixed) out = { ...out, properties: fixed };
    }
  }
  if (required !== undefined && !(Array.isArray(required) && required.every((r) => typeof r === 'string'))) {
    const names = Array.isArray(required) ? required.filter((r): r is string => typeof r === 'string') : [];
    const { required: _unusable, ...rest } = out;
    out = names.length > 0 ? { ...rest, required: names } : rest;
  }
  return out;
}

function toleratedBlock(raw: unknown): unknown {
  if (!isPlainObject(raw)) return { type: 'text', text: JSON.stringify(raw) ?? 'null' };
  if (!BLOCK_TYPES.has(raw.type)) return { type: 'text', text: JSON.stringify(raw) };
  return withoutNulls(raw);
}

type Handler = (message: unknown, extra?: unknown) => void;

/**
 * What a server's transport delivers, as the gateway reads it before its SDK client (either era),
 * from the first message on (initialize's answer included): every message tolerated; one `takeFirst`
 * keeps goes no further (log messages, progress of the gateway's own tokens, a raw request's answer);
 * a result then gets what `fill` adds (the 2026-07-28 client's withDefaults), so that one sloppy
 * answer no longer looks like a broken server. Set on the transport before the client connects.
 */
export function readInbound(
  transport: object,
  takeFirst: (message: unknown) => boolean,
  fill?: (result: Record<string, unknown>) => Record<string, unknown>,
): void {
  const bridged =
    (handler: Handler): Handler =>
    (message, extra) => {
      const m = toleratedMessage(message) as { id?: unknown; result?: unknown };
      if (takeFirst(m)) return;
      handler(fill && m.id !== undefined && isPlainObject(m.result) ? { ...m, result: fill(m.result) } : m, extra);
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

const JSONRPC = '"jsonrpc"';
const DATA = Buffer.from('data:');
/**
 * What is looked at for mending, at most: an answer (or a chunk of lines) larger is passed on as it
 * came. Sloppy answers are small; a large list or result is not held, scanned or parsed twice.
 */
export const MEND_MAX_BYTES = 1024 * 1024;

/**
 * Lines a server wrote (a stdio server's lines, or an HTTP answer's JSON or event stream lines),
 * mended where its SDK transport would drop a message (its JSON-RPC schema does not read it, so the
 * call it answers would time out): `"jsonrpc": "2.0"` written where a message left it out, a
 * result's or params' own `"_meta": null` left out, an error's missing message (or a code that is no
 * integer: -32603) filled in. A message is a line that starts with `{`, or an event's `data:` line;
 * a line over MEND_MAX_BYTES is passed as it came. The same Buffer when no line needs it: a look at
 * the bytes, no parse, for a line that names `"jsonrpc"` and has no `"_meta"` null and no error.
 */
export function mendedLines(chunk: Buffer, callId?: CallId): Buffer {
  const idTokens = callId === undefined ? undefined : idTokensOf(callId);
  let out: Buffer[] | undefined;
  let copied = 0;
  for (let start = 0; start < chunk.length;) {
    const lf = chunk.indexOf(10, start);
    const end = lf === -1 ? chunk.length : lf;
    const line = chunk.subarray(start, end);
    if (line.length <= MEND_MAX_BYTES && suspect(line, idTokens)) {
      const text = line.toString('utf8');
      const mended = mendedLine(text, callId);
      if (mended !== text) {
        (out ??= []).push(chunk.subarray(copied, start), Buffer.from(mended));
        copied = end;
      }
    }
    start = end + 1;
  }
  if (!out) return chunk;
  out.push(chunk.subarray(copied));
  return Buffer.concat(out);
}

/** The id of the one request an HTTP answer belongs to (its POST carried it). */
type CallId = string | number;

/** How a message names the call's id, in the two spellings servers write (`"id":1`, `"id": 1`). */
function idTokensOf(id: CallId): [string, string] {
  const value = JSON.stringify(id);
  return [`"id":${value}`, `"id": ${value}`];
}

/**
 * A message line (`{...}`, or an event's `data:`) that may need mending: a `"_meta"` null, an error,
 * or no `"jsonrpc"`; with the call's id known, a result that does not name it.
 */
function suspect(line: Buffer, idTokens?: [string, string]): boolean {
  const message = line[0] === 0x7b || (line[0] === 0x64 && line.subarray(0, 5).equals(DATA));
  if (!message) return false;
  return (
    line.includes('"_meta":null') ||
    line.includes('"_meta": null') ||
    line.includes('"error"') ||
    !line.includes(JSONRPC) ||
    (idTokens !== undefined && line.includes('"result"') && !line.includes(idTokens[0]) && !line.includes(idTokens[1]))
  );
}

function mendedLine(line: string, callId?: CallId): string {
  const prefix = line.startsWith('data:') ? (line.startsWith('data: ') ? 'data: ' : 'data:') : '';
  const text = prefix ? line.slice(prefix.length) : line;
  if (!text.includes('{')) return line;
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return line;
  }
  const out = mendedMessage(message, callId);
  return out === message ? line : prefix + JSON.stringify(out);
}

/** One JSON-RPC message mended (mendedLines); the same object when it needs nothing. */
function mendedMessage(message: unknown, callId?: CallId): unknown {
  if (!isPlainObject(message)) return message;
  let out = message;
  if (out.jsonrpc !== '2.0' && ('id' in out || 'method' in out)) out = { ...out, jsonrpc: '2.0' };
  // an answer (no method; a result or an error) without an id the SDK can match: the call's own
  if (
    callId !== undefined &&
    !('method' in out) &&
    ('result' in out || 'error' in out) &&
    typeof out.id !== 'string' &&
    typeof out.id !== 'number'
  )
    out = { ...out, id: callId };
  for (const key of ['result', 'params'] as const) {
    const part = out[key];
    if (isPlainObject(part) && part._meta === null) {
      const { _meta: _null, ...rest } = part;
      out = { ...out, [key]: rest };
    }
  }
  const error = out.error;
  if (isPlainObject(error) && (typeof error.message !== 'string' || !Number.isInteger(error.code)))
    out = {
      ...out,
      error: {
        ...error,
        code: Number.isInteger(error.code) ? error.code : -32603,
        message:
          typeof error.message === 'string' ? error.message : `the server sent an error without a message (code ${String(error.code)})`,
      },
    };
  return out;
}

/** A whole JSON answer (a message or a batch, on one line or many) mended as mendedLines mends a line; the same Buffer when it needs nothing. */
function mendedBody(body: Buffer, callId?: CallId): Buffer {
  if (body.length > MEND_MAX_BYTES) return body;
  const metaNull = body.includes('"_meta"') && /"_meta"\s*:\s*null/.test(body.toString('utf8'));
  const idTokens = callId === undefined ? undefined : idTokensOf(callId);
  const idMissing = idTokens !== undefined && !body.includes(idTokens[0]) && !body.includes(idTokens[1]);
  if (!metaNull && !idMissing && !body.includes('"error"') && body.includes(JSONRPC)) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  // (a batch's answers name their requests: only a single answer is the call's own)
  const out = Array.isArray(parsed) ? parsed.map((m) => mendedMessage(m)) : mendedMessage(parsed, callId);
  const changed = Array.isArray(parsed) ? (out as unknown[]).some((m, i) => m !== parsed[i]) : out !== parsed;
  return changed ? Buffer.from(JSON.stringify(out)) : body;
}

/**
 * An HTTP answer's bytes mended (mendedLines) before the SDK's transport reads them: an event
 * stream's in whole lines (what follows the last newline waits for the next chunk), a JSON answer
 * whole at its end (the transport reads it whole anyway). What grows past MEND_MAX_BYTES unmended (a
 * JSON answer, or one line) is passed on as it comes from then on.
 */
export class LineMender {
  private parts: Buffer[] = [];
  private size = 0;
  /** Passing bytes on as they come: the JSON answer, or the line in progress, is too large to mend. */
  private passing = false;

  constructor(
    private readonly events: boolean,
    /** The request the answer belongs to (an HTTP POST's one request): an answer without a usable id is its. */
    private readonly callId?: CallId,
  ) {}

  /** The bytes to pass on now; undefined when they wait (for a line's end, or the answer's). */
  push(chunk: Uint8Array): Uint8Array | undefined {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const lf = this.events ? bytes.lastIndexOf(10) : -1;
    if (lf === -1) {
      if (this.passing) return bytes;
      this.hold(bytes);
      if (this.size <= MEND_MAX_BYTES) return undefined;
      this.passing = true;
      return this.take();
    }
    let out: Buffer;
    if (this.passing) {
      // the long line ends at this chunk's first newline: up to it as it came, the whole lines after it mended
      const first = bytes.indexOf(10);
      out = Buffer.concat([bytes.subarray(0, first + 1), mendedLines(bytes.subarray(first + 1, lf + 1), this.callId)]);
      this.passing = false;
    } else {
      this.hold(bytes.subarray(0, lf + 1));
      out = mendedLines(this.take(), this.callId);
    }
    if (lf + 1 < bytes.length) this.hold(bytes.subarray(lf + 1));
    return out;
  }

  /** What is left at the end: mended, or as it came when `raw` (the answer was cut) or too large. */
  flush(raw = false): Uint8Array | undefined {
    if (!this.size) return undefined;
    const rest = this.take();
    if (raw || this.passing) return rest;
    return this.events ? mendedLines(rest, this.callId) : mendedBody(rest, this.callId);
  }

  private hold(bytes: Buffer): void {
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private take(): Buffer {
    const all = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    return all;
  }
}
