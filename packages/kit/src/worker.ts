import type { Worker } from 'node:worker_threads';
import { AppError } from './errors';

export interface AskWorkerOptions {
  /** Hard limit for the answer; past it the worker is terminated and `timeoutError` thrown. */
  timeoutMs: number;
  timeoutError: () => AppError;
  /** The caller went away: the worker is terminated and the call answers TIMEOUT ("cancelled"). */
  signal?: AbortSignal;
  /** What the work is, for the errors that name it ("The search was cancelled."). */
  what: string;
}

/**
 * Posts one message to a worker thread and waits for its one reply, bounded: past the time limit or
 * on abort the worker is terminated (a caller's regex or schema may never return), a worker out of
 * memory is PAYLOAD_TOO_LARGE, a message that cannot be cloned VALIDATION_ERROR, and a worker that
 * exits or fails rejects instead of hanging. After a rejection the worker must not be reused.
 */
export function askWorker<T>(worker: Worker, message: unknown, options: AskWorkerOptions): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      fn();
    };
    const kill = (err: AppError) =>
      finish(() => {
        void worker.terminate();
        reject(err);
      });
    const onAbort = () => kill(new AppError('TIMEOUT', `The ${options.what} was cancelled.`));
    const onMessage = (reply: T) => finish(() => resolve(reply));
    const onError = (err: Error) =>
      finish(() =>
        reject(
          /ERR_WORKER_OUT_OF_MEMORY/.test(String((err as NodeJS.ErrnoException).code))
            ? new AppError('PAYLOAD_TOO_LARGE', `The ${options.what} ran out of memory; send less data.`)
            : err,
        ),
      );
    const onExit = () => finish(() => reject(new Error(`the ${options.what} worker exited unexpectedly`)));
    const timer = setTimeout(() => kill(options.timeoutError()), Math.max(1, options.timeoutMs));
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    try {
      worker.postMessage(message);
    } catch (err) {
      kill(new AppError('VALIDATION_ERROR', `The ${options.what} cannot take this input: ${(err as Error).message}.`));
    }
  });
}
