/**
 * The gateway's persistent channel to a kit service (issue 14): tool calls as NDJSON frames over one
 * connection upgraded from HTTP, answered in any order, instead of one HTTP request per call. It
 * carries exactly what `POST /tools/call` carries (the call, the request id, the traceparent) and
 * answers the same status and envelope; the HTTP routes stay for everything else.
 *
 *   gateway -> service   {"id": 1, "requestId": "...", "traceparent": "...", "budgetMs": 29000, "call": {"name", "arguments"}}
 *                        {"id": 1, "cancel": true}
 *   service -> gateway   {"id": 1, "status": 200, "body": <envelope>}
 *                        {"id": 1, "status": 200, "resultLength": 42, "body": {..., "result": <42 chars of JSON>}}
 *
 * The second form (answerFrame, for a success envelope) puts the result last and says how long its
 * JSON text is, so the gateway can reuse that text for the MCP answer instead of serializing the
 * result twice more; it is plain JSON all the same.
 *
 * Both ends write each frame as it is made. Holding a turn's frames for one write (until the event
 * loop's check phase) saved syscalls but left the other end idle meanwhile: at 32 connections the
 * gateway and filesystem-mcp then served 5-10% fewer calls a second, for 2-5% less CPU per call
 * (docs/gateway.md, "Frames leave as they are made").
 */
import type { IncomingMessage, RequestListener } from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { InFlight } from './in-flight';

export const CHANNEL_PATH = '/_fleet/channel';
export const CHANNEL_PROTOCOL = 'mcp-fleet-channel';

/** Where a request listener keeps its handler of upgrade requests (listen() installs it on the server). */
export const UPGRADE = Symbol.for('mcp-fleet.upgrade');
/** An upgraded connection the server must drain (let its work finish, then end) and, at the deadline, destroy on shutdown. */
export interface Upgraded {
  drain(): void;
  destroy(): void;
}
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => Upgraded | undefined;
export type UpgradableListener = RequestListener & { [UPGRADE]?: UpgradeHandler };

export interface ChannelCall {
  id: number;
  requestId?: string;
  traceparent?: string;
  /** The caller's time budget (BUDGET_HEADER over HTTP), checked by budgetFrom. */
  budgetMs?: unknown;
  call: unknown;
}

export interface ChannelAnswer {
  status: number;
  body: unknown;
}

/**
 * One answer frame (a line). A success envelope's result goes last, its JSON text's length (in
 * UTF-16 code units, as JavaScript counts) announced in `resultLength`; anything else is the plain form.
 */
export function answerFrame(id: number, answer: ChannelAnswer): string {
  const body = answer.body as { success?: unknown; result?: unknown } | null | undefined;
  if (body?.success === true && body.result !== undefined) {
    const { result, ...rest } = body;
    const text = JSON.stringify(result) as string | undefined;
    if (text !== undefined) {
      const head = JSON.stringify({ id, status: answer.status, resultLength: text.length, body: rest });
      return `${head.slice(0, -2)},"result":${text}}}\n`;
    }
  }
  return `${JSON.stringify({ id, status: answer.status, body: answer.body })}\n`;
}

/**
 * The result's JSON text of an answer frame in answerFrame's second form, given the frame as parsed
 * (so the line is known to be valid JSON, and the text cannot reach outside the envelope); undefined
 * for the plain form or a line that does not keep the form's promise.
 */
export function resultTextOf(line: string, frame: { resultLength?: unknown; body?: unknown }): string | undefined {
  const n = frame.resultLength;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) return undefined;
  const end = line.length - 2;
  const start = end - n;
  if (start < 10 || !line.endsWith('}}') || !line.startsWith(',"result":', start - 10)) return undefined;
  const body = frame.body as { result?: unknown } | null | undefined;
  const result = body !== null && typeof body === 'object' ? body.result : undefined;
  if (result === undefined) return undefined;
  const first = line[start];
  const expected = result === null || typeof result !== 'object' ? first : Array.isArray(result) ? '[' : '{';
  return first === expected ? line.slice(start, end) : undefined;
}

/** The longest path a Unix socket may have on Linux (sun_path, 108 bytes with its terminating NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * Where a service listening on `port` (loopback) also offers its channel over a Unix socket, in the
 * fleet's CHANNEL_SOCKET_DIR: both ends derive it, the service from its port and the gateway from the
 * service's URL, so a socket stands for exactly the server behind that port. Undefined when the path
 * would be too long for a socket.
 */
export function channelSocketPath(dir: string, port: number): string | undefined {
  const file = path.join(path.resolve(dir), `channel-${port}.sock`);
  return Buffer.byteLength(file) <= MAX_SOCKET_PATH ? file : undefined;
}

/** True for the upgrade request that opens a channel. */
export function isChannelUpgrade(req: IncomingMessage): boolean {
  return req.url === CHANNEL_PATH && String(req.headers.upgrade ?? '').toLowerCase() === CHANNEL_PROTOCOL;
}

/**
 * Serves one upgraded connection: every call frame is handled at once (answers go out as they
 * finish), a cancel frame aborts its call, and the connection closing aborts all of them. A line
 * longer than `maxLine` (the service's BODY_LIMIT) or one that is not a frame ends the connection.
 */
export function serveChannel(
  socket: Duplex & { setNoDelay?: (on: boolean) => void },
  head: Buffer,
  /** Runs a call; its controller is the call's own (aborted by a cancel frame or a closed socket, and by the tool's time limit). */
  handle: (frame: ChannelCall, controller: AbortController) => Promise<ChannelAnswer>,
  maxLine: number,
): Upgraded {
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${CHANNEL_PROTOCOL}\r\nConnection: Upgrade\r\n\r\n`);
  socket.setNoDelay?.(true);
  const running = new InFlight<number, AbortController>();
  // Shutting down: calls in flight finish, new ones are refused, and the connection ends after the last.
  let draining = false;
  const endIfDrained = () => {
    if (draining && running.size === 0 && !socket.destroyed) socket.end();
  };
  const frame = (line: string) => {
    let msg: { id?: unknown; cancel?: unknown };
    try {
      msg = JSON.parse(line) as typeof msg;
    } catch {
      socket.destroy();
      return;
    }
    if (typeof msg.id !== 'number' || !Number.isSafeInteger(msg.id)) return void socket.destroy();
    const id = msg.id;
    if (msg.cancel === true) return void running.get(id)?.abort();
    if (running.has(id)) return; // a reused id: the first call keeps it
    if (draining) {
      const body = { success: false, error: 'The service is shutting down; call again.', code: 'UPSTREAM_UNAVAILABLE' };
      return void socket.write(answerFrame(id, { status: 503, body }));
    }
    const controller = new AbortController();
    running.set(id, controller);
    handle(msg as ChannelCall, controller)
      .catch((): ChannelAnswer => ({ status: 500, body: { success: false, error: 'Internal error.', code: 'INTERNAL' } }))
      .then((answer) => {
        running.delete(id);
        if (!socket.destroyed) socket.write(answerFrame(id, answer));
        endIfDrained();
      });
  };
  readFrames(
    socket,
    head,
    maxLine,
    (line) => {
      if (line) frame(line);
    },
    () => socket.destroy(),
  );
  socket.on('error', () => undefined);
  socket.on('close', () => {
    for (const c of running.values()) c.abort();
    running.clear();
  });
  return {
    drain: () => {
      draining = true;
      endIfDrained();
    },
    destroy: () => socket.destroy(),
  };
}

/**
 * Reads a channel's frames, both ends: `onLine` for every complete line of UTF-8 text (`head`
 * first), `onTooLong` with the start of a line longer than `maxLine` instead (the rest of that line
 * is skipped). Stops once the socket is destroyed.
 */
export function readFrames(
  socket: Duplex,
  head: Buffer,
  maxLine: number,
  onLine: (line: string) => void,
  onTooLong: (start: string) => void,
): void {
  const decoder = new StringDecoder('utf8');
  let buffered = head.length ? decoder.write(head) : '';
  let skipping = false;
  const take = () => {
    for (let nl = buffered.indexOf('\n'); nl >= 0 && !socket.destroyed; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (skipping) {
        skipping = false;
        continue;
      }
      if (line.length > maxLine) onTooLong(line);
      else onLine(line);
    }
    if (!skipping && buffered.length > maxLine) {
      onTooLong(buffered);
      skipping = true;
    }
    if (skipping) buffered = '';
  };
  socket.on('data', (chunk: Buffer) => {
    buffered += decoder.write(chunk);
    take();
  });
  take();
}
