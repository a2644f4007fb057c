import { isPlainObject } from '@mcp-fleet/kit';

export type RpcId = string | number | null;

/** A JSON-RPC error answered with its own HTTP status (the 2026-07-28 transport's rules; the kit's, shared with services). */
export { HttpRpcError } from '@mcp-fleet/kit';

export function rpcError(id: RpcId, code: number, message: string, data?: unknown): Record<string, unknown> {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined ? { data } : {}) } };
}

/** The SDK's McpError message prefix taken off (core/held-elsewhere.ts, where core needs it too). */
export { withoutMcpErrorPrefix } from '../core/held-elsewhere';

export function idOf(m: Record<string, unknown>): RpcId {
  const id = m.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null;
}

/** The id of a parsed body that is one JSON-RPC request, else null (batches, native bodies). */
export function requestIdOf(body: unknown): RpcId {
  return isPlainObject(body) && 'jsonrpc' in body ? idOf(body) : null;
}

/** A JSON-RPC request: a method and an id (the client waits for its answer). */
export function isRequest(m: unknown): boolean {
  return isPlainObject(m) && 'method' in m && 'id' in m;
}

/** True when a parsed body holds JSON-RPC notifications and responses only: nothing a client waits on. */
export function onlyNotifications(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.length > 0 && messages.every((m) => isPlainObject(m) && 'jsonrpc' in m && !isRequest(m));
}

/**
 * Checks the JSON-RPC 2.0 envelope of every message (the SDK transport would call a malformed
 * message a parse error; JSON-RPC calls it an invalid request, -32600). Returns the first problem.
 */
export function invalidMessage(body: unknown): { id: RpcId; message: string } | undefined {
  const messages = Array.isArray(body) ? body : [body];
  if (messages.length === 0) return { id: null, message: 'Invalid Request: an empty batch.' };
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const where = Array.isArray(body) ? ` (batch item ${i})` : '';
    if (!isPlainObject(m)) return { id: null, message: `Invalid Request${where}: a JSON-RPC message is an object.` };
    const id = idOf(m);
    if (m.jsonrpc !== '2.0') return { id, message: `Invalid Request${where}: "jsonrpc" must be "2.0".` };
    if ('id' in m && id === null) return { id: null, message: `Invalid Request${where}: "id" must be a string or an integer.` };
    if ('method' in m) {
      if (typeof m.method !== 'string' || m.method === '')
        return { id, message: `Invalid Request${where}: "method" must be a non-empty string.` };
      if ('params' in m && !isPlainObject(m.params)) return { id, message: `Invalid Request${where}: "params" must be an object.` };
      continue;
    }
    if (('result' in m || 'error' in m) && 'id' in m) continue; // a response to a server request
    return { id, message: `Invalid Request${where}: a request needs "method" (and "id" unless it is a notification).` };
  }
  return undefined;
}

/** True when raw text that failed to parse was meant as JSON-RPC. */
export function looksLikeJsonRpc(raw: unknown): boolean {
  return typeof raw === 'string' && /"jsonrpc"\s*:/.test(raw.slice(0, 4096));
}
