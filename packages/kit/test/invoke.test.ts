/**
 * invokeTool's time limit and abort: the handler's signal is aborted by the caller's signal or by
 * the limit (TIMEOUT), with one controller per call (the caller's own when it hands one over).
 */
import { z } from 'zod';
import { AppError, defineTool, invokeTool, type ToolContext } from '../src';
import { abortSignalReads, testLogger } from '../src/test-support';

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

  it('makes the handler’s signal only when it reads it, aborted already when the call was', async () => {
    // a handler that never reads ctx.signal: no AbortSignal made for it
    const plain = defineTool({ name: 'plain', description: 'Answers.', input: z.object({}), handler: (_a, ctx) => ctx.requestId });
    const reads = await abortSignalReads(async () => {
      await expect(invokeTool(plain, {}, base)).resolves.toBe('r1');
      await expect(invokeTool(plain, {}, { ...base, controller: new AbortController() })).resolves.toBe('r1');
    });
    expect(reads).toBe(0);
    // a handler that reads it only after its time limit passed finds it aborted with TIMEOUT
    let late: AbortSignal | undefined;
    const slow = defineTool({
      name: 'slow',
      description: 'Reads its signal late.',
      input: z.object({}),
      timeoutMs: 30,
      handler: async (_a, ctx) => {
        await new Promise((r) => setTimeout(r, 80));
        late = ctx.signal;
        return ctx.progress(1) ?? 'done';
      },
    });
    await expect(invokeTool(slow, {}, base)).rejects.toMatchObject({ code: 'TIMEOUT' });
    await new Promise((r) => setTimeout(r, 100));
    expect(late?.aborted).toBe(true);
    expect((late?.reason as AppError).code).toBe('TIMEOUT');
  });

  it('answers what the handler answers, and validates the arguments first', async () => {
    const echo = defineTool({ name: 'echo', description: 'Echoes.', input: z.object({ text: z.string() }), handler: async (a) => a.text });
    await expect(invokeTool(echo, { text: 'hi' }, base)).resolves.toBe('hi');
    await expect(invokeTool(echo, { text: 1 }, base)).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
