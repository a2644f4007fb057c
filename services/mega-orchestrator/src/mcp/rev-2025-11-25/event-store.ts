/**
 * A 2025-era session's SSE events, kept so that a client that lost a stream can resume it
 * (Streamable HTTP "Resumability and Redelivery", SEP-1699): it reconnects with GET and
 * `Last-Event-ID` and is sent what it missed on that stream, and only that stream's events. The
 * SDK transport keeps the events of the session's GET stream here (EventStore); the gateway's own
 * tools/call event streams keep theirs here too (LazyEventStream), which is what lets a tool call
 * outlive a dropped connection. In memory, per session (a session lives on one instance), bounded:
 * the newest MCP_SSE_EVENTS_PER_STREAM events of each stream, the 100 most recently written streams,
 * and MCP_SSE_BYTES_PER_SESSION of messages in all (the least recently written streams go first). A
 * call stream whose answer reached its client on the same connection is dropped at once.
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface StoredEvent {
  seq: number;
  /** Undefined for a priming event (an id to resume from, no message). */
  message?: JSONRPCMessage;
  /** The message's size as JSON (its share of the byte budget). */
  bytes: number;
}

interface Stream {
  events: StoredEvent[];
  bytes: number;
}

const MAX_STREAMS = 100;

/** `<stream>#<seq>`: the stream an event belongs to can be read from its id. */
const eventId = (streamId: string, seq: number) => `${streamId}#${seq}`;

function parseEventId(id: string): { streamId: string; seq: number } | undefined {
  const at = id.lastIndexOf('#');
  const seq = Number(id.slice(at + 1));
  return at > 0 && Number.isSafeInteger(seq) && seq > 0 ? { streamId: id.slice(0, at), seq } : undefined;
}

export class SessionEventStore implements EventStore {
  private seq = 0;
  /** Streams in the order they were last written to (the least recent first, dropped first). */
  private readonly streams = new Map<string, Stream>();
  private bytes = 0;

  constructor(private readonly limits: { perStream: number; bytes: number }) {}

  /** Bytes of messages kept (for tests and the budget). */
  get size(): number {
    return this.bytes;
  }

  /**
   * Keeps an event (a message, or a priming event without one) and answers its id. `bytes` is the
   * message's size as JSON when the caller has it (else it is measured).
   */
  append(streamId: string, message?: JSONRPCMessage, bytes?: number): string {
    const seq = ++this.seq;
    let stream = this.streams.get(streamId);
    if (stream) this.streams.delete(streamId);
    else stream = { events: [], bytes: 0 };
    this.streams.set(streamId, stream);
    const size = message === undefined ? 0 : (bytes ?? JSON.stringify(message).length);
    stream.events.push(message === undefined ? { seq, bytes: 0 } : { seq, message, bytes: size });
    stream.bytes += size;
    this.bytes += size;
    if (stream.events.length > this.limits.perStream) this.trim(stream, stream.events.length - this.limits.perStream);
    while (this.streams.size > MAX_STREAMS) this.drop(this.streams.keys().next().value!);
    // over the byte budget: the least recently written streams go, then this one's oldest events
    for (const [id] of this.streams) {
      if (this.bytes <= this.limits.bytes || id === streamId) break;
      this.drop(id);
    }
    if (this.bytes > this.limits.bytes) this.trim(stream, stream.events.length - 1);
    return eventId(streamId, seq);
  }

  /** Forgets a stream (its client has everything). */
  drop(streamId: string): void {
    const stream = this.streams.get(streamId);
    if (!stream) return;
    this.bytes -= stream.bytes;
    this.streams.delete(streamId);
  }

  private trim(stream: Stream, count: number): void {
    for (const e of stream.events.splice(0, count)) {
      stream.bytes -= e.bytes;
      this.bytes -= e.bytes;
    }
  }

  /** The stream a known event id belongs to; undefined for ids this store did not give (or no longer holds the stream of). */
  streamOf(id: string): string | undefined {
    const parsed = parseEventId(id);
    return parsed && this.streams.has(parsed.streamId) ? parsed.streamId : undefined;
  }

  /** The messages of the event's stream after it, with their ids (priming events carry no message and are skipped). */
  after(id: string): { id: string; message: JSONRPCMessage }[] {
    const parsed = parseEventId(id);
    const events = parsed ? this.streams.get(parsed.streamId)?.events : undefined;
    if (!parsed || !events) return [];
    return events
      .filter((e) => e.seq > parsed.seq && e.message !== undefined)
      .map((e) => ({ id: eventId(parsed.streamId, e.seq), message: e.message! }));
  }

  // The SDK transport's EventStore (the session's GET stream):

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    // the SDK stores {} for a priming event
    return this.append(streamId, Object.keys(message).length === 0 ? undefined : message);
  }

  async getStreamIdForEventId(id: string): Promise<string | undefined> {
    return this.streamOf(id);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (id: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = this.streamOf(lastEventId);
    if (!streamId) throw new Error(`Unknown event id ${lastEventId.slice(0, 100)}`);
    for (const e of this.after(lastEventId)) await send(e.id, e.message);
    return streamId;
  }
}
