/**
 * The gateway's end of a kit service's persistent channel (packages/kit/src/channel.ts): plain tool
 * calls as NDJSON frames over one connection upgraded from HTTP, instead of one HTTP request each
 * (DOWNSTREAM_CHANNEL; issue 14, measured by the bench's floor-channel row). A service that does not
 * offer it (an MCP server, a kit service with its own middleware, anything else at the URL) is
 * asked again after a minute and served over HTTP meanwhile; a channel that closes fails the calls
 * in flight on it (as a connection cut mid-request does) and is opened again on a later call.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { CHANNEL_PATH, CHANNEL_PROTOCOL, InFlight, readFrames, resultTextOf } from '@mcp-fleet/kit';
import { CallCancel } from './cancel';
import { answerTooLarge, budgetText, DownstreamFailure, type DownstreamAnswer, type DownstreamRequest } from './downstream';

/** A service without a channel is asked again after this long. */
const NOT_OFFERED_RETRY_MS = 60_000;
/** A channel that closed (or a service that was down) is tried again no sooner than this. */
const REOPEN_MS = 1000;
/** Calls with larger arguments go over HTTP: a frame is all or nothing for the connection, a request only for itself. */
const MAX_FRAME_BODY = 64 * 1024;

/**
 * One call in flight on a channel: its time limit, its caller's abort (it is the listener,
 * handleEvent, of the call's CallCancel or signal) and its settling, in one object instead of
 * closures made per call.
 */
class PendingCall {
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly id: number,
    /** The socket it went out on. */
    readonly socket: Socket,
    private readonly pending: InFlight<number, PendingCall>,
    private readonly abort: CallCancel | AbortSignal | undefined,
    private readonly resolve: (answer: DownstreamAnswer) => void,
    private readonly reject: (failure: DownstreamFailure) => void,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(expire, timeoutMs, this, timeoutMs);
  }

  /** The caller's call was aborted. */
  handleEvent(): void {
    this.finish(new DownstreamFailure('aborted', 'the caller went away', true), true);
  }

  /** Settles the call once (later outcomes are ignored); `cancel` tells the service to stop it. */
  finish(outcome: DownstreamAnswer | DownstreamFailure, cancel = false): void {
    if (!this.pending.delete(this.id)) return;
    clearTimeout(this.timer);
    if (this.abort instanceof CallCancel) this.abort.unlisten(this);
    else this.abort?.removeEventListener('abort', this);
    if (cancel && !this.socket.destroyed) this.socket.write(`{"id":${this.id},"cancel":true}\n`);
    if (outcome instanceof DownstreamFailure) this.reject(outcome);
    else this.resolve(outcome);
  }
}

function expire(call: PendingCall, timeoutMs: number): void {
  call.finish(new DownstreamFailure('timeout', `timed out after ${timeoutMs} ms`, true), true);
}

export class DownstreamChannel {
  private socket?: Socket;
  private opening?: Promise<Socket | undefined>;
  private retryAt = 0;
  private seq = 0;
  /** Calls in flight, with the socket each went out on. */
  private readonly pending = new InFlight<number, PendingCall>();
  private closed = false;

  /** How the open channel reached the service: its Unix socket (CHANNEL_SOCKET_DIR) or TCP. */
  private via?: 'unix' | 'tcp';

  constructor(
    private readonly target: {
      hostname: string;
      port: number;
      basePath: string;
      /** The service's channel socket (a loopback service, CHANNEL_SOCKET_DIR), tried before TCP. */
      socketPath?: string;
    },
    private readonly options: { maxResponseBytes: number; connectTimeoutMs: number },
  ) {}

  /** Whether a channel is open now (for /services and tests). */
  get open(): boolean {
    return this.socket !== undefined;
  }

  /** How the open channel reaches the service (undefined: none open). */
  get transport(): 'unix' | 'tcp' | undefined {
    return this.socket ? this.via : undefined;
  }

  /** The call's answer over the channel; undefined when there is no channel to use (send it over HTTP). */
  async call(req: DownstreamRequest): Promise<DownstreamAnswer | undefined> {
    if (req.body !== undefined && req.body.length > MAX_FRAME_BODY) return undefined;
    let socket = this.socket;
    if (!socket) {
      if (this.closed || Date.now() < this.retryAt) return undefined;
      socket = await (this.opening ??= this.connect().finally(() => (this.opening = undefined)));
      if (!socket) return undefined;
    }
    // closed a moment ago (its close handler has run): this call goes over HTTP
    if (socket.destroyed || !socket.writable) return undefined;
    const id = ++this.seq;
    const channel = socket;
    return new Promise<DownstreamAnswer>((resolve, reject) => {
      // the call's CallCancel when it has one: no AbortSignal is made for a call that is not aborted
      const abort = req.cancel ?? req.signal;
      const call = new PendingCall(id, channel, this.pending, abort, resolve, reject, req.timeoutMs);
      this.pending.set(id, call);
      if (abort?.aborted) return call.handleEvent();
      if (abort instanceof CallCancel) abort.listen(call);
      else abort?.addEventListener('abort', call, { once: true });
      const extra =
        (req.requestId ? `,"requestId":${JSON.stringify(req.requestId)}` : '') +
        (req.traceparent ? `,"traceparent":${JSON.stringify(req.traceparent)}` : '') +
        `,"budgetMs":${budgetText(req.timeoutMs)}`;
      channel.write(`{"id":${id}${extra},"call":${req.body ?? '{}'}}\n`);
    });
  }

  /**
   * Opens the channel: over the service's Unix socket when there is one (the same server, without
   * TCP's cost per frame), else, or when that fails (no socket, a stale one, not offered there), over TCP.
   */
  private async connect(): Promise<Socket | undefined> {
    if (this.target.socketPath) {
      const opened = await this.upgrade(this.target.socketPath);
      if (opened.socket) return this.opened(opened.socket, opened.head, 'unix');
    }
    const opened = await this.upgrade();
    if (opened.socket) return this.opened(opened.socket, opened.head, 'tcp');
    this.retryAt = Date.now() + opened.retryMs;
    return undefined;
  }

  private opened(socket: Socket, head: Buffer, via: 'unix' | 'tcp'): Socket | undefined {
    if (this.closed) {
      socket.destroy();
      return undefined;
    }
    this.via = via;
    this.attach(socket, head);
    return socket;
  }

  /** One upgrade request, over TCP or the socket at socketPath: the upgraded socket, or when to ask again. */
  private upgrade(socketPath?: string): Promise<{ socket: Socket; head: Buffer; retryMs?: never } | { socket?: never; retryMs: number }> {
    return new Promise((resolve) => {
      const out = http.request({
        hostname: this.target.hostname,
        port: this.target.port,
        ...(socketPath ? { socketPath } : {}),
        path: this.target.basePath + CHANNEL_PATH,
        headers: { Connection: 'Upgrade', Upgrade: CHANNEL_PROTOCOL },
      });
      const timer = setTimeout(() => out.destroy(), this.options.connectTimeoutMs);
      out.once('upgrade', (_res, socket: Socket, head: Buffer) => {
        clearTimeout(timer);
        resolve({ socket, head });
      });
      // An HTTP answer instead of the switch: not offered here. Refused: the service is down (try again soon).
      out.once('response', (res) => {
        clearTimeout(timer);
        res.resume();
        resolve({ retryMs: NOT_OFFERED_RETRY_MS });
      });
      out.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        resolve({ retryMs: err.code === 'ECONNREFUSED' ? REOPEN_MS : NOT_OFFERED_RETRY_MS });
      });
      out.end();
    });
  }

  /** Reads answer frames off the socket; its close fails what is in flight. */
  private attach(socket: Socket, head: Buffer): void {
    socket.setNoDelay(true);
    this.socket = socket;
    // An answer larger than maxResponseBytes fails its own call (its id leads the frame) and is skipped.
    const max = this.options.maxResponseBytes;
    readFrames(
      socket,
      head,
      max,
      (line) => {
        let frame: { id?: unknown; status?: unknown; body?: unknown; resultLength?: unknown };
        try {
          frame = JSON.parse(line) as typeof frame;
        } catch {
          socket.destroy();
          return;
        }
        if (typeof frame.id === 'number' && typeof frame.status === 'number') {
          const resultText = resultTextOf(line, frame);
          this.pending
            .get(frame.id)
            ?.finish({ status: frame.status, json: frame.body, ...(resultText !== undefined ? { resultText } : {}) });
        }
      },
      (start) => {
        const id = /^\{"id":(\d+),/.exec(start)?.[1];
        if (id) this.pending.get(Number(id))?.finish(answerTooLarge(max));
      },
    );
    socket.on('error', () => undefined);
    socket.once('close', () => {
      if (this.socket === socket) this.socket = undefined;
      this.retryAt = Date.now() + REOPEN_MS;
      for (const p of this.pending.values())
        if (p.socket === socket) p.finish(new DownstreamFailure('connection', 'the channel to the service closed', true));
    });
  }

  close(): void {
    this.closed = true;
    this.socket?.destroy();
  }
}
