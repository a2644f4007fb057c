/**
 * What a tool call streams to its MCP client while it runs (progress, log messages, requests of the
 * MCP server behind it): Streamable HTTP lets a POST be answered with JSON or with an event stream,
 * and the gateway answers JSON until the first such message comes.
 */
import type { ServerResponse } from 'node:http';
import { sendJsonText } from '@mcp-fleet/kit';
import { rpcAnswerText } from './answer-text';

export class LazyEventStream {
  private started = false;

  constructor(
    private readonly res: ServerResponse,
    /** Whether the client accepts an event stream (else nothing is streamed). */
    readonly allowed: boolean,
    private readonly headers: Record<string, string> = {},
  ) {}

  get open(): boolean {
    return this.started;
  }

  /** Turns the answer into an event stream now; false when that is not possible. */
  start(): boolean {
    if (this.started) return true;
    if (!this.allowed || this.res.headersSent || this.res.writableEnded) return false;
    this.started = true;
    this.res.statusCode = 200;
    for (const [name, value] of Object.entries(this.headers)) this.res.setHeader(name, value);
    this.res.setHeader('Content-Type', 'text/event-stream');
    this.res.setHeader('Cache-Control', 'no-cache');
    this.res.flushHeaders();
    return true;
  }

  /** One JSON-RPC message as an event (the stream starts with the first); dropped when it cannot be sent. */
  send(message: Record<string, unknown>): boolean {
    if (!this.start() || this.res.writableEnded) return false;
    this.res.write(`event: message\ndata: ${rpcAnswerText(message)}\n\n`);
    return true;
  }

  /** The answer: the last event of the stream, or plain JSON with this status when nothing was streamed. */
  finish(status: number, payload: Record<string, unknown>): void {
    if (this.res.writableEnded) return;
    if (this.started) {
      this.send(payload);
      this.res.end();
      return;
    }
    for (const [name, value] of Object.entries(this.headers)) this.res.setHeader(name, value);
    sendJsonText(this.res, status, rpcAnswerText(payload));
  }
}

/** notifications/progress for a request's progressToken. */
export function progressNotification(token: string | number, progress: number, total?: number, message?: string): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    method: 'notifications/progress',
    params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), ...(message ? { message } : {}) },
  };
}

/** MCP's log levels, least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** True when a message at `level` passes a client's chosen minimum (an unknown level passes: the server said it). */
export function logPasses(level: unknown, minimum: LogLevel): boolean {
  const at = LOG_LEVELS.indexOf(level as LogLevel);
  return at < 0 || at >= LOG_LEVELS.indexOf(minimum);
}
