import { formatTraceparent, idTracer, parseTraceparent, randomHex } from '@mcp-fleet/kit';

describe('W3C traceparent', () => {
  it('accepts valid headers and refuses everything else without throwing', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentSpanId: '00f067aa0ba902b7',
      sampled: true,
    });
    expect(parseTraceparent('00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-00')?.sampled).toBe(false);
    // A later version may append fields; version 00 may not.
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra')?.traceId).toBe(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    for (const bad of [
      undefined,
      '',
      'garbage',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
      'x'.repeat(10_000),
    ])
      expect(parseTraceparent(bad)).toBeUndefined();
  });

  it('continues the caller trace with a new span id, or starts a new trace', () => {
    const tracer = idTracer();
    const child = tracer.startSpan('s', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    expect(child.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(child.parentSpanId).toBe('00f067aa0ba902b7');
    expect(child.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(child.traceparent).toBe(formatTraceparent(child.traceId, child.spanId, true));
    const root = tracer.startSpan('s', { traceparent: 'nope' });
    expect(root.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(root.parentSpanId).toBeUndefined();
    expect(tracer.startSpan('s').traceId).not.toBe(root.traceId);
  });

  it('draws ids from a pooled entropy buffer: hex of the asked length, never repeated across refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const id = randomHex(16);
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(2000);
    expect(randomHex(8)).toMatch(/^[0-9a-f]{16}$/);
  });
});
