import { isPlainObject } from '@mcp-fleet/kit';

/**
 * Parameter headers (MCP 2026-07-28, SEP-2243): a tool may mark primitive properties of its
 * inputSchema with `"x-mcp-header": "<Name>"`, and a client then mirrors each such argument of a
 * tools/call into an `Mcp-Param-<Name>` header, so that load balancers and gateways can route on it
 * without reading the body; the server checks that each header agrees with the body. Both sides of
 * the gateway use these rules: its protocol layer checks its callers' headers
 * (../../mcp/rev-2026-07-28/param-headers.ts), and its 2026-07-28 client sends them to the servers
 * behind it (client-2026-07-28.ts, mirroredParamHeaders).
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

const SENTINEL_START = '=?base64?';
const SENTINEL_END = '?=';
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** A header's text that is a decimal number (compared to a numeric argument by value). */
export const DECIMAL = /^-?\d+(\.\d+)?$/;
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
export function asHeaderText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value)))
    return String(value);
  return undefined;
}

export function valueAt(args: Record<string, unknown>, path: string[]): unknown {
  let node: unknown = args;
  for (const key of path) {
    if (!isPlainObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

/**
 * Whether a string goes in Base64: a character outside printable ASCII (a control character, a
 * non-ASCII one), whitespace at either end, or a value that itself looks like the sentinel (sent as
 * it is, it would be read as Base64).
 */
function needsBase64(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return true;
  }
  return value !== value.trim() || (value.startsWith(SENTINEL_START) && value.endsWith(SENTINEL_END));
}

/**
 * The Mcp-Param headers of a tools/call (what a client sends): each declared argument that has a
 * primitive value, strings as they are unless they need `=?base64?...?=` (UTF-8), numbers in decimal,
 * booleans true/false; an absent or null argument has no header.
 */
export function mirroredParamHeaders(headers: readonly ParamHeader[], args: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const declared of headers) {
    const value = valueAt(args, declared.path);
    const text = asHeaderText(value);
    if (text === undefined) continue;
    out[`Mcp-Param-${declared.name}`] =
      typeof value === 'string' && needsBase64(text)
        ? `${SENTINEL_START}${Buffer.from(text, 'utf8').toString('base64')}${SENTINEL_END}`
        : text;
  }
  return out;
}
