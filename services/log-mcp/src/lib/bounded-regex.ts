import { Worker } from 'node:worker_threads';
import { AppError, askWorker } from '@mcp-fleet/kit';

/**
 * A caller's regex runs in a worker thread, never on the event loop: batches of lines go to the
 * worker, and when the search's total regex time passes its budget the worker is terminated and the
 * call answers TIMEOUT. The service stays responsive whatever the pattern.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', (lines) => {
  const hits = [];
  for (let i = 0; i < lines.length; i++) {
    re.lastIndex = 0;
    if (re.test(lines[i])) hits.push(i);
  }
  parentPort.postMessage(hits);
});
`;

export interface BoundedRegexOptions {
  source: string;
  caseSensitive: boolean;
  budgetMs: number;
  maxLength: number;
}

/** Checks the pattern's length and syntax (compiling is cheap and safe; matching is what can explode). */
export function checkRegex(source: string, caseSensitive: boolean, maxLength: number): string {
  if (source.length > maxLength) {
    throw new AppError('VALIDATION_ERROR', `regex is ${source.length} characters; the limit is ${maxLength} (LOG_REGEX_MAX_LENGTH).`, {
      details: [{ path: 'regex', message: 'too long' }],
    });
  }
  const flags = caseSensitive ? '' : 'i';
  try {
    new RegExp(source, flags);
  } catch (err) {
    throw new AppError('VALIDATION_ERROR', `regex does not compile: ${(err as Error).message}. Fix the pattern (JavaScript syntax).`, {
      details: [{ path: 'regex', message: 'invalid regular expression' }],
    });
  }
  return flags;
}

/** Regex searches running at once; more are refused (RATE_LIMITED) so slow patterns cannot pile up threads. */
export const MAX_CONCURRENT = 4;
let running = 0;

export class BoundedRegex {
  private worker: Worker;
  private usedMs = 0;
  private closed = false;

  constructor(private readonly options: BoundedRegexOptions) {
    const flags = checkRegex(options.source, options.caseSensitive, options.maxLength);
    if (running >= MAX_CONCURRENT) {
      throw new AppError('RATE_LIMITED', `${MAX_CONCURRENT} regex searches are already running; retry in a moment or use query.`, {
        retryAfter: 1,
      });
    }
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { source: options.source, flags },
      resourceLimits: { maxOldGenerationSizeMb: 128 },
    });
    this.worker.unref();
    running++;
  }

  /** Indices of the lines that match. */
  async match(lines: string[], signal?: AbortSignal): Promise<number[]> {
    if (lines.length === 0) return [];
    const remaining = this.options.budgetMs - this.usedMs;
    const started = performance.now();
    try {
      return await askWorker<number[]>(this.worker, lines, {
        what: 'search',
        timeoutMs: remaining,
        signal,
        timeoutError: () =>
          new AppError(
            'TIMEOUT',
            `The regex ran longer than ${this.options.budgetMs} ms (LOG_REGEX_TIMEOUT_MS) and was stopped. Patterns with nested quantifiers such as (a+)+ backtrack catastrophically; simplify the pattern, use query for plain text, or narrow files and the time range.`,
          ),
      });
    } finally {
      this.usedMs += performance.now() - started;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    running--;
    await this.worker.terminate();
  }
}
