import { Worker } from 'node:worker_threads';
import { askWorker } from '../src/worker';

const SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => {
  if (m === 'spin') for (;;) {}
  if (m === 'exit') process.exit(3);
  if (m === 'throw') throw new Error('worker failed');
  parentPort.postMessage({ echo: m });
});
`;
const spawn = () => new Worker(SOURCE, { eval: true });
const timeoutError = () => Object.assign(new Error('too slow'), { code: 'TIMEOUT' });
const ask = (w: Worker, m: unknown, extra: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
  askWorker(w, m, { what: 'test job', timeoutMs: extra.timeoutMs ?? 2000, signal: extra.signal, timeoutError: timeoutError as never });

const exited = (w: Worker) => new Promise<number>((r) => w.once('exit', r));

describe('askWorker', () => {
  it('answers the reply, and the worker can be asked again', async () => {
    const w = spawn();
    await expect(ask(w, 'a')).resolves.toEqual({ echo: 'a' });
    await expect(ask(w, 'b')).resolves.toEqual({ echo: 'b' });
    expect(w.listenerCount('message')).toBe(0); // no listener left behind
    await w.terminate();
  });

  it('terminates a worker that runs past the limit and throws the given error', async () => {
    const w = spawn();
    const gone = exited(w);
    await expect(ask(w, 'spin', { timeoutMs: 100 })).rejects.toThrow('too slow');
    await gone;
  });

  it('terminates on abort with TIMEOUT (cancelled), also when already aborted', async () => {
    const w = spawn();
    const gone = exited(w);
    const controller = new AbortController();
    const pending = ask(w, 'spin', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ code: 'TIMEOUT', message: 'The test job was cancelled.' });
    await gone;
    const w2 = spawn();
    await expect(ask(w2, 'a', { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('rejects instead of hanging when the worker fails, exits, or the message cannot be cloned', async () => {
    await expect(ask(spawn(), 'throw')).rejects.toThrow('worker failed');
    await expect(ask(spawn(), 'exit')).rejects.toThrow('the test job worker exited unexpectedly');
    await expect(ask(spawn(), { f: () => 1 })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
