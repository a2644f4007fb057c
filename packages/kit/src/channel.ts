/**
 * The gateway's persistent channel to a kit service (issue 14): tool calls as NDJSON frames over one
 * connection upgraded from HTTP, answered in any order, instead of one HTTP request per call. It
 * carries exactly what `POST /tools/call` carries (the call, the request id, the traceparent) and
 * answers the same status and envelope; the HTTP routes stay for everything else.
 *
 *   gateway -> service   {"id": 1, "requestId": "...", "traceparent": "...", "call": {"name", "arguments"}}
 *                        {"id": 1, "cancel": true}
 *   service -> gateway   {"id": 1, "status": 200, "body": <envelope>}
 */
import type { IncomingMessage, RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

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
  call: unknown;
}

export interface ChannelAnswer {
  status: number;
  body: unknown;
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
  handle: (frame: ChannelCall, signal: AbortSignal) => Promise<ChannelAnswer>,
  maxLine: number,
): Upgraded {
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${CHANNEL_PROTOCOL}\r\nConnection: Upgrade\r\n\r\n`);
  socket.setNoDelay?.(true);
  const running = new Map<number, AbortController>();
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
      return void sendFrame(socket, `${JSON.stringify({ id, status: 503, body })}\n`);
    }
    const controller = new AbortController();
    running.set(id, controller);
    handle(msg as ChannelCall, controller.signal)
      .catch((): ChannelAnswer => ({ status: 500, body: { success: false, error: 'Internal error.', code: 'INTERNAL' } }))
      .then((answer) => {
        running.delete(id);
        if (!socket.destroyed) sendFrame(socket, `${JSON.stringify({ id, status: answer.status, body: answer.body })}\n`);
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

/** Writes one frame; frames written in the same tick leave in one write (corked until the next tick). */
export function sendFrame(socket: Duplex, frame: string): void {
  if (socket.writableCorked === 0) {
    socket.cork();
    process.nextTick(() => socket.uncork());
  }
  socket.write(frame);
}
