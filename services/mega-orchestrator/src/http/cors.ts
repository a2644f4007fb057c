/**
 * CORS for the MCP endpoints, granted only to the origins the operator lists in ALLOWED_ORIGINS, so
 * that an MCP client running in a browser page of one of them (MCP Inspector's direct connection, a
 * web app of the operator's) can call the gateway: a preflight is answered 204 with what it asks for,
 * and answers carry Access-Control-Allow-Origin and expose the headers MCP clients read
 * (Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate).
 *
 * Nothing is granted to any other page: not to a local page that the Host/Origin rule lets in
 * (without a grant its browser keeps the answer from it, and a JSON POST never leaves without a
 * preflight), not with cookies (no Access-Control-Allow-Credentials: a bearer token goes in
 * Authorization, which the page names in its preflight), and not on any other route (the console
 * relies on the preflight it never gets; docs/gateway.md, "Security").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { normalOrigin, pathOf } from '@mcp-fleet/kit';
import { isVirtualMcpPath } from './virtual-servers/routes';

/** Where MCP clients connect: the Streamable HTTP endpoint, a virtual server's, and the older HTTP+SSE pair. */
const isMcpEndpoint = (path: string) => path === '/mcp' || path === '/sse' || path === '/messages' || isVirtualMcpPath(path);

/** What an MCP client's page reads of an answer besides the CORS-safelisted headers. */
const EXPOSED = 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate';
const METHODS = 'GET, POST, DELETE';
/** A header name (RFC 9110 token): what a preflight may ask for, echoed back. */
const HEADER_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*,\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$/;
/** How long a browser may keep a preflight's answer (seconds). */
const MAX_AGE = '600';

export interface McpCors {
  /**
   * Grants the request's origin on an MCP endpoint when it is listed: the answer's headers are set,
   * and a preflight is answered here (true: nothing else is to run).
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
}

/** The MCP endpoints' CORS for `allowedOrigins`; undefined when none is listed (no CORS at all, as before). */
export function mcpCors(allowedOrigins: readonly string[]): McpCors | undefined {
  const granted = new Set(allowedOrigins.map(normalOrigin).filter((o) => o !== '' && o !== '*' && o !== 'null'));
  if (granted.size === 0) return undefined;
  return {
    handle(req, res) {
      const origin = req.headers.origin;
      if (origin === undefined || !granted.has(normalOrigin(origin)) || !isMcpEndpoint(pathOf(req))) return false;
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Vary', 'Origin');
      const asked = req.headers['access-control-request-method'];
      if (req.method !== 'OPTIONS' || asked === undefined) {
        res.setHeader('Access-Control-Expose-Headers', EXPOSED);
        return false;
      }
      res.setHeader('Access-Control-Allow-Methods', METHODS);
      const headers = req.headers['access-control-request-headers'];
      if (typeof headers === 'string' && headers.length <= 2000 && HEADER_LIST.test(headers.trim()))
        res.setHeader('Access-Control-Allow-Headers', headers.trim());
      res.setHeader('Access-Control-Max-Age', MAX_AGE);
      res.statusCode = 204;
      res.end();
      return true;
    },
  };
}
