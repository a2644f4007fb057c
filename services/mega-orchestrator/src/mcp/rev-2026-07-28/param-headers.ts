import type { IncomingMessage } from 'node:http';
import { JSONRPC_CODES, type Logger } from '@mcp-fleet/kit';
import type { Catalog } from '../../core/catalog';
import type { HttpRpcError } from '../jsonrpc';
import {
  asHeaderText,
  DECIMAL,
  decodeParamValue,
  scanParamHeaders,
  valueAt,
  type ParamHeader,
  type ParamHeaderScan,
} from '../../downstream/mcp/param-headers';
import { rpcErrorWithStatus } from '../errors';

/**
 * Parameter headers (MCP 2026-07-28, SEP-2243): a tool may mark primitive properties of its
 * inputSchema with `"x-mcp-header": "<Name>"`, and a client then mirrors each such argument of a
 * tools/call into an `Mcp-Param-<Name>` header, so that load balancers and gateways can route on it
 * without reading the body. The server must check that each header agrees with the body. The gateway
 * lists the declarations of its downstreams' tools unchanged, checks them on every 2026-07-28
 * tools/call, and leaves out of its MCP listings a tool whose declarations break the rules (a client
 * must reject such a tool definition anyway). 2025-era requests carry no such headers. The rules
 * (scan, value encoding) are in ../../downstream/mcp/param-headers.ts, which the gateway's own client uses too.
 */

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
