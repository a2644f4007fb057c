/**
 * The gateway's endpoint for clients of the older HTTP+SSE transport (MCP 2024-11-05), which some
 * clients still speak alone: `GET /sse` opens the event stream, whose first event names where to
 * POST (`/messages?sessionId=…`); every request is answered on that stream. Each stream is a
 * 2025-era session of its own (the same SDK Server as a Streamable HTTP session's, so the same
 * methods, tools and authorization), owned by the principal that opened it: a POST naming another
 * principal's session is answered as one that does not exist (auth/ownership.ts). Built on the SDK's
 * SSEServerTransport; the app's Host/Origin rule and authorization apply to both routes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { InFlight, JSONRPC_CODES, sendJson, type HttpResponse, type Logger } from '@mcp-fleet/kit';
import { callerOwner, type Owner } from '../../auth/ownership';
import { sendRpcError } from '../errors';
import { rpcError } from '../jsonrpc';

interface LegacySession {
  owner: Owner;
  transport: SSEServerTransport;
  server: Server;
  openedAt: number;
}

export interface LegacySseOptions {
  /** Builds the SDK Server of a session (as McpSessionTransportOptions.buildServer with `session` true). */
  buildServer: (sessionId: () => string | undefined) => Server;
  /** Streams open at most (MCP_MAX_SESSIONS); a new one beyond it is refused. */
  maxSessions: number;
  /** Streams one owner may hold (MCP_MAX_SESSIONS_PER_OWNER); its oldest is closed beyond it. */
  maxSessionsPerOwner: number;
  logger: Logger;
}

/** Where a stream tells its client to POST: relative to the stream's own URL. */
const MESSAGES_PATH = '/messages';

export class LegacySseEndpoint {
  private readonly sessions = new InFlight<string, LegacySession>();
  private closed = false;

  constructor(private readonly options: LegacySseOptions) {}

  /** GET /sse: a new session and its event stream (open until the client goes away or the gateway stops). */
  async open(_req: IncomingMessage, res: ServerResponse & Pick<HttpResponse, 'locals'>): Promise<void> {
    const { maxSessions, maxSessionsPerOwner, buildServer, logger } = this.options;
    if (this.closed || this.sessions.size >= maxSessions) {
      res.setHeader('retry-after', '5');
      const message = `The gateway holds MCP_MAX_SESSIONS (${maxSessions}) HTTP+SSE streams; close one, or use the Streamable HTTP endpoint at /mcp.`;
      return sendJson(res, 503, rpcError(null, JSONRPC_CODES.INTERNAL_ERROR, message));
    }
    const owner = callerOwner(res);
    // one owner's share: its oldest stream gives way
    const own = this.sessions.values().filter((s) => s.owner === owner);
    if (own.length >= maxSessionsPerOwner) await this.end(own.sort((a, b) => a.openedAt - b.openedAt)[0]);
    const transport = new SSEServerTransport(MESSAGES_PATH, res);
    const server = buildServer(() => transport.sessionId);
    const session: LegacySession = { owner, transport, server, openedAt: Date.now() };
    this.sessions.set(transport.sessionId, session);
    res.on('close', () => void this.end(session));
    try {
      await server.connect(transport);
    } catch (err) {
      logger.warn('an HTTP+SSE stream could not start', { err: (err as Error).message });
      await this.end(session);
    }
  }

  /** POST /messages?sessionId=…: one message of a session's client (answered on its stream; 202 here). */
  async post(req: IncomingMessage & { body?: unknown }, res: ServerResponse & Pick<HttpResponse, 'locals'>): Promise<void> {
    const id = new URL(req.url ?? '/', 'http://gateway').searchParams.get('sessionId') ?? '';
    const session = this.sessions.get(id);
    // another principal's session is one that does not exist (no oracle)
    if (!session || session.owner !== callerOwner(res))
      return sendRpcError(
        res,
        null,
        JSONRPC_CODES.SESSION_NOT_FOUND,
        'Session not found: open a new HTTP+SSE stream with GET /sse (or use the Streamable HTTP endpoint at /mcp).',
      );
    await session.transport.handlePostMessage(req, res, req.body);
  }

  private async end(session: LegacySession): Promise<void> {
    const id = session.transport.sessionId;
    if (this.sessions.get(id) !== session) return;
    this.sessions.delete(id);
    await session.server.close().catch(() => undefined);
  }

  /** Ends every stream (the gateway stops). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.sessions.values().map((s) => this.end(s)));
  }
}
