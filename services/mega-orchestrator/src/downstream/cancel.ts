/**
 * A call's cancellation that makes no AbortSignal until something asks for one. Node 20 takes 2-5 µs
 * to make an AbortSignal (its EventTarget gets a new prototype, so every access to it is slow), and
 * about as long again to add and remove a listener; a tool call over the channel needs neither unless
 * its caller goes away. Made per call on a 2025 session's hot path, that was about 5 % of the
 * gateway's CPU per call (docs/gateway.md, "Performance").
 *
 * The channel listens here (listen, one listener without a signal); whatever needs a real signal
 * (an MCP server's client, an HTTP request, AbortSignal.any) reads `signal`, made on first use and
 * already aborted, with the same reason, when the call was.
 */

/** An object told once that the call was aborted (the channel's pending call). */
export interface AbortListener {
  handleEvent(): void;
}

export class CallCancel {
  private controller?: AbortController;
  /** The first listener, kept here; any further one goes on the signal. */
  private listener?: AbortListener;
  private abortedWith?: { reason: unknown };

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  /** An AbortSignal that follows this cancellation, made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  /** Aborts the call once (as AbortController.abort: no reason gives the signal an AbortError). */
  abort(reason?: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    const listener = this.listener;
    this.listener = undefined;
    this.controller?.abort(reason);
    listener?.handleEvent();
  }

  /** Tells `listener` once when the call is aborted (at once when it already is). */
  listen(listener: AbortListener): void {
    if (this.abortedWith) return listener.handleEvent();
    if (this.listener === undefined) this.listener = listener;
    else this.signal.addEventListener('abort', listener, { once: true });
  }

  /** `listener` is told nothing more. */
  unlisten(listener: AbortListener): void {
    if (this.listener === listener) this.listener = undefined;
    else this.controller?.signal.removeEventListener('abort', listener);
  }
}

/** The AbortSignal of an operation's options: its own, else its CallCancel's (made now if need be). */
export function signalOf(options: { signal?: AbortSignal; cancel?: CallCancel }): AbortSignal | undefined {
  return options.signal ?? options.cancel?.signal;
}
