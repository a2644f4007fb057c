/**
 * A session's SSE event store (src/mcp/event-store.ts): replays a stream's events after an id, and
 * only that stream's; keeps the newest events per stream, the most recently written streams, and a
 * byte budget, forgetting the least recently written streams first.
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { SessionEventStore } from '../src/mcp/rev-2025-11-25/event-store';

const note = (n: number, pad = ''): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 't', progress: n, pad },
});
const progressAfter = (store: SessionEventStore, id: string) =>
  store.after(id).map((e) => (e.message as unknown as { params: { progress: number } }).params.progress);

describe('SessionEventStore', () => {
  it('replays the events of the id’s stream after it, skipping priming events, with their ids', async () => {
    const store = new SessionEventStore({ perStream: 100, bytes: 1_000_000 });
    const primed = store.append('a');
    const first = store.append('a', note(1));
    store.append('b', note(99));
    store.append('a', note(2));
    store.append('a', note(3));
    expect(store.streamOf(primed)).toBe('a');
    expect(progressAfter(store, primed)).toEqual([1, 2, 3]);
    expect(progressAfter(store, first)).toEqual([2, 3]);
    expect(store.after(first).map((e) => store.streamOf(e.id))).toEqual(['a', 'a']);
    // the SDK's interface: the same, and an unknown id is refused
    const sent: unknown[] = [];
    expect(await store.replayEventsAfter(first, { send: async (_id, m) => void sent.push(m) })).toBe('a');
    expect(sent).toHaveLength(2);
    await expect(store.replayEventsAfter('x#1', { send: async () => undefined })).rejects.toThrow(/Unknown event id/);
    for (const bad of ['', '#1', 'a#0', 'a#x', 'a', 'zzz#5']) expect(store.streamOf(bad)).toBeUndefined();
  });

  it('keeps the newest events of a stream and forgets a dropped stream', () => {
    const store = new SessionEventStore({ perStream: 3, bytes: 1_000_000 });
    const start = store.append('a');
    for (let i = 1; i <= 5; i++) store.append('a', note(i));
    expect(progressAfter(store, start)).toEqual([3, 4, 5]);
    const bytes = store.size;
    expect(bytes).toBeGreaterThan(0);
    store.drop('a');
    expect(store.streamOf(start)).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('stays within its byte budget, forgetting the least recently written streams first', () => {
    const big = 'x'.repeat(400);
    const store = new SessionEventStore({ perStream: 100, bytes: 2000 });
    const a = store.append('a');
    store.append('a', note(1, big));
    const b = store.append('b');
    store.append('b', note(1, big));
    const c = store.append('c');
    for (let i = 1; i <= 3; i++) store.append('c', note(i, big));
    expect(store.size).toBeLessThanOrEqual(2000);
    expect(store.streamOf(a)).toBeUndefined(); // the least recently written went first
    expect(store.streamOf(c)).toBe('c');
    // one stream over the budget on its own keeps its newest events
    for (let i = 4; i <= 8; i++) store.append('c', note(i, big));
    expect(store.size).toBeLessThanOrEqual(2000);
    expect(store.streamOf(b)).toBeUndefined();
    expect(progressAfter(store, c).at(-1)).toBe(8);
  });
});
