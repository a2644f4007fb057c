/**
 * invokeTool's time limit and abort: the handler's signal is aborted by the caller's signal or by
 * the limit (TIMEOUT), with one controller per call (the caller's own when it hands one over).
 */
import { z } from 'zod';
import { AppError, defineTool, invokeTool, type ToolContext } from '../src';
import { testLogger } from '../src/test-support';

/** A tool that waits for its abort and reports the signal it was given. */
function waiter(timeoutMs: number) {
  let seen: AbortSignal | undefined;
  const tool = defineTool({
    name: 'waiter',
    description: 'Waits for its abort.',
    input: z.object({}),
    timeoutMs,
    handler: (_args, ctx: ToolContext) =>
      new Promise((_resolve, reject) => {
        seen = ctx.signal;
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
      }),
  });
  return { tool, signal: () => seen! };
}

const base = { service: 'test', requestId: 'r1', logger: testLogger('invoke'), defaultTimeoutMs: 5000 };

describe('invokeTool', () => {
  it('aborts the caller’s own controller at the time limit (no second controller), with TIMEOUT', async () => {
    const { tool, signal } = waiter(50);
    const controller = new AbortController();
    await expect(invokeTool(tool, {}, { ...base, controller, signal: controller.signal })).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(signal()).toBe(controller.signal);
    expect(controller.signal.aborted).toBe(true);
    expect((controller.signal.reason as AppError).code).toBe('TIMEOUT');
  });

  it('follows a caller’s signal with a controller of its own, whose limit leaves the caller’s signal alone', async () => {
    const { tool, signal } = waiter(50);
    const caller = new AbortController();
    await expect(invokeTool(tool, {}, { ...base, signal: caller.signal })).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(signal()).not.toBe(caller.signal);
    expect(caller.signal.aborted).toBe(false);

    const second = waiter(5000);
    const pending = invokeTool(second.tool, {}, { ...base, signal: caller.signal });
    await new Promise((r) => setImmediate(r));
    caller.abort(new AppError('TIMEOUT', 'The client closed the connection.'));
    await expect(pending).rejects.toMatchObject({ message: 'The client closed the connection.' });
    expect(second.signal().aborted).toBe(true);
  });

  it('answers what the handler answers, and validates the arguments first', async () => {
    const echo = defineTool({ name: 'echo', description: 'Echoes.', input: z.object({ text: z.string() }), handler: async (a) => a.text });
    await expect(invokeTool(echo, { text: 'hi' }, base)).resolves.toBe('hi');
    await expect(invokeTool(echo, { text: 1 }, base)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
