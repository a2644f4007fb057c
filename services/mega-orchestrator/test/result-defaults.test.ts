import { readInbound, withDefaults } from '../src/downstream/mcp';

// Regression: a server that answered server/discover but left ttlMs/cacheScope out of its tools/list was
// refused by the v2 client ("Invalid result for tools/list"), and the whole server read as unhealthy.
describe('what a sloppy 2026-07-28 server leaves out is filled in, not refused', () => {
  const deliver = (result: unknown) => {
    const transport: { onmessage?: (m: unknown) => void } = {};
    readInbound(transport, () => false, withDefaults);
    let seen: unknown;
    transport.onmessage = (m) => (seen = m);
    transport.onmessage!({ jsonrpc: '2.0', id: 1, result });
    return (seen as { result: Record<string, unknown> }).result;
  };

  it('a list without resultType, ttlMs or cacheScope is complete and not to be cached', () => {
    expect(deliver({ tools: [] })).toEqual({ tools: [], resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
  });

  it('a read without its cache fields gets them; a bad cacheScope is private', () => {
    expect(deliver({ contents: [], resultType: 'complete', ttlMs: 5, cacheScope: 'everyone' })).toEqual({
      contents: [],
      resultType: 'complete',
      ttlMs: 5,
      cacheScope: 'private',
    });
  });

  it('a complete answer is passed as it came, and a call result gets only resultType', () => {
    const full = { prompts: [], resultType: 'complete', ttlMs: 60_000, cacheScope: 'public' };
    expect(deliver(full)).toBe(full);
    expect(deliver({ content: [] })).toEqual({ content: [], resultType: 'complete' });
  });
});
