import type { IncomingMessage } from 'node:http';
import { JSONRPC_CODES, isPlainObject, type Logger } from '@mcp-fleet/kit';
import type { Catalog } from '../../core/catalog';
import type { HttpRpcError } from '../jsonrpc';
import { rpcErrorWithStatus } from '../errors';

/**
 * Parameter headers (MCP 2026-07-28, SEP-2243): a tool may mark primitive properties of its
 * inputSchema with `"x-mcp-header": "<Name>"`, and a client then mirrors each such argument of a
 * tools/call into an `Mcp-Param-<Name>` header, so that load balancers and gateways can route on it
 * without reading the body. The server must check that each header agrees with the body. The gateway
 * lists the declarations of its downstreams' tools unchanged, checks them on every 2026-07-28
 * tools/call, and leaves out of its MCP listings a tool whose declarations break the rules (a client
 * must reject such a tool definition anyway). 2025-era requests carry no such headers.
 */

export interface ParamHeader {
  /** The property's path from the top of the arguments (nested objects: more than one key). */
  path: string[];
  /** As declared (header names compare case-insensitively). */
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean';
}

export type ParamHeaderScan = { valid: true; headers: ParamHeader[] } | { valid: false; reason: string };

const KEY = 'x-mcp-header';
/** RFC 9110 token characters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The spec names string, integer and boolean; number is taken too, as the official SDKs and conformance suite do. */
const PRIMITIVE = new Set(['string', 'integer', 'number', 'boolean']);
/** Subschemas a declaration may not sit under: only a chain of `properties` reaches a parameter header. */
const UNREACHABLE = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
];
/** Of those, the ones whose value maps names to subschemas. */
const NAMED_SUBSCHEMAS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

/** The parameter headers a tool's inputSchema declares, or the first rule it breaks. */
export function scanParamHeaders(inputSchema: unknown): ParamHeaderScan {
  const headers: ParamHeader[] = [];
  const seen = new Map<string, string>();
  const where = (path: string[]) => (path.length ? path.join('.') : 'the schema itself');
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (!isPlainObject(node)) return undefined;
    if (KEY in node) {
      const name = node[KEY];
      if (!reachable || path.length === 0)
        return `${where(path)}: ${KEY} may only mark a property reached through "properties" (not items, combinators, conditionals or definitions)`;
      if (typeof name !== 'string' || !TOKEN.test(name)) return `${where(path)}: ${KEY} must be a non-empty header name token`;
      const type = typeof node.type === 'string' ? node.type : undefined;
      if (!type || !PRIMITIVE.has(type))
        return `${where(path)}: ${KEY} may only mark a string, integer or boolean property (not ${type ?? 'an untyped one'})`;
      const prior = seen.get(name.toLowerCase());
      if (prior !== undefined) return `${KEY} "${name}" is declared twice (also as "${prior}"; names are case-insensitive)`;
      seen.set(name.toLowerCase(), name);
      headers.push({ path, name, type: type as ParamHeader['type'] });
    }
    if (isPlainObject(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const fault = visit(child, [...path, key], reachable);
        if (fault) return fault;
      }
    }
    for (const keyword of UNREACHABLE) {
      const sub = node[keyword];
      if (sub === undefined) continue;
      const branches = Array.isArray(sub) ? sub : NAMED_SUBSCHEMAS.has(keyword) && isPlainObject(sub) ? Object.values(sub) : [sub];
      for (const branch of branches) {
        const fault = visit(branch, [...path, `<${keyword}>`], false);
        if (fault) return fault;
      }
    }
    return undefined;
  };
  const fault = visit(inputSchema, [], true);
  return fault ? { valid: false, reason: fault } : { valid: true, headers };
}

const scans = new WeakMap<Catalog, Map<string, ParamHeaderScan>>();

/** The scan of every listed tool of a catalog (by listed name), made once per catalog (logging the invalid ones). */
export function paramHeaderScans(catalog: Catalog, logger: Logger): Map<string, ParamHeaderScan> {
  let byName = scans.get(catalog);
  if (!byName) {
    byName = new Map();
    for (const e of catalog.entries) {
      const scan = scanParamHeaders(e.tool.inputSchema);
      byName.set(e.name, scan);
      if (!scan.valid)
        logger.warn('tool left out of the MCP tool list: its x-mcp-header declarations break the MCP rules (SEP-2243)', {
          tool: e.name,
          service: e.service,
          reason: scan.reason,
        });
    }
    scans.set(catalog, byName);
  }
  return byName;
}

const SENTINEL_START = '=?base64?';
const SENTINEL_END = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A header's value: `=?base64?...?=` decoded (undefined when it is not canonical Base64 of UTF-8), else as sent. */
export function decodeParamValue(value: string): string | undefined {
  if (!(value.length >= SENTINEL_START.length + SENTINEL_END.length && value.startsWith(SENTINEL_START) && value.endsWith(SENTINEL_END)))
    return value;
  const b64 = value.slice(SENTINEL_START.length, value.length - SENTINEL_END.length);
  if (!CANONICAL_BASE64.test(b64)) return undefined;
  try {
    return utf8.decode(Buffer.from(b64, 'base64'));
  } catch {
    return undefined;
  }
}

/** An argument as its header carries it: strings as they are, numbers in decimal, booleans true/false. */
function asHeaderText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value)))
    return String(value);
  return undefined;
}

function valueAt(args: Record<string, unknown>, path: string[]): unknown {
  let node: unknown = args;
  for (const key of path) {
    if (!isPlainObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

function mismatch(headerName: string, message: string): HttpRpcError {
  return rpcErrorWithStatus(JSONRPC_CODES.HEADER_MISMATCH, `${message}; send each x-mcp-header argument as its Mcp-Param header too.`, {
    mismatch: { header: headerName },
  });
}

/**
 * Checks a tools/call's Mcp-Param headers against its arguments: every declared argument that has a
 * value must come with its header, and the header (trimmed, Base64 sentinel decoded) must equal it.
 * A header whose argument is absent or null is ignored. Throws 400 with -32020 (HeaderMismatch).
 */
export function checkParamHeaders(headers: ParamHeader[], args: Record<string, unknown>, req: IncomingMessage): void {
  for (const declared of headers) {
    const value = valueAt(args, declared.path);
    if (value === undefined || value === null) continue;
    const expected = asHeaderText(value);
    if (expected === undefined) continue;
    const headerName = `Mcp-Param-${declared.name}`;
    const raw = req.headers[headerName.toLowerCase()];
    const sent = Array.isArray(raw) ? raw.join(', ') : raw?.trim();
    if (sent === undefined)
      throw mismatch(headerName, `The ${headerName} header is missing while arguments.${declared.path.join('.')} is set`);
    const decoded = decodeParamValue(sent);
    if (decoded === undefined)
      throw mismatch(headerName, `The ${headerName} header is not valid "=?base64?...?=" (canonical Base64 of UTF-8)`);
    const same =
      (declared.type === 'integer' || declared.type === 'number') && typeof value === 'number' && DECIMAL.test(decoded)
        ? Number(decoded) === value
        : decoded === expected;
    if (!same) throw mismatch(headerName, `The ${headerName} header differs from arguments.${declared.path.join('.')}`);
  }
}
