/**
 * A 2025-era session's SSE events, kept so that a client that lost a stream can resume it
 * (Streamable HTTP "Resumability and Redelivery", SEP-1699): it reconnects with GET and
 * `Last-Event-ID` and is sent what it missed on that stream, and only that stream's events. The
 * SDK transport keeps the events of the session's GET stream here (EventStore); the gateway's own
 * tools/call event streams keep theirs here too (LazyEventStream), which is what lets a tool call
 * outlive a dropped connection. In memory, per session (a session lives on one instance), bounded:
 * the newest MCP_SSE_EVENTS_PER_STREAM events of each stream, the 100 most recently written streams.
 */
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface StoredEvent {
  seq: number;
  /** Undefined for a priming event (an id to resume from, no message). */
  message?: JSONRPCMessage;
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
  private readonly streams = new Map<string, StoredEvent[]>();

  constructor(private readonly perStream: number) {}

  /** Keeps an event (a message, or a priming event without one) and answers its id. */
  append(streamId: string, message?: JSONRPCMessage): string {
    const seq = ++this.seq;
    let events = this.streams.get(streamId);
    if (events) this.streams.delete(streamId);
    else events = [];
    this.streams.set(streamId, events);
    events.push(message === undefined ? { seq } : { seq, message });
    if (events.length > this.perStream) events.splice(0, events.length - this.perStream);
    while (this.streams.size > MAX_STREAMS) this.streams.delete(this.streams.keys().next().value!);
    return eventId(streamId, seq);
  }

  /** The stream a known event id belongs to; undefined for ids this store did not give (or no longer holds the stream of). */
  streamOf(id: string): string | undefined {
    const parsed = parseEventId(id);
    return parsed && this.streams.has(parsed.streamId) ? parsed.streamId : undefined;
  }

  /** The messages of the event's stream after it, with their ids (priming events carry no message and are skipped). */
  after(id: string): { id: string; message: JSONRPCMessage }[] {
    const parsed = parseEventId(id);
    const events = parsed ? this.streams.get(parsed.streamId) : undefined;
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
