/**
 * What a tool call streams to its MCP client while it runs (progress, log messages, requests of the
 * MCP server behind it): Streamable HTTP lets a POST be answered with JSON or with an event stream,
 * and the gateway answers JSON until the first such message comes.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJsonText } from '@mcp-fleet/kit';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { rpcAnswerText } from './answer-text';
import type { SessionEventStore } from './rev-2025-11-25/event-store';

/** Event streams of tool calls get ids with this prefix in a session's event store. */
export const CALL_STREAM = 'call-';

/** A stream a client can resume (2025-11-25 and later sessions): where its events are kept, and the reconnection delay suggested. */
export interface Resumption {
  store: SessionEventStore;
  retryMs: number;
  /** Told the stream's id once it starts (the session finds a running call's stream by it). */
  onStart?: (streamId: string) => void;
}

const SSE_HEADERS = { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' };

const event = (data: string, id?: string) => `${id === undefined ? '' : `id: ${id}\n`}event: message\ndata: ${data}\n\n`;

/**
 * Answers a GET with Last-Event-ID for a call stream: the stream's events after that id, as an
 * event stream on `res`. The caller ends it, or keeps writing the call's later events to it.
 */
function replay(res: ServerResponse, store: SessionEventStore, lastEventId: string, headers: Record<string, string>): void {
  res.writeHead(200, { ...headers, ...SSE_HEADERS });
  for (const e of store.after(lastEventId)) res.write(event(rpcAnswerText(e.message as Record<string, unknown>), e.id));
}

/** A call stream whose call has ended: what the client missed, its answer included, then the end. */
export function replayEnded(res: ServerResponse, store: SessionEventStore, lastEventId: string, headers: Record<string, string>): void {
  replay(res, store, lastEventId, headers);
  res.end();
}

export class LazyEventStream {
  private started = false;
  private ended = false;
  /** The id of a resumable stream in its session's event store, once it started. */
  streamId?: string;

  constructor(
    private res: ServerResponse,
    /** Whether the client accepts an event stream (else nothing is streamed). */
    readonly allowed: boolean,
    private readonly headers: Record<string, string> = {},
    /** Set for a client that can resume a stream it lost: events get ids and are kept. */
    private readonly resumption?: Resumption,
  ) {}

  get open(): boolean {
    return this.started;
  }

  /** True once the stream started with an id to resume from: a lost connection does not abandon the call. */
  get resumable(): boolean {
    return this.started && this.resumption !== undefined;
  }

  /** Turns the answer into an event stream now; false when that is not possible. */
  start(): boolean {
    if (this.started) return true;
    if (!this.allowed || this.res.headersSent || this.res.writableEnded || this.res.destroyed) return false;
    this.started = true;
    this.res.statusCode = 200;
    for (const [name, value] of Object.entries(this.headers)) this.res.setHeader(name, value);
    for (const [name, value] of Object.entries(SSE_HEADERS)) this.res.setHeader(name, value);
    this.res.flushHeaders();
    if (this.resumption) {
      // the priming event (SEP-1699): an id to resume from, and how long to wait before reconnecting
      this.streamId = `${CALL_STREAM}${randomUUID()}`;
      const id = this.resumption.store.append(this.streamId);
      this.res.write(`id: ${id}\nretry: ${this.resumption.retryMs}\ndata: \n\n`);
      this.resumption.onStart?.(this.streamId);
    }
    return true;
  }

  /**
   * One JSON-RPC message as an event (the stream starts with the first); dropped when it cannot be
   * sent, except on a resumable stream, which keeps it for the client to fetch when it reconnects.
   */
  send(message: Record<string, unknown>): boolean {
    if (!this.start()) return false;
    const text = rpcAnswerText(message);
    const id =
      this.streamId !== undefined ? this.resumption!.store.append(this.streamId, message as JSONRPCMessage, text.length) : undefined;
    if (!this.connected) return id !== undefined;
    this.res.write(event(text, id));
    return true;
  }

  /** Whether the current response can still be written to. */
  private get connected(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }

  /** The answer: the last event of the stream, or plain JSON with this status when nothing was streamed. */
  finish(status: number, payload: Record<string, unknown>): void {
    if (this.started) {
      const delivered = this.connected;
      this.send(payload);
      this.ended = true;
      if (this.connected) this.res.end();
      // the client has the whole stream: nothing to resume
      if (delivered && this.streamId !== undefined) this.resumption!.store.drop(this.streamId);
      return;
    }
    if (this.res.writableEnded) return;
    for (const [name, value] of Object.entries(this.headers)) this.res.setHeader(name, value);
    sendJsonText(this.res, status, rpcAnswerText(payload));
  }

  /**
   * The client reconnected (GET with Last-Event-ID): it gets what it missed, then the call's later
   * events on this response (an earlier connection still open is ended).
   */
  resume(res: ServerResponse, lastEventId: string): void {
    // (only a started resumable stream has an id a client can resume from)
    replay(res, this.resumption!.store, lastEventId, this.headers);
    if (this.ended) return void res.end();
    const previous = this.res;
    this.res = res;
    if (previous !== res && !previous.writableEnded && !previous.destroyed) previous.end();
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
