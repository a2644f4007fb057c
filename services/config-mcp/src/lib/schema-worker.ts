import { Worker } from 'node:worker_threads';
import { AppError, askWorker } from '@mcp-fleet/kit';

/**
 * JSON Schema validation runs in worker threads: a caller's `pattern` can backtrack catastrophically
 * and schema compilation is unbounded, so each job gets a hard time limit and an overrunning worker
 * is terminated. Idle workers (ajv already loaded) are kept for reuse.
 */

export type Draft = '2020-12' | '2019-09' | '07';

export interface SchemaError {
  path: string;
  message: string;
  keyword: string;
  params: Record<string, unknown>;
  schemaPath: string;
}

export interface ValidationJob {
  schema: unknown;
  data: unknown;
  draft: Draft;
  maxErrors: number;
}

export interface ValidationOutcome {
  valid: boolean;
  errors: SchemaError[];
  errorCount: number;
}

type WorkerReply = { ok: true; valid: boolean; errors: SchemaError[]; errorCount: number } | { ok: false; compileError: string };

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const classes = {};
const load = (draft) => {
  if (!classes[draft]) {
    const mod = require(workerData.ajv[draft]);
    classes[draft] = mod.default || mod;
  }
  return classes[draft];
};
const addFormats = (() => { const m = require(workerData.formats); return m.default || m; })();
parentPort.on('message', ({ schema, data, draft, maxErrors }) => {
  let validate;
  try {
    const Ajv = load(draft);
    const ajv = new Ajv({ allErrors: true, strict: false, logger: false, validateSchema: true });
    addFormats(ajv);
    validate = ajv.compile(schema);
  } catch (err) {
    parentPort.postMessage({ ok: false, compileError: String((err && err.message) || err).split('\\n')[0].slice(0, 500) });
    return;
  }
  const valid = validate(data);
  const all = validate.errors || [];
  const errors = all.slice(0, maxErrors).map((e) => ({
    path: e.instancePath,
    message: e.message || e.keyword,
    keyword: e.keyword,
    params: e.params || {},
    schemaPath: e.schemaPath,
  }));
  parentPort.postMessage({ ok: true, valid: !!valid, errors, errorCount: all.length });
});
`;

const MAX_IDLE = 2;
/** Concurrent validations; more are refused (RATE_LIMITED) so hostile schemas cannot pile up threads. */
export const MAX_BUSY = 4;

export class SchemaValidatorPool {
  private idle: Worker[] = [];
  private busy = new Set<Worker>();
  private closed = false;
  private readonly workerData = {
    ajv: {
      '2020-12': require.resolve('ajv/dist/2020'),
      '2019-09': require.resolve('ajv/dist/2019'),
      '07': require.resolve('ajv'),
    },
    formats: require.resolve('ajv-formats'),
  };

  constructor(private readonly timeoutMs: number) {}

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: this.workerData, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    worker.unref();
    return worker;
  }

  async validate(job: ValidationJob, signal?: AbortSignal): Promise<ValidationOutcome> {
    if (this.closed) throw new AppError('UPSTREAM_UNAVAILABLE', 'The service is shutting down; retry on another instance.');
    if (this.busy.size >= MAX_BUSY) {
      throw new AppError('RATE_LIMITED', `${MAX_BUSY} validations are already running; retry in a moment.`, { retryAfter: 1 });
    }
    const worker = this.idle.pop() ?? this.spawn();
    this.busy.add(worker);
    const reply = await askWorker<WorkerReply>(worker, job, {
      what: 'schema validation',
      timeoutMs: this.timeoutMs,
      signal,
      timeoutError: () =>
        new AppError(
          'TIMEOUT',
          `Schema validation took longer than ${this.timeoutMs} ms and was stopped. A "pattern" with nested quantifiers such as (a+)+ backtracks catastrophically; simplify it or send less data.`,
        ),
    }).finally(() => this.busy.delete(worker));
    if (this.closed || this.idle.length >= MAX_IDLE) void worker.terminate();
    else this.idle.push(worker);
    if (!reply.ok) {
      throw new AppError('VALIDATION_ERROR', `The JSON Schema does not compile: ${reply.compileError}. Fix the schema and retry.`, {
        details: [{ path: 'schema', message: reply.compileError }],
      });
    }
    return { valid: reply.valid, errors: reply.errors, errorCount: reply.errorCount };
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.idle, ...this.busy];
    this.idle = [];
    await Promise.all(all.map((w) => w.terminate()));
  }
}

/** The draft a schema asks for through $schema (2020-12 when it names none). */
export function draftOf(schema: unknown): Draft | undefined {
  const id = schema !== null && typeof schema === 'object' ? (schema as { $schema?: unknown }).$schema : undefined;
  if (id === undefined) return '2020-12';
  if (typeof id !== 'string') return undefined;
  if (id.includes('2020-12')) return '2020-12';
  if (id.includes('2019-09')) return '2019-09';
  if (id.includes('draft-07')) return '07';
  return undefined;
}
